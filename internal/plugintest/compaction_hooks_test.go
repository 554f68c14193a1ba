package plugintest

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	. "github.com/adk-contextguard/contextguard"
	"github.com/adk-contextguard/contextguard/contextguardtest"
	"github.com/adk-contextguard/contextguard/contextguardtest/o200k"
)

// TestKnobOptions_Validated: invalid values of the new options are errors
// reported by Plugin, never clamped.
func TestKnobOptions_Validated(t *testing.T) {
	tests := []struct {
		name    string
		agent   []AgentOption
		guard   []Option
		wantErr string
	}{
		{name: "negative summary tokens", agent: []AgentOption{WithSummaryTokens(-5)}, wantErr: "WithSummaryTokens(-5): must be >= 0"},
		{name: "negative summarizer window", agent: []AgentOption{WithSummarizerWindow(-1)}, wantErr: "WithSummarizerWindow(-1): must be >= 0"},
		{name: "summarizer window too small to be one", agent: []AgentOption{WithSummarizerWindow(100)}, wantErr: "WithSummarizerWindow(100): a window must be between 1024 and 100000000 tokens"},
		{name: "nil before-compaction hook", guard: []Option{WithBeforeCompaction(nil)}, wantErr: "WithBeforeCompaction: hook is nil"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := New(nil, append([]Option{WithLogger(quietLogger)}, tt.guard...)...)
			g.Add("a", fixedSummary("s"), tt.agent...)
			_, err := g.Plugin()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantErr)
		})
	}
}

// TestSummaryKnobsAndHook_ThroughRunner plays 24 tool-heavy turns at 32k
// through a real runner with the three knobs of a compaction: the summary's
// length (WithSummaryTokens), the summarizer model's window
// (WithSummarizerWindow, smaller than the conversation, so spans are
// summarized in pieces) and a before-compaction hook that adds an
// instruction to every compaction and skips the second one. Every summary
// is asked at most the length set, every prompt carries the hook's
// instruction, the skipped compaction is decided again on the next call,
// and no request exceeds the window by the ground truth.
func TestSummaryKnobsAndHook_ThroughRunner(t *testing.T) {
	const (
		window       = 32_000
		summaryLen   = 600
		summarizerW  = 8_000
		instruction  = "HOOK-INSTRUCTION: keep every pod name."
		skipDecision = 2 // the hook's decision that skips
	)
	var mu sync.Mutex
	decisions := 0
	var events []CompactionEvent
	logs := &logBuffer{}
	g := New(NewCrushRegistry(WithRegistryLogger(logs.logger())), WithLogger(logs.logger()),
		WithOnCompaction(func(_ context.Context, e CompactionEvent) {
			mu.Lock()
			defer mu.Unlock()
			events = append(events, e)
		}),
		WithBeforeCompaction(func(_ context.Context, p PendingCompaction) CompactionDecision {
			mu.Lock()
			defer mu.Unlock()
			decisions++
			return CompactionDecision{Skip: decisions == skipDecision, Instructions: instruction}
		}))
	sum := contextguardtest.NewSummarizerModel(contextguardtest.SummarizerConfig{Name: "in-house-summarizer", KeepText: true})
	g.Add("assistant", sum, WithMaxTokens(window), WithSummaryTokens(summaryLen), WithSummarizerWindow(summarizerW))
	res, err := contextguardtest.Run(context.Background(), contextguardtest.Scenario{
		Name: "KnobsAndHook", Window: window, Turns: 24, Seed: 5,
		Plan: func(int) contextguardtest.TurnPlan {
			return contextguardtest.TurnPlan{UserTextSize: 300, ResponseSize: 300, Steps: contextguardtest.Sequential(
				contextguardtest.Call("kubectl_logs", 3_000), contextguardtest.Call("read_file", 2_000))}
		},
	}, contextguardtest.RunConfig{Counter: o200k.Counter(1), Plugins: g.PluginConfig(), Summarizer: sum})
	require.NoError(t, err)
	t.Log(res)
	assert.Empty(t, res.Errors)
	assert.LessOrEqual(t, res.MaxRealTokens, window, "no request over the window")
	assert.Zero(t, res.OverflowsRejected)

	mu.Lock()
	defer mu.Unlock()
	require.GreaterOrEqual(t, len(events), 2, "compactions")
	assert.Equal(t, decisions, len(events)+1, "every compaction was asked about; one was skipped")
	rolling := 0
	for _, e := range events {
		rolling += e.RollingCalls
	}
	assert.Positive(t, rolling, "spans larger than the summarizer's window are summarized in pieces")
	require.NotEmpty(t, sum.Records())
	for i, call := range sum.Records() {
		assert.Positive(t, call.Asked, "call %d states a length", i)
		assert.LessOrEqual(t, call.Asked, summaryLen, "call %d asks at most WithSummaryTokens", i)
		assert.Contains(t, call.Text, instruction, "call %d carries the hook's instruction", i)
	}
	assert.Contains(t, logs.String(), "compaction skipped by the before-compaction hook")
	assert.NotContains(t, logs.String(), "summarizer's model is unknown", "WithSummarizerWindow names the window")
}
