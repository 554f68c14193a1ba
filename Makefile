# The two commands a newcomer needs: `make demo` and `make test`.
GO ?= go

.PHONY: all test vet race demo examples-test integration fmt-check stress lint

all: test

## test: vet, every test under the race detector (the stress matrix's
## representative subset, RACE_MATRIX), the whole stress matrix without it,
## and the examples' and integration tests.
test: fmt-check vet race stress examples-test integration

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

## Every go test has an explicit -timeout of at least 3x its idle time on a
## 2-core machine, so a busy machine does not fail CI.
##
## race: every test under the race detector (and the allocation tests
## without it: the race detector's sync.Pool drops values at random), except
## the stress matrix's rows
## (TestStress_* / TestBrutal_*), which run whole without it in `make stress`
## and, under -race, as RACE_MATRIX: every 4k and 8k row, the loop check, and
## the 200k rows that each exercise a different path (token ratios, late or
## no usage metadata, a giant tool result, inline documents, a large system
## prompt, tool declarations filling the window). The rest of the 200k and
## 1M rows add history length, not new code paths, and cost most of the
## matrix's time under -race.
RACE_MATRIX = ^Test(Stress|Brutal)_(4k|8k)_|^TestStress_CompactionNoInfiniteLoop$$|^Test(Stress|Brutal)_200k_(NormalConversation|ToolBurst_10Parallel|TokenRatio_5x|LargeSystemPrompt|HighTokenRatio|VeryHighTokenRatio_4x|LateUsageMetadata|ToolDefinitionsHighRatio|NoUsageMetadata|SingleGiantToolResponse|LargeInlineDocuments|SingleTurnFillsWindow|ToolDefinitionsDominateWindow)$$
race:
	$(GO) test -race -count=1 -timeout 12m -skip '^Test(Stress|Brutal)_' ./...
	$(GO) test -race -count=1 -timeout 12m -run '$(RACE_MATRIX)' .
	$(GO) test -count=1 -timeout 5m -run 'Allocate' ./internal/tokens
	$(GO) test -count=1 -timeout 5m -run 'Allocations' .

## examples-test: vet and test the examples module (examples/go.mod).
examples-test:
	cd examples && $(GO) vet ./... && $(GO) test -race -count=1 -timeout 10m ./...

## integration: vet and test the integration module (integration/go.mod):
## ADK's SQL session service on SQLite and PostgreSQL, and the Gemini wire
## format. -v shows which tests ran and which were skipped (PostgreSQL
## without CONTEXTGUARD_PG_DSN, see integration/README.md).
integration:
	cd integration && $(GO) vet ./... && $(GO) test -race -count=1 -timeout 10m -v ./...

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
			$(GO) test -run '^$$' -fuzz "^$$f\$$" -fuzztime $(FUZZTIME) -timeout 30m $${pkg#*|}; \
		done; \
	done

## stress: the stress matrix (every TestStress_* / TestBrutal_* row, seed and
## tokenizer modes) without -race, then a table of every run, the matrix's
## wall time and its five slowest runs (printed by TestMain). It runs in
## local directory mode so the table reaches the terminal.
stress:
	CONTEXTGUARD_STRESS_TABLE=1 $(GO) test -count=1 -timeout 10m -run '^Test(Stress|Brutal)_'
