package core

import (
	"context"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/coretest"
	"github.com/adk-contextguard/contextguard/core/internal/calib"
	"github.com/adk-contextguard/contextguard/core/internal/state"
	"github.com/adk-contextguard/contextguard/core/internal/window"
)

// When a summary is prepared (noteGrowth), on the tool-heavy
// sessions of prepared_summary_test.go.

// TestPrepared_InlineReason: a compaction for tokens that runs inline says
// why no prepared summary served it, and one that used a prepared summary
// or ran for another reason says nothing.
func TestPrepared_InlineReason(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []Option
		// sizes are the tool results' sizes, step by step, repeated.
		sizes []int
		// charge is the provider's count of each request as a multiple of
		// the guard's estimate, 0 for responses that report no usage.
		charge float64
		// ran and want are the first compaction's.
		ran  CompactionRun
		want InlineReason
	}{
		{name: "steps alike: prepared", sizes: []int{preparedStepTokens}, ran: RanPrepared, want: ""},
		{name: "prepared summaries off", opts: []Option{WithPreparedSummaries(PreparedSummariesOff)},
			sizes: []int{preparedStepTokens}, ran: RanInline, want: InlineNotPrepared},
		{name: "a step far larger than the recent ones", sizes: []int{400, 400, 400, 400, 400, 400, 400, 400, 4_000},
			ran: RanInline, want: InlineNotPredicted},
		// Six steps of 250, then one of 1,800: the request reaches the
		// trigger with the second large step, seven steps after the first.
		// The provider charges what the guard estimates, so that only the
		// growth decides when the summary is prepared.
		{name: "a large step that comes back every seventh step: prepared", charge: 1,
			sizes: []int{250, 250, 250, 250, 250, 250, 1_800}, ran: RanPrepared, want: ""},
		{name: "a step that leaves no room beside a summary: prepared all the same", sizes: []int{2_500}, ran: RanPrepared, want: ""},
		{name: "a step too large for a summary beside it", sizes: []int{5_000}, ran: RanInline, want: InlineStepTooLarge},
		// A result past the threshold by itself: no summary, however
		// short, leaves it room, whatever the steps before predicted.
		{name: "a step that fills the window by itself", sizes: []int{7_500}, ran: RanInline, want: InlineStepFillsWindow},
		{name: "a step that fills the window after small ones", sizes: []int{400, 400, 400, 400, 7_500}, ran: RanInline, want: InlineStepFillsWindow},
	} {
		t.Run(tc.name, func(t *testing.T) {
			baseline := runtime.NumGoroutine()
			sum := newCtl(gateAnswer)
			s := newToolSession(t, sum, tc.opts...)
			s.charge = tc.charge
			ev := s.untilCompactions(t, 1, func(i int) { s.stepTokens = tc.sizes[i%len(tc.sizes)] })[0]
			require.Equal(t, ReasonTokens, ev.Reason, "a compaction for tokens")
			assert.Equal(t, tc.ran, ev.Ran)
			assert.Equal(t, tc.want, ev.InlineReason)
			s.finish(t, baseline)
		})
	}
}

// TestPrepared_CalibrationIsNotGrowth: a provider that charges three times
// the estimate, from its first report on, makes the second request count
// far more than the first, though only one step was added. The step is what
// the next one is predicted from, so the summary is prepared while the
// tools of the step before the trigger run, and covers all but that step,
// not a few steps early, covering less.
func TestPrepared_CalibrationIsNotGrowth(t *testing.T) {
	baseline := runtime.NumGoroutine()
	sum := newCtl(gateAnswer)
	s := newToolSession(t, sum)
	s.charge, s.stepTokens = 3, 300
	s.raw = append(coretest.History(2, 200), s.raw...)
	preparedAt, compactedAt := -1, -1
	for i := range 20 {
		seen := len(s.events)
		s.request(t)
		if len(s.events) > seen {
			compactedAt = i
			break
		}
		s.respond(t)
		if p := s.prepared(); p != nil && preparedAt < 0 {
			preparedAt = i
			waitUntil(t, "the prepared summary is written", p.ready)
		}
	}
	require.Positive(t, compactedAt, "the session compacts")
	ev := s.events[len(s.events)-1]
	assert.Equal(t, RanPrepared, ev.Ran)
	assert.Equal(t, compactedAt-1, preparedAt, "prepared at the step before the compaction")
	s.finish(t, baseline)
}

