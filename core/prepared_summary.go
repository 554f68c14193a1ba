package core

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/adk-contextguard/contextguard/core/internal/sat"
	"github.com/adk-contextguard/contextguard/core/internal/window"
)

// Summaries prepared while tools run (ARCHITECTURE.md, One model call,
// Concurrency): the bound, and the lifetime of each summary.

// Defaults of the prepared summaries.
const (
	// DefaultPreparedSummaries is how many summaries the guard prepares in
	// the background at once, over all sessions (WithPreparedSummaries):
	// each is one summarizer call that the compaction it serves would have
	// made anyway, so the bound only keeps a burst of sessions from
	// starting many model calls at the same moment.
	DefaultPreparedSummaries = 64
	// PreparedSummariesOff, given to WithPreparedSummaries, turns prepared
	// summaries off: every compaction runs inline, in the model call that
	// needs it.
	PreparedSummariesOff = 0
	// DefaultEarlyCompaction is the share of the trigger the next request
	// is predicted to reach when the guard starts preparing its summary
	// (WithEarlyCompaction): the trigger itself. The prediction's margin
	// (growthMargin) already starts it a step early when steps vary; an
	// earlier start leaves more contents verbatim after the summary, so the
	// compacted request is larger and the next compaction comes sooner.
	DefaultEarlyCompaction = 1.0
)

// preparer owns the guard's background summaries: their bound, the
// context Close cancels, and the logger, clock and metrics they report to.
type preparer struct {
	// limit is how many may be written at once; 0 turns them off
	// (WithPreparedSummaries 0, or a before-compaction hook, whose
	// instructions or skip are decided only when the compaction is due).
	limit int
	// ctx is the parent of every summary's context; cancel ends it (close).
	// A summary cancels its own when it is written or let go, so ctx holds
	// a child only while a summary is being written.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	tel    *telemetry
	log    *slog.Logger
	clock  Clock

	mu      sync.Mutex
	running int
	closed  bool

	// What became of the prepared summaries, for tests and the log.
	started, used, dropped, wasted atomic.Int64
}

