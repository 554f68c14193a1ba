package contextguard

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/adk/model"

	"github.com/adk-contextguard/contextguard/contextguardtest"
)

// TestBeforeCompaction plays one call over the trigger, then a second one,
// with a before-compaction hook answering each scenario's decision: it can
// add instructions to this compaction's prompt or skip it, and a skip is
// refused when the request would not fit the window.
func TestBeforeCompaction(t *testing.T) {
	const window = 8_000
	lim := newLimits(window)
	cal := newCalibration(guardState{}, testEst)
	build := func(n int) *model.LLMRequest {
		return request(append(history(n, 400), userMsg("fix the failing test"))...)
	}
	// fits is the smallest history over the trigger: it fits the window.
	fits := 1
	for cal.count(requestTokens(testEst, engineReq(build(fits)))) <= lim.threshold {
		fits++
	}
	require.Less(t, cal.count(requestTokens(testEst, engineReq(build(fits)))), lim.room(), "test setup: over the trigger, within the window")
	overTrigger := func(n int) *model.LLMRequest { return build(n) }
	tests := []struct {
		name string
		// exchanges is the history's length: fits is over the trigger but
		// fits the window, 3*fits does not fit.
		exchanges int
		decide    func(PendingCompaction) CompactionDecision
		// wantSummaries is how many compactions the two calls make.
		wantSummaries int
		wantLog       string
		// wantInstructions must be in every summary request's
		// instructions.
		wantInstructions []string
	}{
		{
			name:      "instructions reach this compaction's prompt",
			exchanges: fits,
			decide: func(PendingCompaction) CompactionDecision {
				return CompactionDecision{Instructions: "Keep the test's name."}
			},
			wantSummaries:    1,
			wantInstructions: []string{"Keep every ticket number.", "Keep the test's name."},
		},
		{
			name:          "a skip is honoured while the request fits, and asked again next call",
			exchanges:     fits,
			decide:        func(PendingCompaction) CompactionDecision { return CompactionDecision{Skip: true} },
			wantSummaries: 0,
			wantLog:       "compaction skipped by the before-compaction hook",
		},
		{
			name:          "a skip is refused when the request would not fit the window",
			exchanges:     3 * fits,
			decide:        func(PendingCompaction) CompactionDecision { return CompactionDecision{Skip: true} },
			wantSummaries: 1,
			wantLog:       "asked to skip, but the request would not fit the window",
		},
		{
			name:          "a hook that panics leaves the compaction as configured",
			exchanges:     fits,
			decide:        func(PendingCompaction) CompactionDecision { panic("hook bug") },
			wantSummaries: 1,
			wantLog:       "the before-compaction hook failed",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var seen []PendingCompaction
			rs := &recordingSummarizer{reply: func(int, SummaryRequest) (string, error) { return "SUMMARY", nil }}
			logs := &logBuffer{}
			g := New(NewCrushRegistry(WithRegistryLogger(quietLogger)), WithLogger(logs.logger()),
				WithBeforeCompaction(func(_ context.Context, p PendingCompaction) CompactionDecision {
					mu.Lock()
					seen = append(seen, p)
					mu.Unlock()
					return tt.decide(p)
				}))
			g.Add("a", nil, WithSummarizer(rs), WithMaxTokens(window), WithInstructions("Keep every ticket number."))
			require.NoError(t, g.Err())
			ctx := newFakeCtx("a").withUser("fix the failing test")

			for range 2 {
				req := overTrigger(tt.exchanges)
				before := len(req.Contents)
				_, err := g.beforeModel(ctx, req)
				require.NoError(t, err)
				if tt.wantSummaries == 0 {
					assert.Len(t, req.Contents, before, "the request is sent as it is")
				}
			}

			assert.Equal(t, tt.wantSummaries, ctx.getInt(keyCompactions), "compactions")
			if tt.wantSummaries == 0 {
				assert.Empty(t, rs.requests(), "no summarizer call")
			}
			for _, r := range rs.requests() {
				for _, want := range tt.wantInstructions {
					assert.Contains(t, r.Instructions, want)
				}
			}
			if tt.wantLog != "" {
				assert.Contains(t, logs.String(), tt.wantLog)
			}
			mu.Lock()
			defer mu.Unlock()
			require.NotEmpty(t, seen, "the hook was asked")
			assert.Equal(t, PendingCompaction{
				Agent: "a", SessionID: "s1", Strategy: StrategyThreshold, Reason: "tokens",
				Tokens: seen[0].Tokens, Threshold: lim.threshold, Window: window,
			}, seen[0])
			assert.Greater(t, seen[0].Tokens, lim.threshold)
			if tt.wantSummaries == 0 {
				assert.Len(t, seen, 2, "a skipped compaction is asked about again on the next call")
			}
		})
	}
}

