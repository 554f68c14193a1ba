package core

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/coretest"

	"github.com/adk-contextguard/contextguard/core/internal/convo"
	"github.com/adk-contextguard/contextguard/core/internal/sat"
	"github.com/adk-contextguard/contextguard/core/internal/state"
	"github.com/adk-contextguard/contextguard/core/internal/window"
)

// fakeAppender is a session service for WithSessionService: it records the
// deltas appended, or fails with err.
type fakeAppender struct {
	mu     sync.Mutex
	deltas []map[string]any
	err    error
}

func (f *fakeAppender) AppendState(_ context.Context, app, user, session string, delta map[string]any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if app == "" || user == "" || session == "" {
		return errors.New("missing IDs")
	}
	if f.err != nil {
		return f.err
	}
	f.deltas = append(f.deltas, delta)
	return nil
}

// betweenTurnsWindow is the window of the scenarios: small, so a few
// exchanges bring the session near the trigger.
const betweenTurnsWindow = 8_000

// nearTrigger is a history ending with the user's request of the turn
// that just ran: the smallest one whose next turn would probably reach
// the trigger (its final response and a message like the user's last one
// added, with betweenTurnsMargin), though the request itself does not.
func nearTrigger(t *testing.T, final *genai.Content, ask string) []*genai.Content {
	t.Helper()
	lim := window.New(betweenTurnsWindow)
	cal := newCalibration(state.Agent{}, testEst)
	build := func(n int) []*genai.Content { return append(coretest.History(n, 400), userMsg(ask)) }
	for n := 1; n < 100; n++ {
		raw := build(n)
		next := append(append(append([]*genai.Content(nil), raw...), final), userMsg(ask))
		if sat.Scale(cal.Count(requestTokens(testEst, engineReq(request(next...)))), betweenTurnsMargin) > lim.Threshold {
			require.LessOrEqual(t, cal.Count(requestTokens(testEst, engineReq(request(raw...)))), lim.Threshold, "test setup: the run's own request stays under the trigger")
			return raw
		}
	}
	t.Fatal("test setup: no history reaches the trigger")
	return nil
}

