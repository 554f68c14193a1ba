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

// Summaries prepared while tools run (ARCHITECTURE.md, Concurrency).
const (
	// DefaultPreparedSummaries is how many summaries the guard prepares in
	// the background at once (WithPreparedSummaries). Each is a call its
	// compaction would make anyway: the bound only keeps a burst of
	// sessions from starting many model calls at once.
	DefaultPreparedSummaries = 64
	// PreparedSummariesOff, given to WithPreparedSummaries, makes every
	// compaction run inline.
	PreparedSummariesOff = 0
	// DefaultEarlyCompaction is the share of the trigger the next request
	// is predicted to reach when preparing starts (WithEarlyCompaction).
	// The prediction's margin already starts a step early; starting
	// earlier leaves more verbatim, so the next compaction comes sooner.
	DefaultEarlyCompaction = 1.0
)

// preparer owns the guard's background summaries: their bound, the
// context Close cancels, and the logger, clock and metrics they report to.
type preparer struct {
	// limit is how many may be written at once; 0 also with a
	// before-compaction hook, decided only when the compaction is due.
	limit int
	// ctx is every summary's parent, holding a child only while one is
	// being written; cancel ends it (close).
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	tel    *telemetry
	log    *slog.Logger
	clock  Clock

	mu      sync.Mutex
	running int
	closed  bool

	started, used, dropped, wasted atomic.Int64 // outcomes, for tests and the log
}

func newPreparer(o *guardOptions, tel *telemetry) *preparer {
	limit := o.prepared
	if o.beforeCompaction != nil {
		limit = PreparedSummariesOff
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &preparer{limit: limit, ctx: ctx, cancel: cancel, tel: tel, log: o.logger, clock: o.clock}
}

// begin counts a background summary in and returns it with its context,
// unless the guard is closed or the bound is reached. The caller starts it
// (runPrepared) or abandons it.
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

func (p *preparer) leave() {
	p.mu.Lock()
	p.running--
	p.mu.Unlock()
	p.wg.Done()
}

// close refuses new summaries, cancels the running ones and waits at most
// DefaultSummaryTimeout: a summarizer that ignores its context is abandoned.
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
// compaction of one agent of a session. The goroutine writes the result
// before closing done, so a reader that saw done closed needs no lock.
type preparedSummary struct {
	agent string
	// raw[first:end] is what it summarizes (first is the injected summary's
	// cut), chain the chain hash of raw[:end]; prevSummary, compactions and
	// userReq the state it was written from.
	first, end  int
	chain       uint64
	prevSummary string
	compactions int
	userReq     string
	// request is the request it makes without the contents after it,
	// budget the summary's.
	request, budget int
	started         time.Time
	done            chan struct{}

	owner   *preparer
	cancel  context.CancelFunc
	settled atomic.Bool // used, dropped or wasted
	log     *slog.Logger

	// The result. failed: none to use (a panic of the guard's code, or the
	// guard closed).
	summary string
	ev      CompactionEvent // the summarizer calls made and the fallback taken
	took    time.Duration
	failed  bool
}

func (p *preparedSummary) ready() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// A prepared summary owns its lifetime: only finish, use, drop, waste (each
// counting and logging once) and abandon cancel its context.

// finish ends the goroutine that wrote p: it is timed, cancelled, done is
// closed and its place under the bound freed.
func (p *preparedSummary) finish() {
	p.took = p.owner.clock.Now().Sub(p.started)
	p.cancel()
	close(p.done)
	p.owner.leave()
}

// abandon gives back a summary begun and never started: no outcome to count.
func (p *preparedSummary) abandon() {
	p.cancel()
	p.owner.leave()
}

// use lets p go as sent by the call's compaction.
func (p *preparedSummary) use(ctx context.Context) {
	if p.settle(ctx, &p.owner.used, "used") {
		p.log.DebugContext(ctx, "contextguard: prepared summary used", "contents", p.end-p.first)
	}
}

// drop lets p go before a compaction needed it.
func (p *preparedSummary) drop(ctx context.Context, why string) {
	if p.settle(ctx, &p.owner.dropped, "dropped") {
		p.log.InfoContext(ctx, "contextguard: prepared summary dropped", "reason", why, "prepared_agent", p.agent)
	}
}

// waste lets p go unused by the compaction that needed it, which runs inline.
func (p *preparedSummary) waste(ctx context.Context, why string) {
	if p.settle(ctx, &p.owner.wasted, "wasted") {
		p.log.InfoContext(ctx, "contextguard: prepared summary not used; compacting inline", "reason", why)
	}
}

// settle cancels p and, the first time only, counts the outcome; it reports
// whether this was the first time.
func (p *preparedSummary) settle(ctx context.Context, n *atomic.Int64, outcome string) bool {
	p.cancel()
	if !p.settled.CompareAndSwap(false, true) {
		return false
	}
	n.Add(1)
	p.owner.tel.preparedSummary(ctx, p.agent, outcome)
	return true
}

// preparedFits reports whether a prepared summary's request of count n is
// sent in place of one of count before: under the threshold, or within
// halfway to the room (as tokenTrigger) while freeing at least budget, so a
// request just past the threshold is not "compacted" again and again.
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

func (e *sessionEntry) preparing(agent string) bool {
	if e == nil {
		return false
	}
	p := e.prepared.Load()
	return p != nil && p.agent == agent && !p.ready()
}

// await waits for p with sess parked, at most timeout or until ctx ends,
// and returns how long it waited and whether p is written.
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
