package core

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/coretest"
)

// Summaries prepared while tools run (prepared_summary.go): a tool-heavy
// session on an 8k window, driven step by step through the callbacks as an
// adapter does, with a summarizer the test controls.

// gateBehaviour is what one call of a ctlSummarizer does.
type gateBehaviour int

const (
	gateAnswer gateBehaviour = iota // answer at once
	gateBlock                       // wait for release or the context's end
	gateHang                        // wait for release, ignoring the context
	gateFail                        // return an error
	gatePanic                       // panic
)

// ctlSummarizer is a summarizer whose calls behave as the test says; it
// tells the test when a call has started (entered) and counts the calls in
// progress, so the test can wait for them to return.
type ctlSummarizer struct {
	entered chan int
	release chan struct{}
	once    sync.Once

	mu       sync.Mutex
	behave   gateBehaviour
	calls    int
	inFlight sync.WaitGroup
	ctxErrs  []error // the context's error when a blocked call ended
}

func newCtl(b gateBehaviour) *ctlSummarizer {
	return &ctlSummarizer{behave: b, entered: make(chan int, 64), release: make(chan struct{})}
}

func (s *ctlSummarizer) Summarize(ctx context.Context, req SummaryRequest) (string, error) {
	s.inFlight.Add(1)
	defer s.inFlight.Done()
	s.mu.Lock()
	s.calls++
	n, behave := s.calls, s.behave
	s.mu.Unlock()
	s.entered <- n
	switch behave {
	case gateBlock:
		select {
		case <-s.release:
		case <-ctx.Done():
			s.mu.Lock()
			s.ctxErrs = append(s.ctxErrs, ctx.Err())
			s.mu.Unlock()
			return "", ctx.Err()
		}
	case gateHang:
		<-s.release
	case gateFail:
		return "", errBoom
	case gatePanic:
		panic("summarizer exploded")
	}
	return fmt.Sprintf("SUMMARY-%d of %d contents", n, len(req.Contents)), nil
}

// set makes the later calls behave as b.
func (s *ctlSummarizer) set(b gateBehaviour) {
	s.mu.Lock()
	s.behave = b
	s.mu.Unlock()
}

// Release lets blocked calls answer.
func (s *ctlSummarizer) Release() { s.once.Do(func() { close(s.release) }) }

func (s *ctlSummarizer) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// waitEntered waits for the summarizer's next call to start.
func (s *ctlSummarizer) waitEntered(t *testing.T) {
	t.Helper()
	select {
	case <-s.entered:
	case <-time.After(hangBound):
		t.Fatalf("the summarizer was not called within %v", hangBound)
	}
}

// toolSession is one agent's tool-heavy session: each step's request is
// the history so far; its response asks for a tool, whose result of about
// stepTokens tokens is appended.
type toolSession struct {
	g      *Guard
	ctx    *fakeCtx
	clock  *coretest.FakeClock
	sum    *ctlSummarizer
	raw    []*genai.Content
	events []CompactionEvent
	mu     sync.Mutex
	step   int
	// stepTokens is the size of each tool result (preparedStepTokens
	// unless a test sets it).
	stepTokens int
	// charge, when set, is the provider's count of each request as a
	// multiple of the guard's raw estimate, reported with the response;
	// without it the responses report no usage.
	charge float64
}

// preparedWindow and preparedStepTokens size the sessions: an 8k window
// (threshold 6,400) reached after about ten steps of 600 tokens.
const (
	preparedWindow     = 8_000
	preparedStepTokens = 600
)

func newToolSession(t *testing.T, sum *ctlSummarizer, opts ...Option) *toolSession {
	t.Helper()
	s := &toolSession{clock: coretest.NewFakeClock(time.Time{}), sum: sum, stepTokens: preparedStepTokens}
	all := append([]Option{WithClock(s.clock), WithLogger(quietLogger), WithOnCompaction(func(_ context.Context, e CompactionEvent) {
		s.mu.Lock()
		s.events = append(s.events, e)
		s.mu.Unlock()
	})}, opts...)
	s.g = newGuard(NewCrushRegistry(WithRegistryLogger(quietLogger)), all...)
	s.g.Add("a", sum, nil, WithMaxTokens(preparedWindow), WithSummaryTimeout(testSummaryTimeout), WithSummarizerWindow(128_000))
	require.NoError(t, s.g.Err())
	s.ctx = newFakeCtx("a").withUser("REQ-MARK fix the build")
	s.raw = []*genai.Content{userMsg("REQ-MARK fix the build")}
	return s
}

