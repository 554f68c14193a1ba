package core

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/coretest"
	"github.com/adk-contextguard/contextguard/core/internal/convo"
	"github.com/adk-contextguard/contextguard/core/internal/estimate"
	"github.com/adk-contextguard/contextguard/core/internal/state"
	"github.com/adk-contextguard/contextguard/core/internal/textcut"
	"github.com/adk-contextguard/contextguard/core/internal/window"
)

// slidingDue builds a history of six turns whose first four (what a
// WithSlidingWindow(4) compaction summarizes) weigh at least span tokens,
// and the user's new request.
func slidingDue(span int) (raw []*genai.Content, user string) {
	cal := newCalibration(state.Agent{}, testEst)
	user = "U6-MARK and now the tests"
	for size := 40; ; size += 20 {
		raw = swHistory(0, 6, size)
		if cal.Scale(estimate.Contents(testEst, raw[:16])) >= span {
			return append(raw, userMsg(user)), user
		}
	}
}

// guardWithEvents is a guard with one agent "a", its events and its log.
func guardWithEvents(t *testing.T, opts ...AgentOption) (*Guard, *[]CompactionEvent, *logBuffer) {
	t.Helper()
	var events []CompactionEvent
	logs := &logBuffer{}
	g := newGuard(NewCrushRegistry(WithRegistryLogger(logs.logger())), WithLogger(logs.logger()),
		WithOnCompaction(func(_ context.Context, e CompactionEvent) { events = append(events, e) }))
	g.addModel("a", nil, opts...)
	require.NoError(t, g.Err())
	return g, &events, logs
}

// TestSlidingWindow_SummaryBoundedBySpan: a turn-triggered sliding-window
// compaction in a 32k window summarizes a span of about 2,300 tokens. The
// summary asked is bounded by half of what the compaction frees, so a
// summarizer that writes exactly the length asked makes the request smaller.
// Before, it was asked for half the buffer (3,200 tokens) and the request
// grew.
func TestSlidingWindow_SummaryBoundedBySpan(t *testing.T) {
	for _, window := range []int{32_000, 128_000} {
		t.Run(fmt.Sprintf("%dk", window/1000), func(t *testing.T) {
			raw, user := slidingDue(2_300)
			rs := &recordingSummarizer{reply: func(_ int, req SummaryRequest) (string, error) {
				return fillerOf(req.SummaryTokens, 3), nil // exactly the length asked
			}}
			g, events, _ := guardWithEvents(t, WithSummarizer(rs), WithSlidingWindow(4), WithMaxTokens(window))
			ctx := newFakeCtx("a").withUser(user)
			req := request(raw...)
			_, err := g.beforeModel(ctx, req)
			require.NoError(t, err)

			require.Len(t, *events, 1)
			e := (*events)[0]
			assert.Equal(t, "turns", e.Reason)
			assert.False(t, e.Discarded)
			assert.Less(t, e.TokensAfter, e.TokensBefore, "the compaction shrinks the request")
			require.Len(t, rs.requests(), 1)
			asked := rs.requests()[0].SummaryTokens
			span := newCalibration(state.Agent{}, testEst).Scale(estimate.Contents(testEst, raw[:e.ContentsSummarized]))
			assert.LessOrEqual(t, asked, span/2, "the summary asked is bounded by the span it replaces")
			assert.GreaterOrEqual(t, asked, minSummaryTokens/2)
			t.Logf("asked %d tokens; request %d -> %d", asked, e.TokensBefore, e.TokensAfter)
		})
	}
}

// TestSummaryLength_AskedAgainOnlyWhenTheRequestWouldNotFit: a summary
// longer than the length asked is accepted when the request it makes fits
// under the threshold; a shorter one is asked for only when it does not,
// and the fallback is taken only when no attempt makes it fit. Before, any
// summary over 1.25x its length was rejected and asked again.
func TestSummaryLength_AskedAgainOnlyWhenTheRequestWouldNotFit(t *testing.T) {
	tests := []struct {
		name string
		// reply answers the nth call for the summary sent (the one whose
		// transcript ends with the user's request) asked for asked tokens;
		// n is 0 for the pieces of a rolling summary before it.
		reply        func(n, asked int) string
		wantCalls    int
		wantFallback string // "" for none
		wantInReq    string
	}{
		{
			name:      "twice the length asked, the request fits: accepted",
			reply:     func(_, asked int) string { return "LONG-SUMMARY " + fillerOf(2*asked, 1) },
			wantCalls: 1, wantInReq: "LONG-SUMMARY",
		},
		{
			name: "the request would not fit: a shorter one is asked for",
			reply: func(n, asked int) string {
				if n == 1 {
					return fillerOf(7_000, 2)
				}
				return "SHORTER-SUMMARY " + fillerOf(asked, 3)
			},
			wantCalls: 2, wantInReq: "SHORTER-SUMMARY",
		},
		{
			name:      "never fits: the fallback",
			reply:     func(int, int) string { return fillerOf(7_000, 4) },
			wantCalls: DefaultMaxCompactionAttempts, wantFallback: "exceeds its budget", wantInReq: "(Automatic summary",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			final := 0
			rs := &recordingSummarizer{reply: func(_ int, req SummaryRequest) (string, error) {
				if !strings.Contains(req.Transcript, "LATEST please fix the build") {
					return tc.reply(0, req.SummaryTokens), nil
				}
				final++
				return tc.reply(final, req.SummaryTokens), nil
			}}
			g, events, _ := guardWithEvents(t, WithSummarizer(rs), WithMaxTokens(8_000))
			req, _ := compactOnce(t, g, newFakeCtx("a"))

			require.Len(t, *events, 1)
			e := (*events)[0]
			// The calls for the summary sent, after the pieces of a rolling
			// summary (the history is larger than one summarizer input).
			assert.Equal(t, tc.wantCalls, e.SummarizerCalls-e.RollingCalls)
			assert.Equal(t, tc.wantFallback != "", e.Fallback, e.FallbackReason)
			if tc.wantFallback != "" {
				assert.Contains(t, e.FallbackReason, tc.wantFallback)
			}
			reqs := rs.requests()[e.RollingCalls:]
			for k := 1; k < len(reqs); k++ {
				assert.Less(t, reqs[k].SummaryTokens, reqs[k-1].SummaryTokens, "call %d asks for less", k+1)
			}
			assert.Contains(t, textcut.ContentText(req.Contents[0]), tc.wantInReq)
			assert.LessOrEqual(t, e.TokensAfter, window.New(8_000).Threshold)
		})
	}
}