// newPreparer is the preparer of a guard built with options o.
func newPreparer(o *guardOptions, tel *telemetry) *preparer {
	limit := o.prepared
	if o.beforeCompaction != nil {
		limit = PreparedSummariesOff
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &preparer{limit: limit, ctx: ctx, cancel: cancel, tel: tel, log: o.logger, clock: o.clock}
}

// begin counts a background summary in and returns it with the context it
// is written under, unless the guard is closed or the bound is reached
// (ok false). The caller either starts it (runPrepared) or gives it back
// unstarted (abandon).
func (p *preparer) begin(agent string) (s *preparedSummary, ctx context.Context, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.running >= p.limit {
		return nil, nil, false
	}
	p.running++
	p.wg.Add(1)
	ctx, cancel := context.WithCancel(p.ctx)
	return &preparedSummary{agent: agent, owner: p, cancel: cancel, done: make(chan struct{}), log: p.log, started: p.clock.Now()}, ctx, true
}

// leave counts a background summary out.
func (p *preparer) leave() {
	p.mu.Lock()
	p.running--
	p.mu.Unlock()
	p.wg.Done()
}

// close refuses new background summaries, cancels the running ones and
// waits for them at most DefaultSummaryTimeout on the guard's clock: a
// summarizer that ignores its context is abandoned, as CallBounded
// abandons it.
func (p *preparer) close() error {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.cancel()
	done := make(chan struct{})
	go func() {
		p.wg.Wait()
		close(done)
	}()
	timeout := make(chan struct{})
	stop := p.clock.AfterFunc(DefaultSummaryTimeout, func() { close(timeout) })
	defer stop()
	select {
	case <-done:
		return nil
	case <-timeout:
		return fmt.Errorf("contextguard: Close: %w", errPreparedTimeout)
	}
}

// preparedSummary is one summary written in the background for the next
// compaction of one agent of a session. The goroutine writes its result and
// then closes done, so a reader that saw done closed reads it without a
// lock.
type preparedSummary struct {
	agent string
	// first and end bound the raw contents it summarizes (first is the
	// injected summary's cut), chain is the chain hash of raw[:end]
	// (prefix_mark.go); prevSummary, compactions and userReq are the
	// state it was written from.
	first, end  int
	chain       uint64
	prevSummary string
	compactions int
	userReq     string
	// request is the request it makes without the contents after it (the
	// compaction's bare part and the summary at its budget), budget the
	// summary's budget.
	request, budget int
	started         time.Time
	done            chan struct{}

	// owner counts it; cancel ends its context; settled says it was used,
	// dropped or wasted; log is the starting call's logger.
	owner   *preparer
	cancel  context.CancelFunc
	settled atomic.Bool
	log     *slog.Logger

	// The result, written before done is closed.
	summary string
	// ev holds the summarizer calls made and the fallback taken.
	ev CompactionEvent
	// took is how long the summary took; failed that there is no summary
	// to use (a panic of the guard's own code, or the guard closed).
	took   time.Duration
	failed bool
}

// ready reports whether the summary is written.
func (p *preparedSummary) ready() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// A prepared summary owns its lifetime: its context is cancelled by the
// goroutine writing it when it returns (finish), by the call or eviction
// that lets it go (use, drop, waste: each counts and logs once), or, begun
// and never started, by abandon. No other code cancels it, so the guard's
// context holds a child only while a summary is being written.

// finish ends the goroutine that wrote p: it is timed, its context is
// cancelled, done is closed (the result is then readable) and its place
// under the bound is freed.
func (p *preparedSummary) finish() {
	p.took = p.owner.clock.Now().Sub(p.started)
	p.cancel()
	close(p.done)
	p.owner.leave()
}

// abandon gives back a summary begun and never started: nothing was
// written, so it has no outcome to count.
func (p *preparedSummary) abandon() {
	p.cancel()
	p.owner.leave()
}

// use lets p go as sent by the compaction of the call ctx.
func (p *preparedSummary) use(ctx context.Context) {
	if p.settle(ctx, &p.owner.used, "used") {
		p.log.DebugContext(ctx, "contextguard: prepared summary used", "contents", p.end-p.first)
	}
}

// drop lets p go before a compaction needed it, for why, cancelling it if
// it is still being written.
func (p *preparedSummary) drop(ctx context.Context, why string) {
	if p.settle(ctx, &p.owner.dropped, "dropped") {
		p.log.InfoContext(ctx, "contextguard: prepared summary dropped", "reason", why, "prepared_agent", p.agent)
	}
}

// waste lets p go unused by the compaction that needed it, for why: its
// calls were spent for nothing, and the compaction runs inline.
func (p *preparedSummary) waste(ctx context.Context, why string) {
	if p.settle(ctx, &p.owner.wasted, "wasted") {
		p.log.InfoContext(ctx, "contextguard: prepared summary not used; compacting inline", "reason", why)
	}
}

// settle cancels p's context and, the first time only, counts its outcome
// in n and the metrics; it reports whether this was the first time.
func (p *preparedSummary) settle(ctx context.Context, n *atomic.Int64, outcome string) bool {
	p.cancel()
	if !p.settled.CompareAndSwap(false, true) {
		return false
	}
	n.Add(1)
	p.owner.tel.preparedSummary(ctx, p.agent, outcome)
	return true
}

// preparedFits reports whether the request of count n that a prepared
// summary makes is sent in place of the request of count before: under the
// threshold, or, past it by the step kept verbatim, within halfway to the
// room (as decide lets a request go) while freeing at least a summary's
// length (budget). Without that length, a request just past the threshold
// could be "compacted" to a larger one, again and again.
func preparedFits(lim window.Limits, n, before, budget int) bool {
	return n <= lim.Threshold || (n <= lim.HalfwayToRoom(lim.Threshold) && sat.Add(n, budget) <= before)
}

// errPreparedTimeout ends the wait for a prepared summary.
var errPreparedTimeout = errors.New("the prepared summary was not written within the summary timeout")

// Close cancels the summaries the guard prepares in the background and
// waits until they have returned, at most DefaultSummaryTimeout on the
// guard's clock. Compactions go on inline afterwards; Close may be called
// more than once.
func (g *Guard) Close() error {
	if g == nil {
		return nil
	}
	return g.prep.close()
}

// Preparing reports whether a summary is being prepared for the agent in
// the session (Usage.Preparing). For adapters.
func (g *Guard) Preparing(appName, userID, sessionID, agentName string) bool {
	return g != nil && g.sessions.peek(sessionKeyOf(appName, userID, sessionID)).preparing(agentName)
}

// preparing reports whether e, nil for none, has a summary being prepared
// for agent.
func (e *sessionEntry) preparing(agent string) bool {
	if e == nil {
		return false
	}
	p := e.prepared.Load()
	return p != nil && p.agent == agent && !p.ready()
}

// await waits for p, with the session sess parked (a concurrent call for
// it waits, a re-entrant one is refused), at most timeout on the guard's
// clock, or until ctx ends. It returns how long it waited and whether p is
// written.
func (p *preparedSummary) await(ctx context.Context, sess *sessionEntry, timeout time.Duration) (time.Duration, bool) {
	if p.ready() {
		return 0, true
	}
	clock := p.owner.clock
	began := clock.Now()
	ctx, cancel := withTimeout(ctx, clock, timeout)
	defer cancel()
	ctx = sess.park(ctx)
	select {
	case <-p.done:
	case <-ctx.Done():
	}
	sess.unpark()
	return clock.Now().Sub(began), p.ready()
}