// request sends the next step's request through BeforeModel and returns
// it as the model would receive it.
func (s *toolSession) request(t *testing.T) *Request {
	t.Helper()
	req := request(s.raw...)
	_, err := s.g.beforeModel(s.ctx, req)
	require.NoError(t, err)
	return req
}

// respond answers the step with a tool call (AfterModel) and appends the
// call and its result, of stepTokens, to the history.
func (s *toolSession) respond(t *testing.T) {
	t.Helper()
	call := s.answer(t)
	s.appendResult(call, s.stepTokens)
}

// appendResult appends the call and its result of size tokens.
func (s *toolSession) appendResult(call *genai.Content, size int) {
	s.raw = append(s.raw, call, respMsg("read_file", map[string]any{"content": fmt.Sprintf("STEP-%d ", s.step) + fillerOf(size, s.step)}))
}

// answer answers the step with a tool call (AfterModel), reporting usage
// when charge is set, and returns the call.
func (s *toolSession) answer(t *testing.T) *genai.Content {
	t.Helper()
	s.step++
	call := callMsg("read_file", map[string]any{"path": fmt.Sprintf("f%d.go", s.step)})
	resp := &Response{Content: call}
	if s.charge > 0 {
		real := float64(s.ctx.getInt(keyLastEstimate)) * s.charge
		resp.UsageMetadata = &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: int32(real)}
	}
	_, err := s.g.afterModel(s.ctx, resp, nil)
	require.NoError(t, err)
	return call
}

// untilPrepared plays steps until a summary is being prepared.
func (s *toolSession) untilPrepared(t *testing.T) *preparedSummary {
	t.Helper()
	for range 40 {
		s.request(t)
		s.respond(t)
		if p := s.prepared(); p != nil {
			return p
		}
	}
	t.Fatal("no summary was prepared")
	return nil
}

// prepared is the session's prepared summary, nil for none.
func (s *toolSession) prepared() *preparedSummary {
	e := s.g.sessions.peek(sessionKey(s.ctx))
	if e == nil {
		return nil
	}
	return e.prepared.Load()
}

// untilCompaction plays steps until a request compacts and returns its
// event.
func (s *toolSession) untilCompaction(t *testing.T) (CompactionEvent, *Request) {
	t.Helper()
	for range 40 {
		req := s.request(t)
		if ev, ok := s.lastEvent(); ok {
			return ev, req
		}
		s.respond(t)
	}
	t.Fatal("no compaction")
	return CompactionEvent{}, nil
}

func (s *toolSession) lastEvent() (CompactionEvent, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.events) == 0 {
		return CompactionEvent{}, false
	}
	return s.events[len(s.events)-1], true
}

// finish closes the guard, releases the summarizer and checks that no
// goroutine is left.
func (s *toolSession) finish(t *testing.T, baseline int) {
	t.Helper()
	require.NoError(t, s.g.Close())
	s.sum.Release()
	s.sum.inFlight.Wait()
	assert.Zero(t, coretest.GoroutinesLeft(baseline), "goroutines left behind")
}

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
	assert.Contains(t, contentText(req.Contents[0]), "SUMMARY-1")
	assert.Equal(t, s.raw[end:], req.Contents[1:], "the contents after what it covers are sent verbatim")
	assert.NoError(t, coretest.CheckPairs(req.Contents))
	assert.Equal(t, end, s.ctx.getInt(keyWatermark))
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

