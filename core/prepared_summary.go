package core

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Summaries prepared while tools run (ARCHITECTURE.md, One model call,
// Concurrency). When a response asks for tool calls and the next request
// will likely reach the trigger, the guard writes the summary of the request
// just sent in the background, while the tools run. The next call that
// compacts for tokens uses it when it still covers the request's prefix: it
// waits only for what is left of it, and the model's function calls and the
// tool results stay verbatim after it. A call that compacted is a request
// like any other: when its step brings the compacted request back to the
// trigger, the next summary is prepared from it, so that steps each a large
// share of the window compact on consecutive requests, none waiting, rather
// than every other request, each waiting.

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

// WithPreparedSummaries bounds how many summaries the guard prepares in the
// background at once, over all sessions: when a model response asks for
// tool calls and the next request will likely reach the trigger
// (WithEarlyCompaction), the guard writes the summary while the tools run,
// and the next model call waits only for what is left of it. limit 0
// (PreparedSummariesOff) turns this off; the default is
// DefaultPreparedSummaries. A negative limit is an error.
func WithPreparedSummaries(limit int) Option {
	return countOption("WithPreparedSummaries", limit, "turns prepared summaries off", nil, func(o *guardOptions, n int) {
		o.prepared = n
		o.preparedSet = true
	})
}

// WithEarlyCompaction sets how early a summary is prepared while tools run
// (WithPreparedSummaries): once the next request is predicted (this
// request's count plus the agent's recent growth per step, with a margin) to
// reach fraction f of the trigger. f must be in (0, 1] (0 is an error);
// the default is DefaultEarlyCompaction (the trigger itself). A lower f starts sooner, for
// tools faster than the summarizer, at the cost of a summary that covers
// less of the conversation: the compaction keeps the rest verbatim, and
// runs inline when that takes the request over the trigger.
func WithEarlyCompaction(f float64) AgentOption {
	return func(c *Agent) {
		if !(f > 0 && f <= 1) {
			c.errs = append(c.errs, fmt.Errorf("WithEarlyCompaction(%v): must be in (0, 1]", f))
			return
		}
		c.early = f
	}
}

// preparer holds the guard's background summaries: their bound, the context
// Close cancels, and what became of them.
type preparer struct {
	limit  int // at most this many at once; 0: off
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	running int
	closed  bool

	// What became of the prepared summaries, for tests and the log.
	started, used, dropped, wasted atomic.Int64
}

func newPreparer(limit int) *preparer {
	ctx, cancel := context.WithCancel(context.Background())
	return &preparer{limit: limit, ctx: ctx, cancel: cancel}
}

// enter counts a background summary in, unless the guard is closed or the
// bound is reached.
func (p *preparer) enter() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || p.running >= p.limit {
		return false
	}
	p.running++
	p.wg.Add(1)
	return true
}

// leave counts a background summary out.
func (p *preparer) leave() {
	p.mu.Lock()
	p.running--
	p.mu.Unlock()
	p.wg.Done()
}

// preparedSummary is one summary written in the background for the next
// compaction of one agent of a session. What it covers is fixed when it
// starts; the goroutine writes its result and then closes done, so a reader
// that saw done closed reads the result without a lock.
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
	cancel          context.CancelFunc
	done            chan struct{}

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

// errPreparedTimeout ends the wait for a prepared summary.
var errPreparedTimeout = errors.New("the prepared summary was not written within the summary timeout")

// Close cancels the summaries the guard prepares in the background and
// waits until they have returned, at most DefaultSummaryTimeout on the
// guard's clock: a summarizer that ignores its context is abandoned, as the
// summary timeout abandons it (CallBounded). Compactions go on inline
// afterwards; Close may be called more than once.
func (g *Guard) Close() error {
	if g == nil {
		return nil
	}
	p := g.prep
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
	stop := g.clock.AfterFunc(DefaultSummaryTimeout, func() { close(timeout) })
	defer stop()
	select {
	case <-done:
		return nil
	case <-timeout:
		return fmt.Errorf("contextguard: Close: %w", errPreparedTimeout)
	}
}

// Preparing reports whether a summary is being prepared for the agent in
// the session (Usage.Preparing). For adapters.
func (g *Guard) Preparing(appName, userID, sessionID, agentName string) bool {
	if g == nil {
		return false
	}
	e := g.sessions.peek(appName + "\x00" + userID + "\x00" + sessionID)
	if e == nil {
		return false
	}
	p := e.prepared.Load()
	return p != nil && p.agent == agentName && !p.ready()
}

// peek is the entry of key, nil when the table holds none; it neither
// creates nor takes it.
func (s *sessionTable) peek(key string) *sessionEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	if el, ok := s.byKey[key]; ok {
		return el.Value.(*sessionEntry)
	}
	return nil
}
