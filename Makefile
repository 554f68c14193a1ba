# The two commands a newcomer needs: `make demo` and `make test`.
#
# The repository holds eight modules (ARCHITECTURE.md, Packages and modules):
# core (the engine, free of ADK), the root (the ADK v1 plugin), adkv2 (the
# ADK v2 plugin), examples, integration, adkv2/integration,
# core/internal/tokenfit (the estimator's fit program, corpus and accuracy
# tests, never released, so core's module zip stays small) and
# internal/releasecheck (the release rehearsal). /go.work joins the ADK v1
# line (root, core, core/internal/tokenfit, examples, integration);
# adkv2/go.work joins adkv2, adkv2/integration and core;
# internal/releasecheck/go.work holds that module alone.
GO ?= go

# MODULES are the directories of every module, for the checks that run in
# each (tidy-check, gowork-check, lint).
MODULES = core core/internal/tokenfit . adkv2 examples integration adkv2/integration internal/releasecheck

.PHONY: all test vet race core-test adkv2-test conformance demo examples-test integration fmt-check stress lint \
	tidy-check gowork-check modules-check release-check cost recall-bench

all: test

## test: format, vet, every module's tests under the race detector (the
## stress matrix's representative subset, RACE_MATRIX), the whole stress
## matrix without it, and the examples' and integration tests.
test: fmt-check vet race stress adkv2-test conformance examples-test integration

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

## vet: the engine (core, also with the tag fitcorpus), the estimator's fit
## module and the ADK v1 plugin (root); adkv2, examples and integration are
## vetted by their own targets.
vet:
	cd core && $(GO) vet ./... && $(GO) vet -tags fitcorpus ./internal/tokens
	cd core/internal/tokenfit && $(GO) vet ./...
	$(GO) vet ./...

## Every go test has an explicit -timeout of at least 3x its idle time on a
## 2-core machine, so a busy machine does not fail CI.
##
## race: every test of core and of the root module (the plugin's behaviour
## tests are in internal/plugintest) under the race detector, and
## core's allocation tests without it (the race detector's sync.Pool drops
## values at random), except the stress matrix's rows
## (TestStress_* / TestBrutal_*), which run whole without it in `make stress`
## and, under -race, as RACE_MATRIX: every 4k and 8k row, the loop check, and
## the 200k rows that each exercise a different path (token ratios, late or
## no usage metadata, a giant tool result, inline documents, a large system
## prompt, tool declarations filling the window). The rest of the 200k and
## 1M rows add history length, not new code paths, and cost most of the
## matrix's time under -race.
RACE_MATRIX = ^Test(Stress|Brutal)_(4k|8k)_|^TestStress_CompactionNoInfiniteLoop$$|^Test(Stress|Brutal)_200k_(NormalConversation|ToolBurst_10Parallel|TokenRatio_5x|LargeSystemPrompt|HighTokenRatio|VeryHighTokenRatio_4x|LateUsageMetadata|ToolDefinitionsHighRatio|NoUsageMetadata|SingleGiantToolResponse|LargeInlineDocuments|SingleTurnFillsWindow|ToolDefinitionsDominateWindow)$$
race: core-test
	$(GO) test -race -count=1 -timeout 12m -skip '^Test(Stress|Brutal)_' ./...
	cd internal/plugintest && $(GO) test -race -count=1 -timeout 12m -run '$(RACE_MATRIX)' .

## core-test: the engine's tests under the race detector (with the tag
## fitcorpus, whose test reads the fit corpus of core/internal/tokenfit),
## then the fit module's accuracy and golden tests under it, and without it
## the allocation tests and the estimator's hostile-text property test (200
## texts per class and family, a new seed each run).
core-test:
	cd core && $(GO) test -race -count=1 -timeout 10m -tags fitcorpus ./...
	cd core/internal/tokenfit && $(GO) test -race -count=1 -timeout 10m ./...
	cd core && $(GO) test -count=1 -timeout 5m -run 'Allocate' ./internal/tokens
	cd core/internal/tokenfit && $(GO) test -count=1 -timeout 5m -run '^TestEstimatorHostileClasses$$' ./accuracy
	cd core && $(GO) test -count=1 -timeout 5m -run 'Allocations' .

