package core

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/adk-contextguard/contextguard/core/coretest"

	"github.com/adk-contextguard/contextguard/core/internal/state"
	"github.com/adk-contextguard/contextguard/core/internal/textcut"
	"github.com/adk-contextguard/contextguard/core/internal/window"
)

// TestBeforeCompaction plays one call over the trigger, then a second one,
// with a before-compaction hook answering each scenario's decision: it can
// add instructions to this compaction's prompt or skip it, and a skip is
// refused when the request would not fit the window.
func TestBeforeCompaction(t *testing.T) {
	const win = 8_000
	lim := window.New(win)
	cal := newCalibration(state.Agent{}, testEst)
	build := func(n int) *Request {
		return request(append(coretest.History(n, 400), userMsg("fix the failing test"))...)
	}
	// fits is the smallest history over the trigger: it fits the window.
	fits := 1
	for cal.Count(requestTokens(testEst, engineReq(build(fits)))) <= lim.Threshold {
		fits++
	}
	require.Less(t, cal.Count(requestTokens(testEst, engineReq(build(fits)))), lim.Room(), "test setup: over the trigger, within the window")
	overTrigger := func(n int) *Request { return build(n) }
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
			g := newGuard(NewCrushRegistry(WithRegistryLogger(quietLogger)), WithLogger(logs.logger()),
				WithBeforeCompaction(func(_ context.Context, p PendingCompaction) CompactionDecision {
					mu.Lock()
					seen = append(seen, p)
					mu.Unlock()
					return tt.decide(p)
				}))
			g.addModel("a", nil, WithSummarizer(rs), WithMaxTokens(win), WithInstructions("Keep every ticket number."))
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

			assert.Equal(t, tt.wantSummaries, ctx.getInt(state.KeyCompactions), "compactions")
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
				Tokens: seen[0].Tokens, Threshold: lim.Threshold, Window: win,
			}, seen[0])
			assert.Greater(t, seen[0].Tokens, lim.Threshold)
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
	var g *Guard
	var inner error
	g = newGuard(NewCrushRegistry(WithRegistryLogger(quietLogger)), WithLogger(quietLogger),
		WithBeforeCompaction(func(ctx context.Context, _ PendingCompaction) CompactionDecision {
			hctx := newFakeCtx("a").withUser("go on")
			hctx.Context = ctx
			_, inner = g.beforeModel(hctx, request(userMsg("go on")))
			return CompactionDecision{}
		}))
	g.addModel("a", fixedSummary("SUMMARY"), WithMaxTokens(8_000))
	require.NoError(t, g.Err())
	_, err := g.beforeModel(newFakeCtx("a").withUser("go on"), request(append(coretest.History(30, 400), userMsg("go on"))...))
	require.NoError(t, err)
	require.Error(t, inner)
	assert.ErrorIs(t, inner, ErrReentrant)
}