// TestBeforeCompaction_HookSeesTheSessionReleased: the hook may read the
// guard's state of another session, and a call for the same session from
// the hook's own context gets ErrReentrant instead of waiting for itself.
func TestBeforeCompaction_ReentrantCallFromTheHook(t *testing.T) {
	var g *ContextGuard
	var inner error
	g = New(NewCrushRegistry(WithRegistryLogger(quietLogger)), WithLogger(quietLogger),
		WithBeforeCompaction(func(ctx context.Context, _ PendingCompaction) CompactionDecision {
			hctx := newFakeCtx("a").withUser("go on")
			hctx.Context = ctx
			_, inner = g.beforeModel(hctx, request(userMsg("go on")))
			return CompactionDecision{}
		}))
	g.Add("a", fixedSummary("SUMMARY"), WithMaxTokens(8_000))
	require.NoError(t, g.Err())
	_, err := g.beforeModel(newFakeCtx("a").withUser("go on"), request(append(history(30, 400), userMsg("go on"))...))
	require.NoError(t, err)
	require.Error(t, inner)
	assert.ErrorIs(t, inner, ErrReentrant)
}

// TestSummaryKnobs: WithSummaryTokens sets the length asked of a summary
// (still bounded by the room under the trigger), and WithSummarizerWindow
// the summarizer model's window when the registry does not know it, which
// is otherwise assumed with a warning that names the summarizer's option.
func TestSummaryKnobs(t *testing.T) {
	cal := newCalibration(guardState{}, testEst)
	tests := []struct {
		name   string
		window int
		opts   []AgentOption
		// wantAsked is the calibrated length asked; 0 skips the check.
		wantAsked   int
		wantRolling bool
		wantWarn    string
		noWarn      string
	}{
		{name: "default: half the buffer of a 32k window", window: 32_000, wantAsked: 3_200},
		{name: "WithSummaryTokens", window: 32_000, opts: []AgentOption{WithSummaryTokens(1_000)}, wantAsked: 1_000},
		{name: "WithSummaryTokens beyond the room under the trigger", window: 32_000, opts: []AgentOption{WithSummaryTokens(1_000_000)}},
		{
			name: "an unknown summarizer model: the default window, and a warning naming WithSummarizerWindow", window: 32_000,
			wantWarn: "set WithSummarizerWindow to override",
		},
		{
			name: "WithSummarizerWindow smaller than the conversation: summarized in pieces", window: 32_000,
			opts: []AgentOption{WithSummarizerWindow(4_000)}, wantRolling: true, noWarn: "summarizer's model is unknown",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sumModel := &fakeLLM{name: "in-house-summarizer-v2", reply: func(context.Context, *model.LLMRequest) (string, error) { return "SUMMARY", nil }}
			var events []CompactionEvent
			logs := &logBuffer{}
			g := New(NewCrushRegistry(WithRegistryLogger(quietLogger)), WithLogger(logs.logger()),
				WithOnCompaction(func(_ context.Context, e CompactionEvent) { events = append(events, e) }))
			g.Add("a", sumModel, append([]AgentOption{WithMaxTokens(tt.window)}, tt.opts...)...)
			require.NoError(t, g.Err())
			ctx := newFakeCtx("a").withUser("go on")
			req := request(append(history(20, 1_000), userMsg("go on"))...)
			_, err := g.beforeModel(ctx, req)
			require.NoError(t, err)
			require.Len(t, events, 1)
			require.Positive(t, sumModel.calls)

			asked := askedWords(t, sumModel.last)
			if tt.wantAsked > 0 {
				assert.InDelta(t, cal.unscale(tt.wantAsked)*3/4, asked, 2, "words asked")
			}
			lim := newLimits(tt.window)
			assert.LessOrEqual(t, asked, cal.unscale(lim.threshold)*3/4, "never more than the room under the trigger")
			assert.Equal(t, tt.wantRolling, events[0].RollingCalls > 0, "rolling calls: %d", events[0].RollingCalls)
			if tt.wantWarn != "" {
				assert.Contains(t, logs.String(), tt.wantWarn)
				assert.Contains(t, logs.String(), "summarizer_model=in-house-summarizer-v2")
			}
			if tt.noWarn != "" {
				assert.NotContains(t, logs.String(), tt.noWarn)
			}
		})
	}
}

