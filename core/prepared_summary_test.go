package core

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/coretest"
	"github.com/adk-contextguard/contextguard/core/internal/state"
	"github.com/adk-contextguard/contextguard/core/internal/window"
)

// Summaries prepared while tools run (prepared_summary.go): the guard's
// bound, Close and the options; and the tool-heavy sessions the
// prepared_*_test.go files play, on an 8k window, driven step by step
// through the callbacks as an adapter does, with a summarizer the test
// controls.

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
	// tool is the tool each step calls (read_file unless a test sets it).
	tool string
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
	s.raw = append(s.raw, call, respMsg(s.toolName(), map[string]any{"content": fmt.Sprintf("STEP-%d ", s.step) + fillerOf(size, s.step)}))
}

// answer answers the step with a tool call (AfterModel), reporting usage
// when charge is set, and returns the call.
func (s *toolSession) answer(t *testing.T) *genai.Content {
	t.Helper()
	s.step++
	call := callMsg(s.toolName(), map[string]any{"path": fmt.Sprintf("f%d.go", s.step)})
	resp := &Response{Content: call}
	if s.charge > 0 {
		real := float64(s.ctx.getInt(state.KeyLastEstimate)) * s.charge
		resp.UsageMetadata = &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: int32(real)}
	}
	_, err := s.g.afterModel(s.ctx, resp, nil)
	require.NoError(t, err)
	return call
}

