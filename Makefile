# The two commands a newcomer needs: `make demo` and `make test`.
GO ?= go

.PHONY: all test vet race demo fmt-check

all: test

## test: vet and run every test with the race detector.
test: fmt-check vet race

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

race:
	$(GO) test -race -count=1 ./...

## demo: run the offline demo (see examples/).
demo:
	$(GO) run ./examples/demo
