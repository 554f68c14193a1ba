package contextguardtest

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/plugin"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/tool"
	"google.golang.org/adk/tool/functiontool"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard"
	"github.com/adk-contextguard/contextguard/core/coretest"
)

func matrixRow(t *testing.T, fullName string) Scenario {
	t.Helper()
	for _, sc := range coretest.SeedMatrix() {
		if sc.FullName() == fullName {
			return sc
		}
	}
	t.Fatalf("no row %s", fullName)
	return Scenario{}
}

type toyMode int

const (
	toyWatermark toyMode = iota // remembers what its summary covers (works)
	toyStateless                // re-summarizes the rebuilt history every step (a compaction loop)
	toyPrepend                  // prepends a summary and removes nothing (never shrinks)
)

// toyGuard is a deliberately simple compactor used to exercise the driver's
// measurements: over 70% of the window it summarizes everything before the
// last user text message and keeps the rest.
func toyGuard(t *testing.T, s *SummarizerModel, c Counter, window int, mode toyMode) runner.PluginConfig {
	t.Helper()
	var summary *genai.Content
	covered := 0 // leading raw contents the summary replaces
	p, err := plugin.New(plugin.Config{Name: "toy-guard", BeforeModelCallback: func(ctx agent.CallbackContext, req *model.LLMRequest) (*model.LLMResponse, error) {
		offset := 0 // raw index of req.Contents[1] when a summary is injected
		if mode == toyWatermark && summary != nil && covered <= len(req.Contents) {
			req.Contents = append([]*genai.Content{summary}, req.Contents[covered:]...)
			offset = covered - 1
		}
		if c.CountRequest(req) < window*7/10 {
			return nil, nil
		}
		k := len(req.Contents) - 1
		for ; k > 0; k-- {
			if cc := req.Contents[k]; cc != nil && cc.Role == genai.RoleUser && len(cc.Parts) > 0 && strings.HasPrefix(cc.Parts[0].Text, "[turn") {
				break
			}
		}
		if k == 0 {
			return nil, nil
		}
		var text strings.Builder
		for r, err := range s.GenerateContent(ctx, &model.LLMRequest{Contents: req.Contents[:k]}, false) {
			if err != nil {
				return nil, err
			}
			text.WriteString(r.Content.Parts[0].Text)
		}
		head := genai.NewContentFromText(text.String(), genai.RoleUser)
		switch mode {
		case toyPrepend:
			req.Contents = append([]*genai.Content{head}, req.Contents...)
		default:
			summary, covered = head, k+offset
			req.Contents = append([]*genai.Content{head}, req.Contents[k:]...)
		}
		return nil, nil
	}})
	require.NoError(t, err)
	return runner.PluginConfig{Plugins: []*plugin.Plugin{p}}
}

func TestRun_NoGuardOverflows(t *testing.T) {
	sc := matrixRow(t, "Stress_8k_NormalConversation")
	res, err := Run(context.Background(), sc, RunConfig{})
	require.NoError(t, err)
	t.Log(res)
	assert.Positive(t, res.OverflowsSurfaced, "without a guard an 8k conversation must overflow")
	assert.Equal(t, res.OverflowsRejected, res.OverflowsSurfaced)
	assert.Zero(t, res.OverflowsRecovered)
	assert.Greater(t, res.MaxUtilization, 1.0)
	assert.Zero(t, res.CompactionSteps)
	assert.Equal(t, sc.Turns, res.Turns)
	assert.Len(t, res.Errors, res.OverflowsSurfaced)
	assert.Zero(t, res.PairViolations)
	assert.Positive(t, sc.MinSummarizerCalls)
}

func TestRun_RoomyWindow(t *testing.T) {
	t.Parallel()
	sc := matrixRow(t, "Stress_1M_NormalConversation")
	var hooked atomic.Int32
	res, err := Run(context.Background(), sc, RunConfig{OnRequest: func(int, *model.LLMRequest) { hooked.Add(1) }})
	require.NoError(t, err)
	t.Log(res)
	assert.Zero(t, res.OverflowsSurfaced)
	assert.Zero(t, res.OverflowsRejected)
	assert.Empty(t, res.Errors)
	assert.Equal(t, 2*sc.Turns, res.Steps, "one tool step and one text step per turn")
	assert.Equal(t, int32(res.Steps), hooked.Load())
	assert.Zero(t, res.PairViolations)
	assert.Zero(t, res.MissingLatestUser)
	for i, rec := range res.Requests {
		assert.Equal(t, rec.RawTokens, rec.Tokens, "no guard: sent == raw (step %d)", i)
		assert.Equal(t, rec.RawTokens, rec.EffectiveInput, "no guard: effective == raw (step %d)", i)
		assert.Equal(t, i/2, rec.Turn)
		assert.Equal(t, "session-Stress_1M_NormalConversation", rec.SessionID)
	}
}

// TestRun_CallWithAGivenTool: a plan calls a tool of the test's own with
// CallWith; Run gives the agent that tool instead of a fake one, the tool
// receives the arguments as written, and every turn ends after it.
func TestRun_CallWithAGivenTool(t *testing.T) {
	t.Parallel()
	type lookupArgs struct {
		Ticket string `json:"ticket"`
	}
	var mu sync.Mutex
	var got []string
	lookup, err := functiontool.New(functiontool.Config{Name: "lookup_ticket", Description: "Looks a ticket up."},
		func(_ agent.ToolContext, a lookupArgs) (map[string]any, error) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, a.Ticket)
			return map[string]any{"status": "open"}, nil
		})
	require.NoError(t, err)
	sc := Scenario{Name: "call_with", Window: 100_000, Turns: 3, TokenRatio: 1,
		Plan: func(int) TurnPlan {
			return TurnPlan{Steps: Sequential(CallWith("lookup_ticket", map[string]any{"ticket": "INC-4127"}), Call("grep", 200))}
		}}
	res, err := Run(context.Background(), sc, RunConfig{Tools: []tool.Tool{lookup}})
	require.NoError(t, err)
	assert.Empty(t, res.Errors)
	assert.Equal(t, 3*sc.Turns, res.Steps, "two tool steps and one answer per turn: none redone or skipped")
	assert.Equal(t, []string{"INC-4127", "INC-4127", "INC-4127"}, got, "the given tool answered every call, with its arguments")
}