// TestCompaction_NothingToDo: a compaction stops before asking for a
// summary when none can help. A system instruction and tools past the
// window are refused, with the floor that stops the next calls from trying
// again; a request that holds only the adapter's continuation is sent as
// it is, or refused when it is known not to fit; anything to summarize
// goes on to the summary.
func TestCompaction_NothingToDo(t *testing.T) {
	const win = 10_000
	continuation := userMsg(convo.SyntheticContinuations[0])
	history := []*genai.Content{userMsg("read the log"), modelMsg("it says the disk is full"), userMsg("free some space")}
	huge := []*genai.Content{userMsg(strings.Repeat("lorem ipsum dolor ", 20_000))}
	cases := []struct {
		name      string
		raw, cs   []*genai.Content // the history ADK built; the request's contents so far
		fixed     int              // the system instruction and tools; 0 keeps the request's
		wantStop  bool
		wantErr   bool
		wantFloor bool
	}{
		{name: "something to summarize: it goes on", raw: history, cs: history},
		{name: "instruction and tools past the window: refused, floor set", raw: history, cs: history, fixed: 3 * win, wantStop: true, wantErr: true, wantFloor: true},
		{name: "only the adapter's continuation, fitting: sent as it is", raw: []*genai.Content{continuation}, cs: []*genai.Content{continuation}, wantStop: true},
		{name: "only the adapter's continuation, past the window: refused", raw: []*genai.Content{continuation}, cs: huge, wantStop: true, wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTestTurn(request(tc.raw...), state.Agent{}, quietLogger)
			tr.lim, tr.Cal = window.New(win), newCalibration(state.Agent{}, testEst)
			if tc.fixed > 0 {
				tr.Fixed = tc.fixed
			}
			c := newCompaction(tr, tc.cs, tr.prev, time.Time{})
			done, stop := c.nothingToDo()
			require.Equal(t, tc.wantStop, stop)
			if tc.wantErr {
				require.ErrorIs(t, done.err, ErrIrreducible)
			} else {
				require.NoError(t, done.err)
			}
			if tc.wantFloor {
				require.Greater(t, c.bare, 3*win, "the calibrated irreducible part")
				assert.Equal(t, c.bare, done.next.Floor, "no compaction until the request outgrows its irreducible part")
			} else {
				assert.Zero(t, done.next.Floor)
			}
			if stop && !tc.wantFloor {
				assert.Equal(t, c.origEst, done.next.LastEstimate, "the estimate of the request sent, for calibration")
			}
		})
	}
}

// Using a prepared summary (compactPrepared): sent when it still covers the
// request's prefix, waited for only as long as it is not written, dropped
// when the history changes or another compaction comes first.

// TestPrepared_UsedWhenReady: the summary prepared while the tools ran is
// written by the time the request reaches the trigger; the request compacts
// with it, without waiting: the model's tool calls and results after what
// it covers are sent verbatim, pairs intact, and no more summarizer calls
// are made than the one prepared.
func TestPrepared_UsedWhenReady(t *testing.T) {
	baseline := runtime.NumGoroutine()
	sum := newCtl(gateAnswer)
	s := newToolSession(t, sum)
	p := s.untilPrepared(t)
	waitUntil(t, "the prepared summary is written", p.ready)
	end := p.end

	ev, req := s.untilCompaction(t)
	assert.Equal(t, RanPrepared, ev.Ran)
	assert.Zero(t, ev.Waited, "the summary was ready")
	assert.Equal(t, 1, ev.SummarizerCalls)
	assert.Equal(t, 1, sum.Calls(), "no inline call beside the prepared one")
	assert.False(t, ev.Fallback)
	assert.LessOrEqual(t, ev.TokensAfter, ev.Threshold)
	assert.Equal(t, end, ev.ContentsSummarized, "the summary covers the request it was prepared from")
	require.NotEmpty(t, req.Contents)
	assert.Contains(t, textcut.ContentText(req.Contents[0]), "SUMMARY-1")
	assert.Equal(t, s.raw[end:], req.Contents[1:], "the contents after what it covers are sent verbatim")
	assert.NoError(t, coretest.CheckPairs(req.Contents))
	assert.Equal(t, end, s.ctx.getInt(state.KeyWatermark))
	assert.EqualValues(t, 1, s.g.prep.used.Load())
	assert.Nil(t, s.prepared())

	// The next steps go on from the compacted state.
	s.respond(t)
	s.request(t)
	s.finish(t, baseline)
}