// TestBetweenTurns plays a run whose last request leaves the session near
// the trigger, the run's end (AfterRun), and the next run's first request:
// each scenario says whether the compaction runs between the turns, where
// its state goes, and that the next request then starts compacted with the
// user's new message whole after the summary.
func TestBetweenTurns(t *testing.T) {
	final := modelMsg("FINAL-ANSWER: the failing test is fixed.")
	tests := []struct {
		name string
		opts []AgentOption
		// appender is the session service (nil: none); replica plays the
		// next run on another guard over the same session state.
		appender *fakeAppender
		replica  bool
		// far plays a short history, far from the trigger.
		far bool
		// end changes what the run's end reports.
		end func(*RunEnd)
		// prepare changes the session state before the run ends.
		prepare func(*fakeCtx)
		// wantBetween says the compaction runs between the turns; else the
		// next run's first request is as it was built, and compacts inline
		// only if it must.
		wantBetween bool
		wantLog     string
	}{
		{name: "persisted with the session service and applied by another replica",
			appender: &fakeAppender{}, replica: true, wantBetween: true,
			wantLog: "compacting between turns"},
		{name: "without a session service, the next call in this process applies it from memory",
			wantBetween: true, wantLog: "applying the compaction made between turns"},
		{name: "a session service that fails: kept in memory for the next call",
			appender: &fakeAppender{err: errors.New("database is down")}, wantBetween: true,
			wantLog: "persisting the compaction made between turns failed"},
		{name: "the sliding window's turn budget is spent by the next turn",
			opts: []AgentOption{WithSlidingWindow(4)}, far: true, wantBetween: true, wantLog: "reason=turns"},
		{name: "far from the trigger: nothing to do", far: true},
		{name: "switched off by WithBetweenTurns(BetweenTurnsOff)", opts: []AgentOption{WithBetweenTurns(BetweenTurnsOff)}},
		{name: "the run ended with a tool call", end: func(e *RunEnd) { e.Final = callMsg("run_tests", nil) },
			wantLog: "the run ended with a tool call or result"},
		{name: "the run ended with another agent's message", end: func(e *RunEnd) { e.FinalAuthor = "b" },
			wantLog: "the run did not end with the agent's response"},
		{name: "something came between the last request and the final response",
			end:     func(e *RunEnd) { e.Before = modelMsg("an event the request did not hold") },
			wantLog: "does not continue the last request"},
		{name: "a requested compaction stays for the next model call",
			prepare: func(c *fakeCtx) { c.set(state.KeyCompactRequest, true) }},
		{name: "the run's context is done: left to the next model call",
			prepare: func(c *fakeCtx) {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				c.withContext(ctx)
			}},
		{name: "a session switched off is not compacted",
			prepare: func(c *fakeCtx) { require.NoError(t, c.state.Set(StateKeyDisabled, true)) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			baseline := runtime.NumGoroutine()
			sum := fixedSummary("SUMMARY of the fix so far.")
			var events []CompactionEvent
			logs := &logBuffer{}
			opts := []Option{WithLogger(logs.logger()), WithOnCompaction(func(_ context.Context, ev CompactionEvent) { events = append(events, ev) })}
			if tt.appender != nil {
				opts = append(opts, WithSessionService(tt.appender))
			}
			newG := func() *Guard {
				g := newGuard(NewCrushRegistry(WithRegistryLogger(logs.logger())), opts...)
				g.addModel("a", sum, append([]AgentOption{WithMaxTokens(betweenTurnsWindow)}, tt.opts...)...)
				require.NoError(t, g.Err())
				return g
			}
			g := newG()
			ctx := newFakeCtx("a").withUser("fix the failing test")
			raw := nearTrigger(t, final, "fix the failing test")
			if tt.far {
				raw = append(coretest.History(3, 900), userMsg("fix the failing test"))
			}
			req := request(raw...)
			_, err := g.beforeModel(ctx, req)
			require.NoError(t, err)
			require.Empty(t, events, "the run's own request is under the trigger")
			if tt.prepare != nil {
				tt.prepare(ctx)
			}
			end := RunEnd{State: ctx.state, Final: final, FinalAuthor: "a", Before: raw[len(raw)-1]}
			if tt.end != nil {
				tt.end(&end)
			}

			g.AfterRun(ctx, end)

			if !tt.wantBetween {
				assert.Empty(t, events, "no compaction between turns")
				assert.Zero(t, sum.Calls())
				assert.Contains(t, logs.String(), tt.wantLog)
				return
			}
			require.Len(t, events, 1, "one compaction between turns")
			ev := events[0]
			assert.Equal(t, RanBetweenTurns, ev.Ran)
			assert.Zero(t, ev.Waited, "no model call waited for it")
			assert.False(t, ev.Discarded)
			assert.Contains(t, logs.String(), "ran=between_turns")
			calls := sum.Calls()
			assert.Positive(t, calls)

			if tt.appender != nil && tt.appender.err == nil {
				require.Len(t, tt.appender.deltas, 1, "the compaction's state is appended to the session")
				assert.Contains(t, tt.appender.deltas[0], state.KeySummary+"a")
				assert.Contains(t, tt.appender.deltas[0], keyPrefix+"a", "the prefix record of the uncompacted request is cleared")
				for k, v := range tt.appender.deltas[0] {
					require.NoError(t, ctx.state.Set(k, v))
				}
			}
			if tt.replica {
				g = newG()
			}

			// The next run: ADK's history grew by the final response and the
			// user's new message.
			next := ctx.withUser("now add a regression test")
			nextReq := request(append(append(append([]*genai.Content(nil), raw...), final), next.user)...)
			_, err = g.beforeModel(next, nextReq)
			require.NoError(t, err)
			assert.Len(t, events, 1, "the next request is not compacted inline")
			assert.Equal(t, calls, sum.Calls(), "no summarizer call in the next model call")
			require.GreaterOrEqual(t, len(nextReq.Contents), 2)
			assert.True(t, isSummaryMessage(nextReq.Contents[0]), "the request starts with the summary")
			assert.NotContains(t, nextReq.Contents[0].Parts[0].Text, "<user_request>", "the summary quotes no request: the next one follows it")
			assert.Same(t, next.user, nextReq.Contents[len(nextReq.Contents)-1], "the user's new message whole, after the summary")
			assert.Equal(t, 1, ctx.getInt(state.KeyCompactions), "the compaction is in the session state")
			assert.Contains(t, logs.String(), tt.wantLog)
			assert.Zero(t, coretest.GoroutinesLeft(baseline), "no goroutine left")
		})
	}
}

