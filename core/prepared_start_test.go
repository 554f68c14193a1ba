package core

import (
	"context"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/adk-contextguard/contextguard/core/internal/state"
	"github.com/adk-contextguard/contextguard/core/internal/window"
)

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
