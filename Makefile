# The two commands a newcomer needs: `make demo` and `make test`.
GO ?= go

.PHONY: all test vet race demo examples-test integration fmt-check lint

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
