package contextguard

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"log/slog"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
	"google.golang.org/adk/session"

	"github.com/adk-contextguard/contextguard/contextguardtest"
)

// optionUse is one configuration of a guard: its registry (the default one
// built with registryOpts when nil), its options, and the options of the
// agent "a" it adds with model.
type optionUse struct {
	registry     ModelRegistry
	registryOpts []RegistryOption
	guard        []Option
	agent        []AgentOption
	// model is the model given to Add: by default one the registry does
	// not know, so that only WithMaxTokens sets a window at Add.
	model string
}

// plugin builds the guard and its plugin, and returns Plugin's error.
func (u optionUse) plugin() error {
	reg := u.registry
	if reg == nil {
		reg = NewCrushRegistry(append([]RegistryOption{WithRegistryLogger(slog.New(slog.DiscardHandler))}, u.registryOpts...)...)
	}
	name := u.model
	if name == "" {
		name = "in-house-model"
	}
	g := New(reg, append([]Option{WithLogger(slog.New(slog.DiscardHandler))}, u.guard...)...)
	g.Add("a", contextguardtest.NewScriptedModel(contextguardtest.ScriptConfig{Name: name}), u.agent...)
	_, err := g.Plugin()
	return err
}

// optionsRegistry is a registry of fixed windows.
type optionsRegistry map[string]int

func (r optionsRegistry) ContextWindow(m string) int { return r[m] }

// countingTokens is a TokenCounter for the table: one token per byte.
type countingTokens struct{}

func (countingTokens) CountTokens(text string) int { return len(text) }