// TestPrepared_WaitsForWhatIsLeft: the request reaches the trigger while
// the summary is still being written; the call waits for it (3 s on the
// guard's clock), and the event says so.
func TestPrepared_WaitsForWhatIsLeft(t *testing.T) {
	baseline := runtime.NumGoroutine()
	sum := newCtl(gateBlock)
	s := newToolSession(t, sum)
	s.untilPrepared(t)
	sum.waitEntered(t)

	type result struct {
		ev  CompactionEvent
		err error
	}
	done := make(chan result, 1)
	go func() {
		// Steps until the request compacts, on this goroutine: the
		// compacting one waits for the summary.
		for range 40 {
			req := request(s.raw...)
			if _, err := s.g.beforeModel(s.ctx, req); err != nil {
				done <- result{err: err}
				return
			}
			if ev, ok := s.lastEvent(); ok {
				done <- result{ev: ev}
				return
			}
			s.step++
			call := callMsg("read_file", map[string]any{"path": fmt.Sprintf("f%d.go", s.step)})
			if _, err := s.g.afterModel(s.ctx, &Response{Content: call}, nil); err != nil {
				done <- result{err: err}
				return
			}
			s.raw = append(s.raw, call, respMsg("read_file", map[string]any{"content": fillerOf(s.stepTokens, s.step)}))
		}
		done <- result{err: errors.New("no compaction")}
	}()
	// The summarizer's own timeout and the wait's are armed.
	ctx, cancel := context.WithTimeout(context.Background(), hangBound)
	defer cancel()
	require.NoError(t, s.clock.WaitTimers(ctx, 2))
	s.clock.Advance(3 * time.Second)
	sum.Release()
	r := <-done
	require.NoError(t, r.err)
	assert.Equal(t, RanPrepared, r.ev.Ran)
	assert.Equal(t, 3*time.Second, r.ev.Waited)
	assert.Equal(t, 1, sum.Calls())
	s.finish(t, baseline)
}

// TestPrepared_DroppedWhenHistoryChanges: the history the summary covers
// is no longer the request's prefix (an earlier content was edited); the
// prepared summary is dropped and cancelled, and a compaction of this
// request runs inline.
func TestPrepared_DroppedWhenHistoryChanges(t *testing.T) {
	baseline := runtime.NumGoroutine()
	sum := newCtl(gateBlock)
	s := newToolSession(t, sum)
	s.untilPrepared(t)
	sum.waitEntered(t)
	sum.set(gateAnswer) // the blocked call stays blocked until cancelled

	s.raw[1] = callMsg("read_file", map[string]any{"path": "another.go"})
	s.request(t)
	assert.Nil(t, s.prepared())
	assert.EqualValues(t, 1, s.g.prep.dropped.Load())
	sum.inFlight.Wait() // cancelled: it returns without being released
	sum.mu.Lock()
	assert.Len(t, sum.ctxErrs, 1, "the background summary was cancelled")
	sum.mu.Unlock()
	require.NotEmpty(t, s.events, "the request compacted")
	for _, ev := range s.events {
		assert.Equal(t, RanInline, ev.Ran)
		assert.Equal(t, InlinePreparedUnusable, ev.InlineReason)
	}
	s.finish(t, baseline)
}

// TestPrepared_DroppedWhenAnotherCompactionComesFirst: a requested
// compaction runs inline before the prepared summary is needed; the
// prepared summary is dropped and cancelled.
func TestPrepared_DroppedWhenAnotherCompactionComesFirst(t *testing.T) {
	baseline := runtime.NumGoroutine()
	sum := newCtl(gateBlock)
	s := newToolSession(t, sum)
	s.untilPrepared(t)
	sum.waitEntered(t)
	require.NoError(t, s.g.RequestCompactionInState(s.ctx.state, "a", ""))
	sum.set(gateAnswer)

	s.request(t)
	ev, ok := s.lastEvent()
	require.True(t, ok)
	assert.Equal(t, ReasonRequested, ev.Reason)
	assert.Equal(t, RanInline, ev.Ran)
	assert.Empty(t, ev.InlineReason, "a requested compaction runs inline by design")
	assert.Nil(t, s.prepared())
	assert.EqualValues(t, 1, s.g.prep.dropped.Load())
	s.finish(t, baseline)
}