## adkv2-test: vet and test the ADK v2 plugin (adkv2/go.mod, in its own
## workspace adkv2/go.work): every test under the race detector but the
## stress matrix (TestStressV2_*, in adkv2/internal/plugintest), which runs
## after it without it, as the v1 matrix does, and prints how its
## compactions ran per ground truth.
adkv2-test:
	cd adkv2 && $(GO) vet ./... && $(GO) test -race -count=1 -timeout 10m -skip '^TestStressV2_' ./...
	cd adkv2/internal/plugintest && CONTEXTGUARD_STRESS_TABLE=1 $(GO) test -count=1 -timeout 10m -run '^TestStressV2_'

## conformance: the adapter-conformance suite through each ADK line's
## runner, printing one table per line (it also runs, under -race, in
## `make race` and `make adkv2-test`).
conformance:
	CONTEXTGUARD_CONFORMANCE_TABLE=1 $(GO) test -count=1 -timeout 10m -run '^TestConformance$$'
	cd adkv2 && CONTEXTGUARD_CONFORMANCE_TABLE=1 $(GO) test -count=1 -timeout 10m -run '^TestConformance$$'

## examples-test: vet and test the examples module (examples/go.mod).
examples-test:
	cd examples && $(GO) vet ./... && $(GO) test -race -count=1 -timeout 10m ./...

## integration: vet and test the integration modules of each ADK line
## (integration/go.mod, adkv2/integration/go.mod): ADK's SQL session
## service on SQLite and PostgreSQL, and the Gemini wire format. -v shows which tests ran and which were skipped (PostgreSQL
## without CONTEXTGUARD_PG_DSN, see integration/README.md).
integration:
	cd integration && $(GO) vet ./... && $(GO) test -race -count=1 -timeout 10m -v ./...
	cd adkv2/integration && $(GO) vet ./... && $(GO) test -race -count=1 -timeout 10m -v ./...

## cost: the cost benchmark on real sessions (README.md, Developing): every
## recorded agent session of ../shared/agent-traces beside the repository
## root (or CONTEXTGUARD_TRACES) replayed through ADK v1's runner with the
## guard at each configuration and window, printed as one table, then the
## accounting of every content (kept, pruned, summarized, listed, lost) and
## of every compaction event (its request smaller than ADK's), each loss in
## detail. Skipped with a message when the sessions are absent; in CI
## (CI=true) that, a lost content or an event without a smaller request
## fails it.
## COST_FLAGS go to the benchmark, e.g. make cost COST_FLAGS=-sessions for a
## row per session, or -max-requests=N to cap each session's model calls.
COST_FLAGS ?=
cost:
	cd integration && $(GO) test -count=1 -timeout 10m -run '^$$' -bench '^BenchmarkCostOnRealSessions$$' -benchtime 1x ./costbench -args $(COST_FLAGS)

## recall-bench: the recall benchmark on real sessions (README.md,
## Developing): every recorded agent session of ../shared/agent-traces
## beside the repository root (or CONTEXTGUARD_TRACES) replayed through ADK
## v1's runner with the guard and its recall tool at two windows that
## compact it, default and pruning, then queries drawn by the fixed rule of
## integration/recallbench/queries.go from what the final request no longer
## holds, each asked by the model through the runner; prints top-1, top-3,
## answer tokens and tool latency per session, and fails on an answer over
## its budget as the guard counts it. Skipped with a message when the
## sessions are absent, a failure in CI (CI=true).
recall-bench:
	cd integration && $(GO) test -count=1 -timeout 10m -run '^$$' -bench '^BenchmarkRecallOnRealSessions$$' -benchtime 1x ./recallbench

## modules-check: every module is tidy and builds and vets on its own, as a
## user's build sees it (GOWORK=off: the replace directives, no workspace).
modules-check: tidy-check gowork-check

## tidy-check: `go mod tidy` would change no go.mod or go.sum (it prints the
## change and fails otherwise; nothing is written).
tidy-check:
	@set -e; for m in $(MODULES); do \
		echo "== tidy-check $$m"; \
		(cd $$m && GOWORK=off $(GO) mod tidy -diff); \
	done