// TestSentRequest: the request a background summary starts from is the one
// the call let through when it did not compact; a call that compacted keeps
// none.
func TestSentRequest(t *testing.T) {
	raw := []*genai.Content{userMsg("REQ"), modelMsg("a"), userMsg("b"), modelMsg("c")}
	prev := state.Agent{Summary: "old", Watermark: 1, Compactions: 1, Tokens: 900, RealTokens: 800, LastEstimate: 700}
	compacted := state.Agent{Summary: "new", Watermark: 3, Compactions: 2, Tokens: 300, ProviderRatio: 1500}
	sent := []*genai.Content{userMsg("summary"), modelMsg("c")}
	for _, tc := range []struct {
		name string
		s    step
		ok   bool
	}{
		{name: "no compaction: the turn's request", s: step{contents: raw, next: prev}, ok: true},
		{name: "a compaction: none", s: step{contents: sent, next: compacted, event: &CompactionEvent{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTestTurn(request(raw...), prev, quietLogger)
			tr.before, tr.inj, tr.Cal = 5_000, injection{cut: 1, injected: true}, calib.Calibration{Factor: 1.2, Real: 800}
			cand, ok := sentRequest(tr, &tc.s)
			require.Equal(t, tc.ok, ok)
			if !ok {
				return
			}
			assert.Equal(t, raw, cand.req.Contents, "the raw contents")
			assert.Equal(t, tc.s.contents, cand.sent, "the contents sent")
			assert.Equal(t, 5_000, cand.before)
			assert.Equal(t, prev, cand.prev)
			assert.Equal(t, injection{cut: 1, injected: true}, cand.inj)
			assert.InDelta(t, 1.2, cand.cal.Factor, 1e-9, "the turn's calibration")
		})
	}
}

// TestPrepared_InlineReasonOfAnotherAgent: a session holds one prepared
// summary; while it is another agent's, an agent whose compaction runs
// inline had none prepared (not_prepared), not one it could not use.
func TestPrepared_InlineReasonOfAnotherAgent(t *testing.T) {
	baseline := runtime.NumGoroutine()
	sum := newCtl(gateAnswer)
	s := newToolSession(t, sum)
	p := s.untilPrepared(t)
	waitUntil(t, "the prepared summary is written", p.ready)
	s.g.Add("b", sum, nil, WithMaxTokens(preparedWindow), WithSummaryTimeout(testSummaryTimeout), WithSummarizerWindow(128_000))
	require.NoError(t, s.g.Err())
	b := &toolSession{g: s.g, ctx: newFakeCtx("b").withUser("REQ-MARK b"), clock: s.clock, sum: sum, stepTokens: preparedStepTokens,
		raw: []*genai.Content{userMsg("REQ-MARK b")}}
	var ev CompactionEvent
	for range 40 {
		b.request(t)
		if e, ok := s.lastEvent(); ok {
			ev = e
			break
		}
		b.respond(t)
	}
	require.Equal(t, "b", ev.Agent, "agent b compacted")
	assert.Equal(t, RanInline, ev.Ran)
	assert.Equal(t, InlineNotPrepared, ev.InlineReason)
	assert.Same(t, p, s.prepared(), "agent a's summary still waits for a")
	s.finish(t, baseline)
}

// Starting a prepared summary (prepared_start.go): what it covers, when its
// request fits, and a background summarizer that fails, hangs, panics or
// ignores its context.

// TestPrepared_SummarizerFaults: a background summarizer that fails,
// panics, or hangs past the summary timeout takes the fallback summary, as
// an inline compaction does; the compaction uses it without another call,
// and nothing is left running.
func TestPrepared_SummarizerFaults(t *testing.T) {
	for _, tc := range []struct {
		name   string
		behave gateBehaviour
		reason string
	}{
		{"fails", gateFail, "boom"},
		{"panics", gatePanic, "panicked"},
		{"hangs", gateHang, "summary timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			baseline := runtime.NumGoroutine()
			sum := newCtl(tc.behave)
			s := newToolSession(t, sum)
			p := s.untilPrepared(t)
			sum.waitEntered(t)
			if tc.behave == gateHang {
				ctx, cancel := context.WithTimeout(context.Background(), hangBound)
				defer cancel()
				require.NoError(t, s.clock.WaitTimers(ctx, 1))
				s.clock.Advance(testSummaryTimeout)
			}
			waitUntil(t, "the prepared summary is written", p.ready)

			ev, req := s.untilCompaction(t)
			assert.Equal(t, RanPrepared, ev.Ran)
			assert.True(t, ev.Fallback)
			assert.Contains(t, ev.FallbackReason, tc.reason)
			assert.Equal(t, 1, sum.Calls())
			assert.Contains(t, requestText(req), "REQ-MARK", "the user's request is carried")
			s.finish(t, baseline)
		})
	}
}