// TestPrepared_CloseDuringSummary: Close cancels a background summary and
// returns once it has, also when the summarizer ignores its context; the
// next compaction runs inline.
func TestPrepared_CloseDuringSummary(t *testing.T) {
	for _, tc := range []struct {
		name   string
		behave gateBehaviour
	}{
		{"honours its context", gateBlock},
		{"ignores its context", gateHang},
	} {
		t.Run(tc.name, func(t *testing.T) {
			baseline := runtime.NumGoroutine()
			sum := newCtl(tc.behave)
			s := newToolSession(t, sum)
			p := s.untilPrepared(t)
			sum.waitEntered(t)

			require.NoError(t, s.g.Close())
			assert.True(t, p.ready(), "the background summary has returned")
			assert.True(t, p.failed)

			sum.Release()
			sum.inFlight.Wait()
			sum.set(gateAnswer)
			ev, _ := s.untilCompaction(t)
			assert.Equal(t, RanInline, ev.Ran)
			assert.EqualValues(t, 1, s.g.prep.wasted.Load())
			assert.EqualValues(t, 1, s.g.prep.started.Load(), "no summary is prepared once closed")
			s.finish(t, baseline)
		})
	}
}

// TestPrepared_Off: WithPreparedSummaries(PreparedSummariesOff) compacts
// inline, and the call waits for all of it.
func TestPrepared_Off(t *testing.T) {
	sum := newCtl(gateAnswer)
	s := newToolSession(t, sum, WithPreparedSummaries(PreparedSummariesOff))
	ev, _ := s.untilCompaction(t)
	assert.Equal(t, RanInline, ev.Ran)
	assert.Zero(t, s.g.prep.started.Load())
	require.NoError(t, s.g.Close())
}

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
	} {
		t.Run(tc.name, func(t *testing.T) {
			baseline := runtime.NumGoroutine()
			sum := newCtl(gateAnswer)
			s := newToolSession(t, sum, tc.opts...)
			s.charge = tc.charge
			var ev CompactionEvent
			for i := range 40 {
				s.stepTokens = tc.sizes[i%len(tc.sizes)]
				s.request(t)
				if e, ok := s.lastEvent(); ok {
					ev = e
					break
				}
				s.respond(t)
				if p := s.prepared(); p != nil {
					waitUntil(t, "the prepared summary is written", p.ready)
				}
			}
			require.Equal(t, ReasonTokens, ev.Reason, "a compaction for tokens")
			assert.Equal(t, tc.ran, ev.Ran)
			assert.Equal(t, tc.want, ev.InlineReason)
			s.finish(t, baseline)
		})
	}
}