// TestBetweenTurns_NotSmallerIsNotRetried: a compaction between turns that
// does not shrink the request (a summary as long as what it replaces) is
// discarded, and the next run's end does not pay for it again while the
// conversation has not outgrown it.
func TestBetweenTurns_NotSmallerIsNotRetried(t *testing.T) {
	final := modelMsg("FINAL-ANSWER: done.")
	raw := nearTrigger(t, final, "fix the failing test")
	sum := fixedSummary(strings.Repeat("a summary as long as the history ", 800))
	var events []CompactionEvent
	g, _ := newTestGuard(t, sum, WithMaxTokens(betweenTurnsWindow))
	g.hook = func(_ context.Context, ev CompactionEvent) { events = append(events, ev) }
	ctx := newFakeCtx("a").withUser("fix the failing test")
	for range 2 {
		_, err := g.beforeModel(ctx, request(raw...))
		require.NoError(t, err)
		g.AfterRun(ctx, RunEnd{State: ctx.state, Final: final, FinalAuthor: "a", Before: raw[len(raw)-1]})
	}
	require.Len(t, events, 1, "tried once")
	assert.True(t, events[0].Discarded)
	assert.Equal(t, RanBetweenTurns, events[0].Ran)
}

// TestBetweenTurns_Options: the policy and the session service are
// validated.
func TestBetweenTurns_Options(t *testing.T) {
	tests := []struct {
		name    string
		opt     Option
		agent   AgentOption
		wantErr string
	}{
		{name: "when due", agent: WithBetweenTurns(BetweenTurnsWhenDue)},
		{name: "off", agent: WithBetweenTurns(BetweenTurnsOff)},
		{name: "an unknown policy", agent: WithBetweenTurns("always"), wantErr: `WithBetweenTurns("always")`},
		{name: "a session service", opt: WithSessionService(&fakeAppender{})},
		{name: "a nil session service", opt: WithSessionService(nil), wantErr: "WithSessionService: the session service is nil"},
		{name: "a typed nil session service", opt: WithSessionService((*fakeAppender)(nil)), wantErr: "WithSessionService"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var opts []Option
			if tt.opt != nil {
				opts = append(opts, tt.opt)
			}
			g := newGuard(nil, opts...)
			var agentOpts []AgentOption
			if tt.agent != nil {
				agentOpts = append(agentOpts, tt.agent)
			}
			g.addModel("a", fixedSummary("s"), agentOpts...)
			if tt.wantErr == "" {
				assert.NoError(t, g.Err())
				return
			}
			assert.ErrorContains(t, g.Err(), tt.wantErr)
		})
	}
}