// TestOptions_EveryOption lists every option of the package with one value
// Plugin rejects, with its error, and one value at the edge of what it
// accepts; more rows cover the rules between options (one strategy, one
// trigger, the window they must fit). A new option without a row fails
// the test.
func TestOptions_EveryOption(t *testing.T) {
	model := contextguardtest.NewScriptedModel(contextguardtest.ScriptConfig{Name: "in-house-model"})
	agent := func(opts ...AgentOption) optionUse { return optionUse{agent: opts} }
	guard := func(opts ...Option) optionUse { return optionUse{guard: opts} }
	registry := func(opts ...RegistryOption) optionUse { return optionUse{registryOpts: opts} }
	known := func(opts ...AgentOption) optionUse {
		return optionUse{registry: optionsRegistry{"known-model": 8_000}, model: "known-model", agent: opts}
	}
	rows := []struct {
		option  string
		invalid optionUse
		wantErr string
		edge    optionUse
	}{
		// The guard's options.
		{"WithBeforeCompaction", guard(WithBeforeCompaction(nil)), "contextguard: WithBeforeCompaction: hook is nil",
			guard(WithBeforeCompaction(func(context.Context, PendingCompaction) CompactionDecision { return CompactionDecision{} }))},
		{"WithClock", guard(WithClock(nil)), "contextguard: WithClock: clock is nil", guard(WithClock(SystemClock()))},
		{"WithLogger", guard(WithLogger(nil)), "contextguard: WithLogger: logger is nil", guard(WithLogger(slog.New(slog.DiscardHandler)))},
		{"WithMaxSessionBytes", guard(WithMaxSessionBytes(-1)), "contextguard: WithMaxSessionBytes(-1): must be >= 0 (0 means the default", guard(WithMaxSessionBytes(0))},
		{"WithMaxSessions", guard(WithMaxSessions(-1)), "contextguard: WithMaxSessions(-1): must be >= 0 (0 means the default 10000)", guard(WithMaxSessions(0))},
		{"WithMeterProvider", guard(WithMeterProvider(nil)), "contextguard: WithMeterProvider: provider is nil", guard(WithMeterProvider(metricnoop.NewMeterProvider()))},
		{"WithOnCompaction", guard(WithOnCompaction(nil)), "contextguard: WithOnCompaction: hook is nil", guard(WithOnCompaction(func(context.Context, CompactionEvent) {}))},
		{"WithPreparedSummaries", guard(WithPreparedSummaries(-1)), "contextguard: WithPreparedSummaries(-1): must be >= 0 (0 turns prepared summaries off)", guard(WithPreparedSummaries(PreparedSummariesOff))},
		{"WithSessionService", guard(WithSessionService(nil)), "contextguard: WithSessionService: the session service is nil", guard(WithSessionService(session.InMemoryService()))},
		{"WithTracerProvider", guard(WithTracerProvider(nil)), "contextguard: WithTracerProvider: provider is nil", guard(WithTracerProvider(tracenoop.NewTracerProvider()))},

		// The default registry's options.
		{"WithDefaultWindow", registry(WithDefaultWindow(1_023)), "contextguard: WithDefaultWindow(1023): a window must be between 1024 and 100000000 tokens (0 reports an unknown model as unknown)", registry(WithDefaultWindow(1_024))},
		{"WithRegistryLogger", registry(WithRegistryLogger(nil)), "contextguard: WithRegistryLogger: logger is nil", registry(WithRegistryLogger(slog.New(slog.DiscardHandler)))},

		// The agents' options.
		{"WithBetweenTurns", agent(WithBetweenTurns("sometimes")), `Add("a"): WithBetweenTurns("sometimes"): must be "when_due" or "off"`, agent(WithBetweenTurns(BetweenTurnsOff))},
		{"WithEarlyCompaction", agent(WithEarlyCompaction(0)), `Add("a"): WithEarlyCompaction(0): must be in (0, 1]`, agent(WithEarlyCompaction(1))},
		{"WithInstructions", agent(WithInstructions("")), `Add("a"): WithInstructions: text is empty`, agent(WithInstructions("."))},
		{"WithMaxCompactionAttempts", agent(WithMaxCompactionAttempts(-1)), `Add("a"): WithMaxCompactionAttempts(-1): must be >= 0 (0 means the default 3)`, agent(WithMaxCompactionAttempts(0))},
		{"WithMaxSummarizerCalls", agent(WithMaxSummarizerCalls(-1)), `Add("a"): WithMaxSummarizerCalls(-1): must be >= 0 (0 means the default 10)`, agent(WithMaxSummarizerCalls(math.MaxInt))},
		{"WithMaxTokens", agent(WithMaxTokens(1_023)), `Add("a"): WithMaxTokens(1023): a window must be between 1024 and 100000000 tokens (0 means the registry's window)`, agent(WithMaxTokens(100_000_000))},
		{"WithMaxTokens", agent(WithMaxTokens(100_000_001)), `Add("a"): WithMaxTokens(100000001): a window must be between 1024 and 100000000 tokens`, agent(WithMaxTokens(1_024))},
		{"WithPruningMinFree", agent(WithMaxTokens(8_000), WithToolResultPruning(0), WithPruningMinFree(8_000)), `Add("a"): WithPruningMinFree(8000) is not below WithMaxTokens(8000): no pruning pass can free a whole window`, agent(WithMaxTokens(8_000), WithToolResultPruning(0), WithPruningMinFree(7_999))},
		{"WithPruningMinFree", agent(WithPruningMinFree(-1)), `Add("a"): WithPruningMinFree(-1): must be >= 0 (0 is the default, pruning only at the trigger)`, agent(WithPruningMinFree(0))},
		{"WithRecoveryModel", agent(WithRecoveryModel(nil)), `Add("a"): WithRecoveryModel: model is nil`, agent(WithRecoveryModel(model))},
		{"WithReserve", agent(WithMaxTokens(8_000), WithReserve(8_000)), `Add("a"): WithReserve(8000) is not below WithMaxTokens(8000): the reserve must leave part of the window`, agent(WithMaxTokens(8_000), WithReserve(7_999))},
		{"WithReserve", agent(WithReserve(0)), `Add("a"): WithReserve(0): must be > 0`, agent(WithReserve(1))},
		{"WithSlidingWindow", agent(WithSlidingWindow(-1)), `Add("a"): WithSlidingWindow(-1): must be >= 0 (0 means the default 20)`, agent(WithSlidingWindow(0))},
		{"WithSlidingWindow", agent(WithSlidingWindow(10), WithTailRetention(0.3)), `Add("a"): WithTailRetention(0.3): the strategy is already set by WithSlidingWindow(10); use only one of WithSlidingWindow, WithTailRetention`, agent(WithSlidingWindow(10), WithSlidingWindow(12))},
		{"WithSummarizer", agent(WithSummarizer(nil)), `Add("a"): WithSummarizer: summarizer is nil`, agent(WithSummarizer(NewLLMSummarizer(model)))},
		{"WithSummarizerWindow", agent(WithSummarizerWindow(1_023)), `Add("a"): WithSummarizerWindow(1023): a window must be between 1024 and 100000000 tokens (0 means the agent's window for its own model, else the registry's)`, agent(WithSummarizerWindow(1_024))},
		{"WithSummaryForm", agent(WithSummaryForm("prefix")), `Add("a"): WithSummaryForm("prefix"): must be "cached" or "transcript"`, agent(WithSummaryForm(SummaryFormTranscript))},
		{"WithSummaryTimeout", agent(WithSummaryTimeout(0)), `Add("a"): WithSummaryTimeout(0s): must be > 0`, agent(WithSummaryTimeout(time.Nanosecond))},
		{"WithSummaryTokens", agent(WithMaxTokens(8_000), WithSummaryTokens(8_000)), `Add("a"): WithSummaryTokens(8000) is not below WithMaxTokens(8000): the summary must fit inside the window`, agent(WithMaxTokens(8_000), WithSummaryTokens(7_999))},
		{"WithSummaryTokens", agent(WithSummaryTokens(-1)), `Add("a"): WithSummaryTokens(-1): must be >= 0 (0 means the default, half the buffer)`, agent(WithSummaryTokens(0))},
		{"WithTailRetention", agent(WithTailRetention(1)), `Add("a"): WithTailRetention(1): fraction must be > 0 and < 1`, agent(WithTailRetention(math.Nextafter(1, 0)))},
		{"WithTokenCounter", agent(WithTokenCounter(nil)), `Add("a"): WithTokenCounter: counter is nil`, agent(WithTokenCounter(countingTokens{}))},
		{"WithToolResultPruning", agent(WithToolResultPruning(-1)), `Add("a"): WithToolResultPruning(-1): must be >= 0 (0 means the default 3)`, agent(WithToolResultPruning(0))},
		{"WithTriggerFraction", agent(WithTriggerFraction(1)), `Add("a"): WithTriggerFraction(1): must be in (0, 1)`, agent(WithTriggerFraction(math.Nextafter(1, 0)))},
		{"WithTriggerFraction", agent(WithReserve(1_000), WithTriggerFraction(0.5)), `Add("a"): WithTriggerFraction(0.5): the trigger is already set by WithReserve(1000); use only one of WithTriggerTokens, WithTriggerFraction, WithReserve`, agent(WithTriggerFraction(0.4), WithTriggerFraction(0.5))},
		{"WithTriggerTokens", agent(WithMaxTokens(8_000), WithTriggerTokens(8_000)), `Add("a"): WithTriggerTokens(8000) is not below WithMaxTokens(8000): the trigger must be inside the window`, agent(WithMaxTokens(8_000), WithTriggerTokens(7_999))},
		{"WithTriggerTokens", known(WithTriggerTokens(8_000)), `Add("a"): WithTriggerTokens(8000) is not below the registry's window of 8000 tokens for model "known-model" (set WithMaxTokens when the agent's model is another): the trigger must be inside the window`, known(WithTriggerTokens(7_999))},
		{"WithTriggerTokens", known(WithTriggerTokens(9_000)), `is not below the registry's window of 8000 tokens`, known(WithTriggerTokens(9_000), WithMaxTokens(9_001))},
	}
	for _, tt := range rows {
		t.Run(tt.option+"/invalid", func(t *testing.T) {
			err := tt.invalid.plugin()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantErr)
		})
		t.Run(tt.option+"/edge", func(t *testing.T) {
			assert.NoError(t, tt.edge.plugin())
		})
	}

	// Every option the package exports has a row.
	var listed []string
	for _, r := range rows {
		listed = append(listed, r.option)
	}
	for _, name := range exportedOptions(t) {
		assert.Contains(t, listed, name, "option %s has no row in the table", name)
	}
}

