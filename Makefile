# The two commands a newcomer needs: `make demo` and `make test`.
GO ?= go

.PHONY: all test vet race demo examples-test integration fmt-check stress lint

all: test

## test: vet and run every test with the race detector, the examples' too.
test: fmt-check vet race examples-test integration

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

race:
	$(GO) test -race -count=1 ./...

## examples-test: vet and test the examples module (examples/go.mod).
examples-test:
	cd examples && $(GO) vet ./... && $(GO) test -race -count=1 ./...

## integration: vet and test the integration module (integration/go.mod):
## ADK's SQL session service on SQLite and PostgreSQL, and the Gemini wire
## format. -v shows which tests ran and which were skipped (PostgreSQL
## without CONTEXTGUARD_PG_DSN, see integration/README.md).
integration:
	cd integration && $(GO) vet ./... && $(GO) test -race -count=1 -v ./...

## demo: run the offline demo (see examples/README.md); flags via DEMO_FLAGS,
## e.g. make demo DEMO_FLAGS="-turns 8 -out out/tokens.svg".
demo:
	cd examples && $(GO) run ./demo $(DEMO_FLAGS)

## lint: staticcheck over the library and the nested modules (CI installs
## STATICCHECK_VERSION with go install).
STATICCHECK ?= staticcheck
STATICCHECK_VERSION ?= v0.6.1
lint:
	$(STATICCHECK) ./...
	cd examples && $(STATICCHECK) ./...
	cd integration && $(STATICCHECK) ./...

print-staticcheck-version:
	@echo $(STATICCHECK_VERSION)

.PHONY: fuzz

## fuzz: run every fuzz target of the module for FUZZTIME each (default
## 30s), one after the other (go test -fuzz takes one target at a time),
## e.g. make fuzz FUZZTIME=10m. Seeds live in testdata/fuzz/<FuzzName>/.
FUZZTIME ?= 30s
fuzz:
	@set -e; for pkg in $$($(GO) list -f '{{.Dir}}|{{.ImportPath}}' ./...); do \
		dir=$${pkg%%|*}; \
		for f in $$(grep -ho '^func Fuzz[A-Za-z0-9_]*' $$dir/*_test.go 2>/dev/null | cut -d' ' -f2); do \
			echo "== fuzz $$f in $${pkg#*|} for $(FUZZTIME)"; \
			$(GO) test -run '^$$' -fuzz "^$$f\$$" -fuzztime $(FUZZTIME) $${pkg#*|}; \
		done; \
	done

## stress: the stress matrix (every TestStress_* / TestBrutal_* row, seed and
## tokenizer modes) without -race, then a table of every run, the matrix's
## wall time and its five slowest runs (printed by TestMain). It runs in
## local directory mode so the table reaches the terminal.
stress:
	CONTEXTGUARD_STRESS_TABLE=1 $(GO) test -count=1 -timeout 20m -run '^Test(Stress|Brutal)_'