// TestBetweenTurns_NothingToCompact: a run's end without a guarded call,
// with a nil call, or for a nil guard does nothing.
func TestBetweenTurns_NothingToCompact(t *testing.T) {
	g, _ := newTestGuard(t, fixedSummary("s"))
	ctx := newFakeCtx("a")
	assert.NotPanics(t, func() { g.AfterRun(ctx, RunEnd{}) })
	assert.NotPanics(t, func() { g.AfterRun(nil, RunEnd{}) })
	assert.NotPanics(t, func() { (*Guard)(nil).AfterRun(ctx, RunEnd{}) })
}

// TestBetweenTurns_LastCallAccounted: the request kept from a run's last
// guarded call to the run's end is accounted in the session table's bytes
// (WithMaxSessionBytes), and let go when the run ends.
func TestBetweenTurns_LastCallAccounted(t *testing.T) {
	g, _ := newTestGuard(t, fixedSummary("s"), WithMaxTokens(100_000))
	ctx := newFakeCtx("a").withUser("go on")
	raw := append(coretest.History(10, 2_000), userMsg("go on"))
	_, err := g.beforeModel(ctx, request(raw...))
	require.NoError(t, err)
	during := g.sessions.bytes
	g.AfterRun(ctx, RunEnd{State: ctx.state})
	after := g.sessions.bytes
	assert.Greater(t, during-after, len(requestText(request(raw...))), "the kept request is accounted until the run ends")
}

// cancellingSummarizer ends the run's context while it summarizes, as a
// caller that goes away during the compaction does.
type cancellingSummarizer struct{ cancel context.CancelFunc }

func (s cancellingSummarizer) Summarize(context.Context, SummaryRequest) (string, error) {
	s.cancel()
	return "SUMMARY written as the caller left.", nil
}

// TestBetweenTurns_ContextEndsDuringTheCompaction: a compaction between
// turns whose run's context ends while it runs is not kept (its summary
// may be the fallback one): nothing is appended or remembered, and the
// next model call compacts as it would have.
func TestBetweenTurns_ContextEndsDuringTheCompaction(t *testing.T) {
	final := modelMsg("FINAL-ANSWER: done.")
	raw := nearTrigger(t, final, "fix the failing test")
	runCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	appender := &fakeAppender{}
	var events []CompactionEvent
	g := newGuard(nil, WithLogger(quietLogger), WithSessionService(appender),
		WithOnCompaction(func(_ context.Context, ev CompactionEvent) { events = append(events, ev) }))
	g.Add("a", cancellingSummarizer{cancel: cancel}, nil, WithMaxTokens(betweenTurnsWindow))
	require.NoError(t, g.Err())
	ctx := newFakeCtx("a").withUser("fix the failing test").withContext(runCtx)
	_, err := g.beforeModel(ctx, request(raw...))
	require.NoError(t, err)

	g.AfterRun(ctx, RunEnd{State: ctx.state, Final: final, FinalAuthor: "a", Before: raw[len(raw)-1]})

	assert.Empty(t, events)
	assert.Empty(t, appender.deltas)
	next := newFakeCtx("a").withUser("now add a regression test")
	next.state = ctx.state
	nextReq := request(append(append(append([]*genai.Content(nil), raw...), final), next.user)...)
	_, err = g.beforeModel(next, nextReq)
	require.NoError(t, err)
	assert.False(t, isSummaryMessage(nextReq.Contents[0]), "nothing was kept for the next call")
}