// TestOptions_DocsSayWhatZeroMeans: the doc comment of every option that
// takes a number says what 0 means for it (a default, the registry's
// window, off, or an error), and WithSummarizerWindow's says that a
// summarizer on the agent's own model uses the agent's window.
func TestOptions_DocsSayWhatZeroMeans(t *testing.T) {
	zero := regexp.MustCompile(`(?i)\bzero\b|\b0\b`)
	numeric := 0
	for name, fn := range exportedOptionDecls(t) {
		params := fn.Type.Params.List
		if len(params) != 1 {
			continue
		}
		switch typ := types.ExprString(params[0].Type); typ {
		case "int", "float64", "time.Duration":
			numeric++
			assert.Regexp(t, zero, fn.Doc.Text(), "%s(%s) does not say what 0 means", name, typ)
		}
	}
	assert.GreaterOrEqual(t, numeric, 18, "the options that take a number")
	doc := exportedOptionDecls(t)["WithSummarizerWindow"].Doc.Text()
	assert.Contains(t, strings.Join(strings.Fields(doc), " "), "a summarizer whose model is the one the request names uses the agent's window")
}

// exportedOptions is the names of the package's exported functions named
// With..., read from its source files.
func exportedOptions(t *testing.T) []string {
	t.Helper()
	var names []string
	for name := range exportedOptionDecls(t) {
		names = append(names, name)
	}
	slices.Sort(names)
	require.NotEmpty(t, names)
	return names
}

// exportedOptionDecls is the declarations of the package's exported
// functions named With..., by name, read from its source files.
func exportedOptionDecls(t *testing.T) map[string]*ast.FuncDecl {
	t.Helper()
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	decls := map[string]*ast.FuncDecl{}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, parser.ParseComments|parser.SkipObjectResolution)
		require.NoError(t, err)
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if ok && fn.Recv == nil && fn.Name.IsExported() && strings.HasPrefix(fn.Name.Name, "With") {
				decls[fn.Name.Name] = fn
			}
		}
	}
	return decls
}