// TestPreparedFits: a prepared summary's request is sent under the trigger,
// and past it (the step kept verbatim) while it stays halfway to the room
// and frees at least a summary's length.
func TestPreparedFits(t *testing.T) {
	lim := window.New(preparedWindow) // threshold 6,400, halfway to the window 7,200
	const budget = 800
	for _, tc := range []struct {
		name      string
		n, before int
		// output is the request's MaxOutputTokens, 0 for none.
		output int
		want   bool
	}{
		{name: "under the trigger", n: 6_400, before: 6_500, want: true},
		{name: "past the trigger, halfway to the room, freeing a summary's length", n: 7_200, before: 8_000, want: true},
		{name: "past halfway to the room", n: 7_201, before: 20_000},
		{name: "past the trigger, freeing less than a summary's length", n: 6_500, before: 7_299},
		// 6,600 fits halfway to the window (7,200), not with an output of
		// 1,500: the threshold drops to 6,244 and halfway to the room
		// (6,500) is 6,372.
		{name: "an output limit lowers the room", n: 6_600, before: 9_000, output: 1_500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := lim
			if tc.output > 0 {
				var ok bool
				l, ok = lim.WithOutput(tc.output)
				require.True(t, ok)
			}
			assert.Equal(t, tc.want, preparedFits(l, tc.n, tc.before, budget))
		})
	}
}

// TestPrepared_PastTheTriggerByTheStep: a step far larger than the recent
// ones arrives after its summary was prepared. The summary and the step,
// verbatim, are past the trigger but within halfway to the room, so the
// compaction uses the prepared summary rather than summarizing the step in
// the model call; it sets no irreducible floor, and the next request
// compacts again.
func TestPrepared_PastTheTriggerByTheStep(t *testing.T) {
	baseline := runtime.NumGoroutine()
	sum := newCtl(gateAnswer)
	s := newToolSession(t, sum)
	big := false
	var first CompactionEvent
	for range 40 {
		seen := len(s.events)
		s.request(t)
		if len(s.events) > seen {
			first = s.events[seen]
			break
		}
		call := s.answer(t)
		size := 400
		if p := s.prepared(); p != nil && !big {
			waitUntil(t, "the prepared summary is written", p.ready)
			size, big = 6_600, true
		}
		s.appendResult(call, size)
	}
	require.True(t, big, "a summary was prepared")
	require.Equal(t, ReasonTokens, first.Reason)
	assert.Equal(t, RanPrepared, first.Ran)
	assert.Zero(t, first.Waited)
	assert.Greater(t, first.TokensAfter, first.Threshold, "the step kept verbatim is past the trigger")
	assert.LessOrEqual(t, first.TokensAfter, window.New(preparedWindow).HalfwayToRoom(first.Threshold))
	assert.Zero(t, s.ctx.getInt(state.KeyIrreducibleFloor), "no irreducible floor")

	seen := len(s.events)
	s.respond(t)
	s.request(t)
	require.Greater(t, len(s.events), seen, "the next request compacts again")
	assert.LessOrEqual(t, s.events[len(s.events)-1].TokensAfter, s.events[len(s.events)-1].Threshold)
	s.finish(t, baseline)
}