// TestBetweenTurns_SlidingWindowKeepsWhatTheModelCallWould: a sliding
// window over short exchanges, each run one model call. The user's next
// message is one of the turns the next request keeps, so the compaction
// made at a run's end keeps one turn fewer of the run's own (none, when the
// window keeps one turn): every compaction the turn budget calls for runs
// between turns, and the next request holds the newest keepTurns turns
// verbatim after the summary, as it would had the model call compacted.
func TestBetweenTurns_SlidingWindowKeepsWhatTheModelCallWould(t *testing.T) {
	const runs = 24
	for _, maxTurns := range []int{4, 2} {
		t.Run(fmt.Sprintf("%d turns, %d kept", maxTurns, keepTurns(maxTurns)), func(t *testing.T) {
			baseline := runtime.NumGoroutine()
			sum := fixedSummary("SUMMARY of the questions so far.")
			var events []CompactionEvent
			g := newGuard(NewCrushRegistry(WithRegistryLogger(quietLogger)), WithLogger(quietLogger),
				WithOnCompaction(func(_ context.Context, ev CompactionEvent) { events = append(events, ev) }))
			g.addModel("a", sum, WithMaxTokens(betweenTurnsWindow), WithSlidingWindow(maxTurns))
			require.NoError(t, g.Err())
			ctx := newFakeCtx("a")
			var raw []*genai.Content
			checked, compactedAtEnd := 0, false
			for run := range runs {
				ctx.withUser(fmt.Sprintf("QUESTION-%d %s", run, fillerOf(150, run)))
				raw = append(raw, ctx.user)
				req := request(raw...)
				seen := len(events)
				_, err := g.beforeModel(ctx, req)
				require.NoError(t, err)
				require.Len(t, events, seen, "run %d: no compaction in the model call", run)
				if compactedAtEnd {
					require.True(t, isSummaryMessage(req.Contents[0]), "run %d: the request starts with the summary", run)
					assert.Equal(t, keepTurns(maxTurns), countTurns(req.Contents), "run %d: turns kept verbatim after the summary", run)
					assert.Same(t, ctx.user, req.Contents[len(req.Contents)-1], "run %d: the user's message whole", run)
					checked++
				}
				final := modelMsg(fmt.Sprintf("ANSWER-%d %s", run, fillerOf(150, run+runs)))
				g.AfterRun(ctx, RunEnd{State: ctx.state, Final: final, FinalAuthor: "a", Before: ctx.user})
				compactedAtEnd = len(events) > seen
				raw = append(raw, final)
			}
			require.GreaterOrEqual(t, len(events), 3, "the turn budget calls for several compactions")
			for i, ev := range events {
				assert.Equal(t, RanBetweenTurns, ev.Ran, "compaction %d", i)
				assert.Equal(t, ReasonTurns, ev.Reason, "compaction %d", i)
			}
			assert.Equal(t, len(events)-btoi(compactedAtEnd), checked, "every request after a compaction between turns was checked")
			require.NoError(t, g.Close())
			assert.Zero(t, coretest.GoroutinesLeft(baseline), "no goroutine left")
		})
	}
}