// TestPrepared_ConsecutiveCompactionsEachPrepared: steps each about a third
// of the window leave no room for another beside a summary, so the
// compactions fall on consecutive requests; each one's summary is prepared
// from the request the compaction before it sent, while the step's tools
// ran, so none waits and none is wasted.
func TestPrepared_ConsecutiveCompactionsEachPrepared(t *testing.T) {
	baseline := runtime.NumGoroutine()
	sum := newCtl(gateAnswer)
	s := newToolSession(t, sum)
	s.stepTokens = 3_000
	at := map[int]CompactionEvent{} // request index → its compaction
	for i := range 14 {
		seen := len(s.events)
		s.request(t)
		if len(s.events) > seen {
			at[i] = s.events[len(s.events)-1]
		}
		s.respond(t)
		if p := s.prepared(); p != nil {
			waitUntil(t, "the prepared summary is written", p.ready)
		}
	}
	require.GreaterOrEqual(t, len(at), 4, "the session compacts")
	consecutive := 0
	for i, ev := range at {
		assert.Equal(t, RanPrepared, ev.Ran, "compaction at request %d", i)
		assert.Zero(t, ev.Waited, "compaction at request %d waited", i)
		assert.Less(t, ev.TokensAfter, ev.TokensBefore, "compaction at request %d shrinks the request", i)
		assert.LessOrEqual(t, ev.TokensAfter, ev.Threshold, "compaction at request %d gets under the trigger", i)
		if _, ok := at[i-1]; ok {
			consecutive++
		}
	}
	assert.Positive(t, consecutive, "compactions on consecutive requests: %v", slices.Sorted(maps.Keys(at)))
	assert.Zero(t, s.g.prep.wasted.Load(), "prepared summaries not used")
	assert.Zero(t, s.g.prep.dropped.Load(), "prepared summaries dropped")
	s.finish(t, baseline)
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
	s.raw = append(history(2, 200), s.raw...)
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

// TestPreparedFits: a prepared summary's request is sent under the trigger,
// and past it (the step kept verbatim) while it stays halfway to the room
// and frees at least a summary's length.
func TestPreparedFits(t *testing.T) {
	lim := newLimits(preparedWindow) // threshold 6,400, halfway to the window 7,200
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
				l, ok = lim.withOutput(tc.output)
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
	assert.LessOrEqual(t, first.TokensAfter, newLimits(preparedWindow).halfwayToRoom(first.Threshold))
	assert.Zero(t, s.ctx.getInt(keyIrreducibleFloor), "no irreducible floor")

	seen := len(s.events)
	s.respond(t)
	s.request(t)
	require.Greater(t, len(s.events), seen, "the next request compacts again")
	assert.LessOrEqual(t, s.events[len(s.events)-1].TokensAfter, s.events[len(s.events)-1].Threshold)
	s.finish(t, baseline)
}

// TestSentRequest: the request a background summary starts from is the one
// the call let through: the turn's when it did not compact, the
// compaction's (its state, its summary's cut, its count) when it did, and
// none after a compaction that injected no summary.
func TestSentRequest(t *testing.T) {
	raw := []*genai.Content{userMsg("REQ"), modelMsg("a"), userMsg("b"), modelMsg("c")}
	prev := guardState{summary: "old", watermark: 1, compactions: 1, tokens: 900, realTokens: 800, lastEstimate: 700}
	compacted := guardState{summary: "new", watermark: 3, compactions: 2, tokens: 300, providerRatio: 1500}
	sent := []*genai.Content{userMsg("summary"), modelMsg("c")}
	for _, tc := range []struct {
		name   string
		s      step
		ok     bool
		before int
		state  guardState
		cut    int
		factor float64 // the calibration's
	}{
		{name: "no compaction: the turn's request", s: step{contents: raw, next: prev}, ok: true, before: 5_000, state: prev, cut: 1, factor: 1.2},
		{name: "a compaction: the compacted request", s: step{contents: sent, next: compacted, event: &CompactionEvent{}},
			ok: true, before: 300, state: compacted, cut: 3, factor: 1.5},
		{name: "a compaction that stored no summary", s: step{contents: raw[2:], next: guardState{compactions: 2}, event: &CompactionEvent{}}},
		{name: "an event that changed no state", s: step{contents: raw, next: prev, event: &CompactionEvent{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTestTurn(request(raw...), prev, quietLogger)
			tr.before, tr.inj, tr.cal = 5_000, injection{cut: 1, injected: true}, calibration{factor: 1.2, real: 800}
			cand, ok := sentRequest(tr, &tc.s)
			require.Equal(t, tc.ok, ok)
			if !ok {
				return
			}
			assert.Equal(t, raw, cand.req.Contents, "the raw contents")
			assert.Equal(t, tc.s.contents, cand.sent, "the contents sent")
			assert.Equal(t, tc.before, cand.before)
			assert.Equal(t, tc.state, cand.prev)
			assert.Equal(t, injection{cut: tc.cut, injected: true}, cand.inj)
			assert.InDelta(t, tc.factor, cand.cal.factor, 1e-9, "the calibration: the compacted request's learned ratio")
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

// TestPrepared_Usage: Preparing reports a summary being written for the
// agent in the session, and no longer once it is written.
func TestPrepared_Usage(t *testing.T) {
	baseline := runtime.NumGoroutine()
	sum := newCtl(gateBlock)
	s := newToolSession(t, sum)
	assert.False(t, s.g.Preparing("app", "u", "s1", "a"))
	p := s.untilPrepared(t)
	sum.waitEntered(t)
	assert.True(t, s.g.Preparing("app", "u", "s1", "a"))
	assert.False(t, s.g.Preparing("app", "u", "s1", "b"), "another agent")
	assert.False(t, s.g.Preparing("app", "u", "s2", "a"), "another session")
	sum.Release()
	waitUntil(t, "the prepared summary is written", p.ready)
	assert.False(t, s.g.Preparing("app", "u", "s1", "a"))
	s.finish(t, baseline)
}

// TestPrepared_Options: the options are validated.
func TestPrepared_Options(t *testing.T) {
	g := newGuard(nil, WithPreparedSummaries(-1))
	assert.ErrorContains(t, g.Err(), "WithPreparedSummaries(-1)")
	for _, f := range []float64{0, -0.5, 1.5} {
		a := newAgentConfig("a", "Add", fixedSummary("s"), nil, []AgentOption{WithEarlyCompaction(f)})
		assert.NotEmpty(t, a.errs, "WithEarlyCompaction(%v)", f)
	}
	a := newAgentConfig("a", "Add", fixedSummary("s"), nil, []AgentOption{WithEarlyCompaction(1)})
	assert.Empty(t, a.errs)
	assert.InDelta(t, 1.0, a.earlyFraction(), 1e-9)
}

// sleepSummarizer is a summarizer of latency d: a model call's time, spent
// asleep (a benchmark's real time), or until its context ends.
type sleepSummarizer struct{ d time.Duration }

func (s sleepSummarizer) Summarize(ctx context.Context, req SummaryRequest) (string, error) {
	select {
	case <-time.After(s.d):
		return fmt.Sprintf("summary of %d contents", len(req.Contents)), nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// Latencies of BenchmarkPreparedSummaries: the summarizer's, and the tools'
// of each step, at least as long (issue 23's setting: T >= L).
const (
	benchSummarizerLatency = 20 * time.Millisecond
	benchToolLatency       = 25 * time.Millisecond
)

// BenchmarkPreparedSummaries plays a tool-heavy session on an 8k window
// (a compaction every ten steps or so) with a summarizer of latency L and
// tools of latency T >= L, in real time, and reports the time the model
// call spent in BeforeModel at compaction steps, p50 and p99, in ms and as a
// share of L: with prepared summaries the call waits only for what is left
// of a summary written while the tools ran (the goal: p99 at most 10% of
// L); inline, it waits for the whole summary (about L). Run it with enough
// steps for a few dozen compactions, e.g. -benchtime=400x.
func BenchmarkPreparedSummaries(b *testing.B) {
	fillers := make([]string, 8)
	for i := range fillers {
		fillers[i] = fillerOf(preparedStepTokens, i)
	}
	for _, mode := range []struct {
		name  string
		limit int
	}{{"prepared", DefaultPreparedSummaries}, {"inline", PreparedSummariesOff}} {
		b.Run(mode.name, func(b *testing.B) {
			compacted := false
			g := New(NewCrushRegistry(WithRegistryLogger(quietLogger)), WithHost(testHost), WithLogger(quietLogger),
				WithPreparedSummaries(mode.limit),
				WithOnCompaction(func(context.Context, CompactionEvent) { compacted = true }))
			// The summarizer's window holds the span: a summary is one call
			// of L, not a rolling summary of several.
			g.Add("a", sleepSummarizer{benchSummarizerLatency}, nil, WithMaxTokens(preparedWindow), WithSummarizerWindow(128_000))
			ctx := newFakeCtx("a").withUser("fix the build")
			raw := []*genai.Content{userMsg("fix the build")}
			var waits []time.Duration
			step := 0
			for b.Loop() {
				req := request(raw...)
				began := time.Now()
				if _, err := g.beforeModel(ctx, req); err != nil {
					b.Fatal(err)
				}
				if d := time.Since(began); compacted {
					waits = append(waits, d)
					compacted = false
				}
				step++
				call := callMsg("read_file", map[string]any{"path": fmt.Sprintf("f%d.go", step)})
				if _, err := g.afterModel(ctx, &Response{Content: call}, nil); err != nil {
					b.Fatal(err)
				}
				time.Sleep(benchToolLatency) // the tools run
				raw = append(raw, call, respMsg("read_file", map[string]any{"content": fillers[step%len(fillers)]}))
			}
			if err := g.Close(); err != nil {
				b.Fatal(err)
			}
			if len(waits) == 0 {
				return
			}
			slices.Sort(waits)
			at := func(q float64) time.Duration { return waits[min(int(q*float64(len(waits))), len(waits)-1)] }
			ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
			b.ReportMetric(float64(len(waits)), "compactions")
			b.ReportMetric(ms(at(0.50)), "p50-wait-ms")
			b.ReportMetric(ms(at(0.99)), "p99-wait-ms")
			b.ReportMetric(float64(at(0.99))/float64(benchSummarizerLatency), "p99-wait/L")
		})
	}
}