// toolName is the tool the steps call.
func (s *toolSession) toolName() string {
	if s.tool == "" {
		return "read_file"
	}
	return s.tool
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

// untilCompactions plays steps, each set up by plan with its index, until
// the session has compacted n times, every prepared summary written before
// the next step, and returns those compactions' events; it stops at the
// request that makes the nth.
func (s *toolSession) untilCompactions(t *testing.T, n int, plan func(step int)) []CompactionEvent {
	t.Helper()
	var events []CompactionEvent
	for i := range 40 {
		plan(i)
		seen := len(s.events)
		s.request(t)
		if len(s.events) > seen {
			if events = append(events, s.events[len(s.events)-1]); len(events) == n {
				return events
			}
		}
		s.respond(t)
		if p := s.prepared(); p != nil {
			waitUntil(t, "the prepared summary is written", p.ready)
		}
	}
	t.Fatalf("%d compactions in 40 steps, want %d", len(events), n)
	return nil
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
	lim := window.New(preparedWindow) // threshold 6,400
	a := newAgentConfig("a", "Add", fixedSummary("s"), nil, []AgentOption{WithEarlyCompaction(0.5)})
	assert.Empty(t, a.errs)
	assert.InDelta(t, 3_200, a.preparesAt(lim), 1e-9, "half the threshold")
	a = newAgentConfig("a", "Add", fixedSummary("s"), nil, nil)
	assert.InDelta(t, 6_400, a.preparesAt(lim), 1e-9, "the default: the threshold")
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

// childCounter is a parent context that counts the child contexts it
// holds. The context package registers a child of a parent that is not one
// of its own through the parent's AfterFunc method (context.WithCancel) and
// stops that registration when the child is cancelled; live is how many
// are registered and not stopped.
type childCounter struct {
	inner context.Context
	live  atomic.Int64
}

func newChildCounter() (*childCounter, context.CancelFunc) {
	inner, cancel := context.WithCancel(context.Background())
	return &childCounter{inner: inner}, cancel
}

func (c *childCounter) Deadline() (time.Time, bool) { return c.inner.Deadline() }
func (c *childCounter) Done() <-chan struct{}       { return c.inner.Done() }
func (c *childCounter) Err() error                  { return c.inner.Err() }

// Value hides inner's values: through them the context package would
// find inner's own parent and register children there, unseen.
func (c *childCounter) Value(any) any { return nil }

func (c *childCounter) AfterFunc(f func()) func() bool {
	c.live.Add(1)
	var once sync.Once
	gone := func() { once.Do(func() { c.live.Add(-1) }) }
	stop := context.AfterFunc(c.inner, func() { gone(); f() })
	return func() bool { gone(); return stop() }
}

// countChildren makes the guard's background context one that counts its
// children; it must precede the guard's first summary.
func countChildren(g *Guard) *childCounter {
	ctx, cancel := newChildCounter()
	g.prep.ctx, g.prep.cancel = ctx, cancel
	return ctx
}

// sibling is another session of s's guard, agent and summarizer, with
// steps of the same size.
func (s *toolSession) sibling(id string) *toolSession {
	o := &toolSession{g: s.g, clock: s.clock, sum: s.sum, stepTokens: s.stepTokens, ctx: newFakeCtx("a").withUser("REQ-MARK fix the build")}
	o.ctx.sessionID = id
	o.raw = []*genai.Content{userMsg("REQ-MARK fix the build")}
	return o
}

// awaitWritten waits until p's goroutine has returned.
func awaitWritten(t *testing.T, p *preparedSummary) {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(hangBound):
		t.Fatalf("the prepared summary was not written within %v", hangBound)
	}
}

// leakRounds is how many prepared summaries each scenario of
// TestPrepared_LeavesNoChildContext lets go.
const leakRounds = 12

// TestPrepared_LeavesNoChildContext: however a prepared summary ends (used
// by the compaction it was written for, its session evicted from the
// guard's memory while the summary is still being written, or its session
// left idle after a run that ended with it unused), the guard's background
// context holds no child context for it afterwards, and no goroutine is
// left. The background context counts the children the context package
// registers on it (childCounter).
func TestPrepared_LeavesNoChildContext(t *testing.T) {
	for _, tc := range []struct {
		name   string
		behave gateBehaviour
		opts   []Option
		// play lets leakRounds summaries go on s's guard, and returns how
		// many the guard counted used, dropped and wasted.
		play func(t *testing.T, s *toolSession, live *childCounter) (used, dropped, wasted int64)
	}{
		{
			name: "used by their compactions", behave: gateAnswer,
			play: func(t *testing.T, s *toolSession, _ *childCounter) (int64, int64, int64) {
				s.stepTokens = 3_000 // a compaction every other step or so, each from a prepared summary
				for range 20 * leakRounds {
					if s.g.prep.used.Load() == leakRounds {
						break
					}
					s.request(t)
					s.respond(t)
					if p := s.prepared(); p != nil {
						awaitWritten(t, p)
					}
				}
				return leakRounds, 0, 0
			},
		},
		{
			name: "evicted while being written", behave: gateBlock, opts: []Option{WithMaxSessions(1)},
			play: func(t *testing.T, s *toolSession, live *childCounter) (int64, int64, int64) {
				for i := range leakRounds {
					run := s.sibling(fmt.Sprintf("evicted-%d", i))
					p := run.untilPrepared(t)
					s.sum.waitEntered(t)
					require.EqualValues(t, 1, live.live.Load(), "the summary being written holds a child")
					// The next session's first call takes the table's one
					// place: the idle session is evicted.
					s.sibling(fmt.Sprintf("next-%d", i)).request(t)
					awaitWritten(t, p)
					assert.True(t, p.failed, "the evicted session's summary was cancelled")
				}
				return 0, leakRounds, 0
			},
		},
		{
			name: "left idle after their run", behave: gateAnswer,
			play: func(t *testing.T, s *toolSession, _ *childCounter) (int64, int64, int64) {
				for i := range leakRounds {
					run := s.sibling(fmt.Sprintf("idle-%d", i))
					p := run.untilPrepared(t)
					awaitWritten(t, p)
					// The run ends with its tools' results (a long-running
					// tool, a cancelled run): no compaction between turns,
					// and the session has no next call.
					last := run.raw[len(run.raw)-1]
					s.g.AfterRun(run.ctx, RunEnd{State: run.ctx.state, Final: last, FinalAuthor: "a", Before: run.raw[len(run.raw)-2]})
					assert.Same(t, p, run.prepared(), "kept for the session's next call")
				}
				return 0, 0, 0
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			baseline := runtime.NumGoroutine()
			sum := newCtl(tc.behave)
			s := newToolSession(t, sum, tc.opts...)
			live := countChildren(s.g)

			used, dropped, wasted := tc.play(t, s, live)
			assert.EqualValues(t, used, s.g.prep.used.Load(), "used")
			assert.EqualValues(t, dropped, s.g.prep.dropped.Load(), "dropped")
			assert.EqualValues(t, wasted, s.g.prep.wasted.Load(), "wasted")
			assert.GreaterOrEqual(t, s.g.prep.started.Load(), int64(leakRounds), "summaries prepared")
			assert.Zero(t, live.live.Load(), "child contexts the guard's background context holds")
			s.finish(t, baseline)
		})
	}
}

// TestPreparedSummary_OneOutcome: a prepared summary ends with one
// outcome, counted once in the guard's counters, the metrics and the log,
// whatever lets it go after the first (its session evicted after a call
// dropped it, say); each letting-go cancels its context, and one begun and
// never started (abandon) is not counted. Either way the guard's
// background context is left without a child and the bound's place free.
func TestPreparedSummary_OneOutcome(t *testing.T) {
	type counts struct{ used, dropped, wasted int64 }
	for _, tc := range []struct {
		name string
		// started: the summary's goroutine ran (and returns, finish,
		// after the ends).
		started bool
		end     []func(*preparedSummary)
		want    counts
		// logged is the line the log holds once, "" for none.
		logged string
	}{
		{name: "used", started: true, end: []func(*preparedSummary){
			func(p *preparedSummary) { p.use(context.Background()) },
		}, want: counts{used: 1}, logged: "prepared summary used"},
		{name: "dropped, then dropped again by eviction", started: true, end: []func(*preparedSummary){
			func(p *preparedSummary) { p.drop(context.Background(), "the history changed") },
			func(p *preparedSummary) { p.drop(context.Background(), "evicted") },
		}, want: counts{dropped: 1}, logged: "prepared summary dropped"},
		{name: "wasted, then used", started: true, end: []func(*preparedSummary){
			func(p *preparedSummary) { p.waste(context.Background(), "too large") },
			func(p *preparedSummary) { p.use(context.Background()) },
		}, want: counts{wasted: 1}, logged: "prepared summary not used"},
		{name: "never started", end: []func(*preparedSummary){
			(*preparedSummary).abandon,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reader := sdkmetric.NewManualReader()
			tel, err := newTelemetry(tracenoop.NewTracerProvider(), sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
			require.NoError(t, err)
			logs := &logBuffer{}
			prep := newPreparer(&guardOptions{prepared: 1, clock: SystemClock(), logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}, tel)
			live := countChildren(&Guard{prep: prep})
			p, ctx, ok := prep.begin("a")
			require.True(t, ok)
			_, _, again := prep.begin("a")
			require.False(t, again, "the bound of 1 is taken")
			require.EqualValues(t, 1, live.live.Load())

			for _, end := range tc.end {
				end(p)
			}
			assert.ErrorIs(t, ctx.Err(), context.Canceled)
			assert.Zero(t, live.live.Load(), "child contexts left")
			assert.Equal(t, tc.want, counts{prep.used.Load(), prep.dropped.Load(), prep.wasted.Load()})

			var rm metricdata.ResourceMetrics
			require.NoError(t, reader.Collect(context.Background(), &rm))
			metered := int64(0)
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					if m.Name == "contextguard.prepared_summaries" {
						for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
							metered += dp.Value
						}
					}
				}
			}
			assert.Equal(t, tc.want.used+tc.want.dropped+tc.want.wasted, metered, "metered outcomes")
			if tc.logged != "" {
				assert.Equal(t, 1, strings.Count(logs.String(), tc.logged), "logged once")
			} else {
				assert.Empty(t, logs.String())
			}
			if tc.started {
				p.finish()
			}
			freed, _, ok := prep.begin("a")
			require.True(t, ok, "the bound's place is free again")
			freed.abandon()
			assert.NoError(t, prep.close(), "nothing left to wait for")
		})
	}
}