## gowork-check: each module builds and vets alone (GOWORK=off).
gowork-check:
	@set -e; for m in $(MODULES); do \
		echo "== GOWORK=off build and vet $$m"; \
		(cd $$m && GOWORK=off $(GO) build ./... && GOWORK=off $(GO) vet ./...); \
	done

## release-check: rehearse a release of HEAD (RELEASING.md): the
## rehearsal's own tests, then internal/releasecheck, which zips core, the
## root and adkv2 at a test version as a release would tag them, serves the
## zips from a file module proxy, and in a fresh module per ADK line outside
## the repository runs go get of the plugin and its quickstart against a
## local Gemini API. It fails on a module zip over 5 MB or a tracked file
## over 1 MB not listed in .large-files, and prints each zip's size.
release-check:
	cd internal/releasecheck && $(GO) test -count=1 -timeout 5m ./...
	cd internal/releasecheck && $(GO) run . -go "$(GO)"

## demo: run the offline demo (see examples/README.md); flags via DEMO_FLAGS,
## e.g. make demo DEMO_FLAGS="-turns 8 -out out/tokens.svg".
demo:
	cd examples && $(GO) run ./demo $(DEMO_FLAGS)

## lint: staticcheck over every module (CI installs STATICCHECK_VERSION with
## go install).
STATICCHECK ?= staticcheck
STATICCHECK_VERSION ?= v0.6.1
lint:
	@set -e; for m in $(MODULES); do \
		echo "== staticcheck $$m"; \
		(cd $$m && $(STATICCHECK) ./...); \
	done

print-staticcheck-version:
	@echo $(STATICCHECK_VERSION)

.PHONY: fuzz

## fuzz: run every fuzz target of the engine (core), the root and adkv2 for
## FUZZTIME each (default 30s), one after the other (go test -fuzz takes one
## target at a time), e.g. make fuzz FUZZTIME=10m. Seeds live in
## testdata/fuzz/<FuzzName>/ of each package. A run that fails only with
## "context deadline exceeded" and writes no failing input is Go 1.26's
## fuzzing-engine race at the end of a duration -fuzztime (go.dev/issue/75804,
## fixed in Go 1.27), not a finding: that target runs once more, and fails
## if it fails again. A real finding always writes its failing input.
FUZZTIME ?= 30s
FUZZ_MODULES = core . adkv2
fuzz:
	@set -e; for m in $(FUZZ_MODULES); do \
		for pkg in $$(cd $$m && $(GO) list -f '{{.Dir}}|{{.ImportPath}}' ./...); do \
			dir=$${pkg%%|*}; \
			for f in $$(grep -ho '^func Fuzz[A-Za-z0-9_]*' $$dir/*_test.go 2>/dev/null | cut -d' ' -f2); do \
				echo "== fuzz $$f in $${pkg#*|} for $(FUZZTIME)"; \
				for try in 1 2; do \
					log=$$(mktemp); \
					if (cd $$m && $(GO) test -run '^$$' -fuzz "^$$f\$$" -fuzztime $(FUZZTIME) -timeout 30m $${pkg#*|}) >$$log 2>&1; then \
						cat $$log; rm -f $$log; break; \
					fi; \
					cat $$log; \
					if [ $$try = 1 ] && grep -q 'context deadline exceeded' $$log && ! grep -q 'Failing input written' $$log; then \
						echo "== fuzz $$f: the fuzzing engine's race at the end of -fuzztime (no failing input written); once more"; \
						rm -f $$log; continue; \
					fi; \
					rm -f $$log; exit 1; \
				done; \
			done; \
		done; \
	done

## stress: the stress matrix (every TestStress_* / TestBrutal_* row, seed and
## tokenizer modes, in internal/plugintest) through the ADK v1 runner,
## without -race, then a table
## of every run, the matrix's wall time and its five slowest runs (printed by
## TestMain). It runs in local directory mode so the table reaches the
## terminal.
stress:
	cd internal/plugintest && CONTEXTGUARD_STRESS_TABLE=1 $(GO) test -count=1 -timeout 10m -run '^Test(Stress|Brutal)_'