// TestSummaryKnobs: WithSummaryTokens sets the length asked of a summary
// (still bounded by the room under the trigger), and WithSummarizerWindow
// the summarizer model's window when the registry does not know it, which
// is otherwise assumed with a warning that names the summarizer's option.
func TestSummaryKnobs(t *testing.T) {
	cal := newCalibration(state.Agent{}, testEst)
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
		{name: "WithSummaryTokens beyond the room under the trigger", window: 32_000, opts: []AgentOption{WithSummaryTokens(31_000)}},
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
			sumModel := &fakeLLM{name: "in-house-summarizer-v2", reply: func(context.Context, *Request) (string, error) { return "SUMMARY", nil }}
			var events []CompactionEvent
			logs := &logBuffer{}
			g := newGuard(NewCrushRegistry(WithRegistryLogger(quietLogger)), WithLogger(logs.logger()),
				WithOnCompaction(func(_ context.Context, e CompactionEvent) { events = append(events, e) }))
			g.addModel("a", sumModel, append([]AgentOption{WithMaxTokens(tt.window)}, tt.opts...)...)
			require.NoError(t, g.Err())
			ctx := newFakeCtx("a").withUser("go on")
			req := request(append(coretest.History(20, 1_000), userMsg("go on"))...)
			_, err := g.beforeModel(ctx, req)
			require.NoError(t, err)
			require.Len(t, events, 1)
			require.Positive(t, sumModel.calls)

			asked := askedWords(t, sumModel.last)
			if tt.wantAsked > 0 {
				assert.InDelta(t, cal.Unscale(tt.wantAsked)*3/4, asked, 2, "words asked")
			}
			lim := window.New(tt.window)
			assert.LessOrEqual(t, asked, cal.Unscale(lim.Threshold)*3/4, "never more than the room under the trigger")
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
func askedWords(t *testing.T, req *Request) int {
	t.Helper()
	require.NotNil(t, req)
	text := textcut.ContentText(req.Config.SystemInstruction)
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

// TestBeforeCompaction_RequestedCompaction: the hook is asked about a
// requested compaction too (Reason "requested"), and the summary prompt's
// instructions come in order: the agent's, the request's focus, the hook's.
func TestBeforeCompaction_RequestedCompaction(t *testing.T) {
	var reasons []string
	rs := &recordingSummarizer{reply: func(int, SummaryRequest) (string, error) { return "SUMMARY", nil }}
	g := newGuard(NewCrushRegistry(WithRegistryLogger(quietLogger)), WithLogger(quietLogger),
		WithBeforeCompaction(func(_ context.Context, p PendingCompaction) CompactionDecision {
			reasons = append(reasons, p.Reason)
			return CompactionDecision{Instructions: "HOOK: keep the stack trace."}
		}))
	g.addModel("a", nil, WithSummarizer(rs), WithMaxTokens(200_000), WithInstructions("AGENT: keep ticket numbers."))
	require.NoError(t, g.Err())
	ctx := newFakeCtx("a").withUser("go on")
	require.NoError(t, g.RequestCompactionInState(ctx.State(), "a", "the failing test"))

	_, err := g.beforeModel(ctx, request(append(coretest.History(6, 300), userMsg("go on"))...))
	require.NoError(t, err)

	assert.Equal(t, []string{ReasonRequested}, reasons)
	require.Len(t, rs.requests(), 1)
	got := rs.requests()[0].Instructions
	agentAt, focusAt, hookAt := strings.Index(got, "AGENT:"), strings.Index(got, "the failing test"), strings.Index(got, "HOOK:")
	require.True(t, agentAt >= 0 && focusAt >= 0 && hookAt >= 0, "all three instructions: %q", got)
	assert.Less(t, agentAt, focusAt)
	assert.Less(t, focusAt, hookAt)
}

// TestBeforeCompaction_HookTimesOut: a hook that ignores its context is
// bounded by the summary timeout on the guard's clock: the guard stops
// waiting once the clock passes it, logs the failure and compacts as
// configured, without the hook's instructions. The hook is released at the
// end and no goroutine is left.
func TestBeforeCompaction_HookTimesOut(t *testing.T) {
	baseline := runtime.NumGoroutine()
	clock := coretest.NewFakeClock(time.Time{})
	release := make(chan struct{})
	rs := &recordingSummarizer{reply: func(int, SummaryRequest) (string, error) { return "SUMMARY", nil }}
	logs := &logBuffer{}
	g := newGuard(NewCrushRegistry(WithRegistryLogger(quietLogger)), WithLogger(logs.logger()), WithClock(clock),
		WithBeforeCompaction(func(context.Context, PendingCompaction) CompactionDecision {
			clock.Advance(testSummaryTimeout) // the guard's timer was armed before the hook ran
			<-release                         // the context is deliberately ignored
			return CompactionDecision{Skip: true, Instructions: "LATE-INSTRUCTIONS"}
		}))
	g.addModel("a", nil, WithSummarizer(rs), WithMaxTokens(8_000), WithSummaryTimeout(testSummaryTimeout))
	require.NoError(t, g.Err())
	ctx := newFakeCtx("a").withUser("go on")

	var err error
	finishes(t, "BeforeModelCallback", func() {
		_, err = g.beforeModel(ctx, request(append(coretest.History(30, 400), userMsg("go on"))...))
	})
	close(release)
	require.NoError(t, err)
	assert.Contains(t, logs.String(), "the before-compaction hook failed")
	assert.Contains(t, logs.String(), "summary timeout")
	assert.Equal(t, 1, ctx.getInt(state.KeyCompactions), "the compaction ran as configured")
	for _, r := range rs.requests() {
		assert.NotContains(t, r.Instructions, "LATE-INSTRUCTIONS")
	}
	assert.Zero(t, clock.Timers(), "every timer the guard armed is stopped or fired")
	assert.Zero(t, coretest.GoroutinesLeft(baseline), "the hook's goroutine ends once released")
}