// askedWords reads the length the summary prompt of req asks for.
func askedWords(t *testing.T, req *model.LLMRequest) int {
	t.Helper()
	require.NotNil(t, req)
	text := contentText(req.Config.SystemInstruction)
	_, rest, ok := strings.Cut(text, "under ")
	require.True(t, ok, "the prompt states a length")
	var n int
	for _, r := range rest {
		if r < '0' || r > '9' {
			break
		}
		n = n*10 + int(r-'0')
	}
	return n
}

// TestKnobOptions_Validated: invalid values of the new options are errors
// reported by Plugin, never clamped.
func TestKnobOptions_Validated(t *testing.T) {
	tests := []struct {
		name    string
		agent   []AgentOption
		guard   []Option
		wantErr string
	}{
		{name: "zero summary tokens", agent: []AgentOption{WithSummaryTokens(0)}, wantErr: "WithSummaryTokens(0): must be > 0"},
		{name: "negative summary tokens", agent: []AgentOption{WithSummaryTokens(-5)}, wantErr: "WithSummaryTokens(-5)"},
		{name: "zero summarizer window", agent: []AgentOption{WithSummarizerWindow(0)}, wantErr: "WithSummarizerWindow(0): must be > 0"},
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

// TestBeforeCompaction_RequestedCompaction: the hook is asked about a
// requested compaction too (Reason "requested"), and the summary prompt's
// instructions come in order: the agent's, the request's focus, the hook's.
func TestBeforeCompaction_RequestedCompaction(t *testing.T) {
	var reasons []string
	rs := &recordingSummarizer{reply: func(int, SummaryRequest) (string, error) { return "SUMMARY", nil }}
	g := New(NewCrushRegistry(WithRegistryLogger(quietLogger)), WithLogger(quietLogger),
		WithBeforeCompaction(func(_ context.Context, p PendingCompaction) CompactionDecision {
			reasons = append(reasons, p.Reason)
			return CompactionDecision{Instructions: "HOOK: keep the stack trace."}
		}))
	g.Add("a", nil, WithSummarizer(rs), WithMaxTokens(200_000), WithInstructions("AGENT: keep ticket numbers."))
	require.NoError(t, g.Err())
	ctx := newFakeCtx("a").withUser("go on")
	require.NoError(t, g.RequestCompactionInState(ctx.State(), "a", "the failing test"))

	_, err := g.beforeModel(ctx, request(append(history(6, 300), userMsg("go on"))...))
	require.NoError(t, err)

	assert.Equal(t, []string{ReasonRequested}, reasons)
	require.Len(t, rs.requests(), 1)
	got := rs.requests()[0].Instructions
	agentAt, focusAt, hookAt := strings.Index(got, "AGENT:"), strings.Index(got, "the failing test"), strings.Index(got, "HOOK:")
	require.True(t, agentAt >= 0 && focusAt >= 0 && hookAt >= 0, "all three instructions: %q", got)
	assert.Less(t, agentAt, focusAt)
	assert.Less(t, focusAt, hookAt)
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
	}, contextguardtest.RunConfig{Counter: contextguardtest.TokenizerCounter(1), Plugins: g.PluginConfig(), Summarizer: sum})
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