// countTurns counts the turns of cs: the messages the user wrote, not the
// summary message.
func countTurns(cs []*genai.Content) int {
	n := 0
	for _, c := range cs {
		if convo.IsUserMessage(c) && !isSummaryMessage(c) {
			n++
		}
	}
	return n
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// toolStepsNearTrigger is a turn of tool steps, each a call and a result
// of stepTokens, whose request stays under the trigger while the next
// turn's first request (the final response and a message like the user's
// added, with betweenTurnsMargin) would reach it unpruned.
func toolStepsNearTrigger(t *testing.T, final *genai.Content, ask string, stepTokens int) []*genai.Content {
	t.Helper()
	lim := window.New(betweenTurnsWindow)
	cal := newCalibration(state.Agent{}, testEst)
	raw := []*genai.Content{userMsg(ask)}
	for i := range 40 {
		next := append(append(append([]*genai.Content(nil), raw...), final), userMsg(ask))
		if sat.Scale(cal.Count(requestTokens(testEst, engineReq(request(next...)))), betweenTurnsMargin) > lim.Threshold {
			require.LessOrEqual(t, cal.Count(requestTokens(testEst, engineReq(request(raw...)))), lim.Threshold, "test setup: the run's own request stays under the trigger")
			return raw
		}
		raw = append(raw, callMsg("read_file", map[string]any{"path": fmt.Sprintf("f%d.go", i)}),
			respMsg("read_file", map[string]any{"content": fmt.Sprintf("STEP-%d ", i) + fillerOf(stepTokens, i)}))
	}
	t.Fatal("test setup: no history reaches the trigger")
	return nil
}

// prunedResults counts the function responses of cs that hold a pruning
// placeholder.
func prunedResults(cs []*genai.Content) int {
	n := 0
	for _, c := range cs {
		for _, p := range c.Parts {
			if p != nil && p.FunctionResponse != nil && p.FunctionResponse.Response[prunedKey] != nil {
				n++
			}
		}
	}
	return n
}

// TestBetweenTurns_PruningReachesTheNextRequest: a run ends near the
// trigger with old tool results that pruning alone takes back under it.
// The compaction between turns is that pruning pass, reported to the hook;
// the next run's first request carries it (the results pruned, no second
// compaction), whether its frontier reaches that request through the
// session service or from the guard's memory of the session.
func TestBetweenTurns_PruningReachesTheNextRequest(t *testing.T) {
	final := modelMsg("FINAL-ANSWER: the files are read.")
	for _, tc := range []struct {
		name     string
		appender *fakeAppender
	}{
		{name: "without a session service, from memory"},
		{name: "persisted with the session service", appender: &fakeAppender{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sum := fixedSummary("SUMMARY of the files read.")
			var events []CompactionEvent
			opts := []Option{WithLogger(quietLogger), WithOnCompaction(func(_ context.Context, ev CompactionEvent) { events = append(events, ev) })}
			if tc.appender != nil {
				opts = append(opts, WithSessionService(tc.appender))
			}
			g := newGuard(NewCrushRegistry(WithRegistryLogger(quietLogger)), opts...)
			g.addModel("a", sum, WithMaxTokens(betweenTurnsWindow), WithToolResultPruning(1))
			require.NoError(t, g.Err())
			ctx := newFakeCtx("a").withUser("read the files")
			raw := toolStepsNearTrigger(t, final, "read the files", 300)
			_, err := g.beforeModel(ctx, request(raw...))
			require.NoError(t, err)
			require.Empty(t, events, "the run's own request is under the trigger")

			g.AfterRun(ctx, RunEnd{State: ctx.state, Final: final, FinalAuthor: "a", Before: raw[len(raw)-1]})

			require.Len(t, events, 1, "one compaction between turns")
			ev := events[0]
			assert.Equal(t, StrategyToolResultPruning, ev.Strategy)
			assert.Equal(t, RanBetweenTurns, ev.Ran)
			assert.Less(t, ev.TokensAfter, ev.TokensBefore)
			assert.Zero(t, sum.Calls(), "pruning calls no summarizer")
			if tc.appender != nil {
				require.Len(t, tc.appender.deltas, 1)
				for k, v := range tc.appender.deltas[0] {
					require.NoError(t, ctx.state.Set(k, v))
				}
			}

			next := ctx.withUser("now summarize them")
			nextReq := request(append(append(append([]*genai.Content(nil), raw...), final), next.user)...)
			_, err = g.beforeModel(next, nextReq)
			require.NoError(t, err)
			assert.Len(t, events, 1, "the next request is not compacted again")
			assert.Positive(t, prunedResults(nextReq.Contents), "the pruning reported between turns reaches the next request")
			assert.Equal(t, prunedResults(nextReq.Contents), ctx.getInt(state.KeyPruneFrontier), "every step up to the frontier pruned")
		})
	}
}

// TestBetweenTurns_PreparedSummaryRunsBetweenTurns: a summary prepared
// while the run's last tools ran serves the compaction made once the run
// ends. The event says when it ran (between turns: no model call waited)
// and, apart, that its summary was prepared; so does the log line.
func TestBetweenTurns_PreparedSummaryRunsBetweenTurns(t *testing.T) {
	baseline := runtime.NumGoroutine()
	logs := &logBuffer{}
	s := newToolSession(t, newCtl(gateAnswer), WithLogger(logs.logger()))
	// Steps until a summary is being prepared while the step's tool runs;
	// that tool's result is small, so the run's last request stays under
	// the trigger.
	for range 40 {
		s.request(t)
		call := s.answer(t)
		if p := s.prepared(); p != nil {
			s.appendResult(call, 10)
			waitUntil(t, "the prepared summary is written", p.ready)
			break
		}
		s.appendResult(call, s.stepTokens)
	}
	require.NotNil(t, s.prepared(), "test setup: a summary is prepared")
	ran := s.request(t)
	require.Empty(t, s.events, "test setup: the run's last request is under the trigger")
	require.NotNil(t, s.prepared(), "test setup: the prepared summary outlives the run's last request")
	final := modelMsg("FINAL-ANSWER: the build is fixed.")
	_, err := s.g.afterModel(s.ctx, &Response{Content: final}, nil)
	require.NoError(t, err)

	s.g.AfterRun(s.ctx, RunEnd{State: s.ctx.state, Final: final, FinalAuthor: "a", Before: ran.Contents[len(ran.Contents)-1]})

	require.NotEmpty(t, s.events)
	ev := s.events[len(s.events)-1]
	assert.Equal(t, RanBetweenTurns, ev.Ran, "made between turns")
	assert.True(t, ev.Prepared, "from the summary prepared while the tools ran")
	assert.Zero(t, ev.Waited, "no model call waited for it")
	assert.Contains(t, logs.String(), "ran=between_turns prepared=true")
	s.finish(t, baseline)
}

// TestBetweenTurns_UsageResetsTheProviderCounts: after a compaction
// between turns, Usage shows the compacted request's count with neither
// the provider's count nor its cached count of the request before it.
func TestBetweenTurns_UsageResetsTheProviderCounts(t *testing.T) {
	final := modelMsg("FINAL-ANSWER: the failing test is fixed.")
	app := &fakeAppender{}
	logs := &logBuffer{}
	g := newGuard(NewCrushRegistry(WithRegistryLogger(quietLogger)), WithLogger(logs.logger()), WithSessionService(app))
	g.addModel("a", fixedSummary("SUMMARY of the fix so far."), WithMaxTokens(betweenTurnsWindow))
	require.NoError(t, g.Err())
	ctx := newFakeCtx("a").withUser("fix the failing test")
	raw := nearTrigger(t, final, "fix the failing test")
	_, err := g.beforeModel(ctx, request(raw...))
	require.NoError(t, err)
	// The provider counts what the guard counted: nothing to learn.
	prompt := ctx.getInt(state.KeyLastTokens)
	_, err = g.afterModel(ctx, &Response{Content: final, UsageMetadata: &genai.GenerateContentResponseUsageMetadata{
		PromptTokenCount: int32(prompt), CachedContentTokenCount: int32(prompt / 2)}}, nil)
	require.NoError(t, err)
	before, err := g.UsageFromState(ctx.state, "a")
	require.NoError(t, err)
	require.Equal(t, prompt/2, before.CachedTokens, "test setup: the provider's cached count is recorded")
	require.Positive(t, before.ProviderTokens, "test setup: the provider's count is believed")

	g.AfterRun(ctx, RunEnd{State: ctx.state, Final: final, FinalAuthor: "a", Before: raw[len(raw)-1]})

	require.Len(t, app.deltas, 1, "a compaction between turns is persisted: %s", logs.String())
	for k, v := range app.deltas[0] {
		require.NoError(t, ctx.state.Set(k, v))
	}
	after, err := g.UsageFromState(ctx.state, "a")
	require.NoError(t, err)
	assert.Equal(t, 1, after.Compactions)
	assert.Less(t, after.Tokens, before.Tokens, "the compacted request's count")
	assert.Zero(t, after.ProviderTokens)
	assert.Zero(t, after.CachedTokens, "reset with ProviderTokens")
}