// TestRun_UnguardedRunWarns: a guard that guards no agent of the run (a
// misspelt name given to Add) logs a warning naming the run's agent and
// those it guards; a guard of the run's agent, or a default, logs none.
func TestRun_UnguardedRunWarns(t *testing.T) {
	t.Parallel()
	const warning = "no agent of this run is guarded"
	tests := []struct {
		name     string
		add      func(g *contextguard.ContextGuard, m model.LLM)
		wantWarn bool
	}{
		{"a misspelt name", func(g *contextguard.ContextGuard, m model.LLM) { g.Add("asistant", m) }, true},
		{"the run's agent", func(g *contextguard.ContextGuard, m model.LLM) { g.Add("assistant", m) }, false},
		{"every agent by default", func(g *contextguard.ContextGuard, m model.LLM) { g.AddDefault(m) }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var logs syncBuffer
			g := contextguard.New(nil, contextguard.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
			tt.add(g, NewSummarizerModel(SummarizerConfig{}))
			sc := Scenario{Name: "unguarded", Window: 100_000, Turns: 2, TokenRatio: 1}
			res, err := Run(context.Background(), sc, RunConfig{Plugins: g.PluginConfig()})
			require.NoError(t, err)
			require.Empty(t, res.Errors)
			if !tt.wantWarn {
				assert.NotContains(t, logs.String(), warning)
				return
			}
			assert.Equal(t, 1, strings.Count(logs.String(), warning), "once per run agent, not once per run:\n%s", logs.String())
			assert.Contains(t, logs.String(), `level=WARN msg="contextguard: `+warning)
			assert.Contains(t, logs.String(), "agent=assistant run_agents=[assistant] guarded=[asistant]")
		})
	}
}

// syncBuffer is a bytes.Buffer safe for the guard's logging goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestRun_MeasuresCompactions(t *testing.T) {
	sc := matrixRow(t, "Stress_8k_SmallToolCalls")
	counter := SeedCounter(sc.TokenRatio)
	sum := NewSummarizerModel(SummarizerConfig{SummarySize: 600})
	res, err := Run(context.Background(), sc, RunConfig{Counter: counter, Summarizer: sum, Plugins: toyGuard(t, sum, counter, sc.Window, toyWatermark)})
	require.NoError(t, err)
	t.Log(res)
	assert.GreaterOrEqual(t, res.SummarizerCalls, sc.MinSummarizerCalls)
	assert.Equal(t, sum.Calls(), res.SummarizerCalls)
	assert.Positive(t, res.CompactionSteps)
	assert.Zero(t, res.NonShrinkingCompactions)
	assert.Zero(t, res.OverflowsSurfaced)
	assert.Zero(t, res.PairViolations)
	assert.Zero(t, res.MissingLatestUser)
	assert.Greater(t, res.MeanUtilizationAtTrigger, 0.6)
	assert.Len(t, res.UtilizationAtTrigger, res.CompactionSteps)
	last := res.Requests[len(res.Requests)-1]
	assert.Less(t, last.Tokens, last.RawTokens)
	// Information flows through summaries: the first user marker is still
	// present at the end, carried by the summary.
	first := res.Requests[0].LatestUser
	assert.True(t, last.HasMarker(first), "marker %s lost", first)
}

func TestRun_DetectsNonShrinkingCompactions(t *testing.T) {
	sc := matrixRow(t, "Stress_8k_SmallToolCalls")
	counter := SeedCounter(sc.TokenRatio)
	for _, mode := range []toyMode{toyStateless, toyPrepend} {
		sum := NewSummarizerModel(SummarizerConfig{})
		res, err := Run(context.Background(), sc, RunConfig{Counter: counter, Summarizer: sum, Plugins: toyGuard(t, sum, counter, sc.Window, mode)})
		require.NoError(t, err)
		t.Log(res)
		assert.Positive(t, res.NonShrinkingCompactions, "mode %d", mode)
	}
}

func TestRun_Errors(t *testing.T) {
	_, err := Run(context.Background(), Scenario{Turns: -1}, RunConfig{})
	assert.Error(t, err)
	_, err = Run(context.Background(), Scenario{Turns: 1, Plan: each(TurnPlan{Steps: Parallel(Call(coretest.MCPToolName(3), 10))})}, RunConfig{})
	assert.ErrorContains(t, err, "declares only 0 MCP tools")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = Run(ctx, Scenario{Turns: 2}, RunConfig{})
	assert.ErrorIs(t, err, context.Canceled)
}

func TestResult_String(t *testing.T) {
	r := &Result{Scenario: "X", Window: 100, Requests: []coretest.RequestRecord{{Tokens: 50, Compaction: true, EffectiveInput: 80, HasLatestUser: true}, {Tokens: 120, Rejected: true, HasLatestUser: true}}}
	r.Finish()
	assert.Equal(t, 1.2, r.MaxUtilization)
	assert.Equal(t, 0.8, r.MeanUtilizationAtTrigger)
	assert.Equal(t, 1, r.OverflowsRecovered)
	assert.True(t, strings.HasPrefix(r.String(), "X: turns=0 steps=2 summarizer=0 compactions=1"), r.String())
}
