package core

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"google.golang.org/genai"
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

// Sizes of the growth prediction.
const (
	// growthSteps is how many of an agent's latest steps its growth per
	// step is taken from (the largest of them): tool steps of one task are
	// alike, and eight steps (a model call and its tool results each) span
	// the last few turns, enough to see a large step that comes back every
	// few turns (a test run, a wide query) as well as one that reads a large
	// file. With four, the stress matrix's debug sessions, whose large step
	// comes every third turn, compacted inline each time it came.
	growthSteps = 8
	// growthMargin scales the predicted growth of the next step: a step a
	// quarter larger than the largest recent one still finds its summary
	// prepared; a prepared summary that is not needed yet is kept for the
	// next step, at the cost of one more step kept verbatim after it.
	growthMargin = 1.25
)

// WithPreparedSummaries bounds how many summaries the guard prepares in the
// background at once, over all sessions: when a model response asks for
// tool calls and the next request will likely reach the trigger
// (WithEarlyCompaction), the guard writes the summary while the tools run,
// and the next model call waits only for what is left of it. limit 0
// (PreparedSummariesOff) turns this off; the default is
// DefaultPreparedSummaries. A negative limit is an error.
func WithPreparedSummaries(limit int) Option {
	return func(o *guardOptions) {
		if limit < 0 {
			o.errs = append(o.errs, fmt.Errorf("contextguard: WithPreparedSummaries(%d): must be >= 0 (0 turns prepared summaries off)", limit))
			return
		}
		o.prepared = limit
		o.preparedSet = true
	}
}

// WithEarlyCompaction sets how early a summary is prepared while tools run
// (WithPreparedSummaries): once the next request is predicted (this
// request's count plus the agent's recent growth per step, with a margin) to
// reach fraction f of the trigger. f must be in (0, 1]; the default is
// DefaultEarlyCompaction (the trigger itself). A lower f starts sooner, for
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
	started     time.Time
	cancel      context.CancelFunc
	done        chan struct{}

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

// prepareCandidate is what a call that did not compact keeps for its
// response's AfterModel, when the next request is predicted to reach the
// trigger: the values a background summary of this request starts from.
type prepareCandidate struct {
	ok     bool
	req    Request // contents, model and configuration; no Origin or Coverage
	sent   []*genai.Content
	prev   guardState
	inj    injection
	lim    limits
	cal    calibration
	before int
	// growth is the next step's predicted growth (with its margin).
	growth int
}

// noteGrowth records the step's growth and, when the next request is
// predicted to reach the share of the trigger the agent prepares at, keeps
// the call's values for a background summary (startPrepared). It runs at
// the end of every guarded call, with the session owned, and leaves in
// the agent's memory why its next compaction for tokens would run inline
// (CompactionEvent.InlineReason).
func (g *Guard) noteGrowth(t *turn, mem *agentMemory, s *step) {
	mem.candidate = prepareCandidate{}
	mem.unprepared = InlineNotPrepared
	if d := t.beforeEst - mem.lastEst; mem.lastEst > 0 && d > 0 {
		// Raw, so that a calibration learned in between (a session's
		// first report) is not taken for growth.
		mem.growth[mem.growthAt%growthSteps] = d
		mem.growthAt++
	}
	mem.lastEst = s.next.lastEstimate
	if p := t.sess.prepared.Load(); p != nil {
		// At most one per session: the agent's still serves its next call,
		// unless it cannot; another agent's leaves it none.
		if p.agent == t.cfg.name {
			mem.unprepared = InlinePreparedUnusable
		}
		return
	}
	if g.prep.limit == 0 || s.err != nil || t.mode != modeCompact || t.cfg.summarizer == nil || !g.prepares(t.cfg) {
		return
	}
	cand, ok := sentRequest(t, s)
	if !ok || cand.prev.floor != 0 {
		return
	}
	growth := 0
	for _, d := range mem.growth {
		growth = max(growth, d)
	}
	growth = cand.cal.scale(int(float64(growth) * growthMargin))
	predicted := satAdd(cand.before, growth)
	if float64(predicted) < float64(t.lim.threshold)*t.cfg.earlyFraction() {
		mem.unprepared = InlineNotPredicted
		return
	}
	if t.cfg.pruneKeep > 0 {
		// At the trigger, pruning frees all it can before any summary
		// (decide): a summary prepared for a request pruning will take back
		// under it would be thrown away.
		freed, _ := pruneFreed(t.est, t.recall, t.raw, s.contents, t.frontier, pruneFrontier(t.cfg.pruneKeep, t.raw))
		if float64(predicted-t.cal.scale(freed)) < float64(t.lim.threshold)*t.cfg.earlyFraction() {
			mem.unprepared = InlineNotPredicted
			return
		}
	}
	cand.ok, cand.growth = true, growth
	mem.candidate = cand
}

// sentRequest is the request the call let through, as a background summary
// starts from it: the raw contents, the contents sent, and the state, cut
// and calibration they were sent with. After a compaction these are the
// compaction's (its summary injected at its watermark), so that a step
// that brings the compacted request back to the trigger finds the next
// summary prepared. ok is false for a compaction that is not a summary
// at a watermark (one that sent no summary).
func sentRequest(t *turn, s *step) (prepareCandidate, bool) {
	cand := prepareCandidate{req: withContents(Request{Model: t.req.Model, Config: t.req.Config}, t.raw),
		sent: s.contents, prev: t.prev, inj: t.inj, lim: t.lim, cal: t.cal, before: t.before}
	if s.event == nil {
		return cand, true
	}
	if s.next.compactions == t.prev.compactions || s.next.summary == "" || s.next.watermark <= 0 {
		return cand, false
	}
	cand.prev, cand.before = s.next, s.next.tokens
	cand.inj = injection{cut: s.next.watermark, injected: true}
	cand.cal = newCalibration(s.next, t.est)
	return cand, true
}

// prepares reports whether the agent's compactions may use prepared
// summaries: not with a before-compaction hook, whose instructions or skip
// are decided when the compaction is due. The sliding window's compactions
// triggered by turns run between turns or inline; those triggered by
// tokens inside a turn use a summary prepared up to the turns it keeps.
func (g *Guard) prepares(*Agent) bool {
	return g.beforeHook == nil
}

// earlyFraction is WithEarlyCompaction's fraction, else the default.
func (c *Agent) earlyFraction() float64 {
	if c.early > 0 {
		return c.early
	}
	return DefaultEarlyCompaction
}

// inlineReason is why a compaction for reason in this call runs inline,
// "" when it does not, or is not for tokens (CompactionEvent.InlineReason).
// A compaction that uses a prepared summary replaces it
// (compactPrepared); one that runs inline although a summary was prepared
// for the call found it unusable.
func (t *turn) inlineReason(reason string) InlineReason {
	if t.ran() != RanInline || reason != ReasonTokens {
		return ""
	}
	if t.unprepared == "" {
		return InlineNotPrepared
	}
	return t.unprepared
}

// asksForTools reports whether the response asks for function calls.
func (r *Response) asksForTools() bool {
	if r.Content == nil {
		return false
	}
	for _, p := range r.Content.Parts {
		if p != nil && p.FunctionCall != nil {
			return true
		}
	}
	return false
}

// backgroundCall is the Call of a background summary: the session's IDs and
// the invocation's user content, on a context of the guard's that Close
// cancels, not the invocation's, which ends with the run.
type backgroundCall struct {
	context.Context
	app, user, session string
	userContent        *genai.Content
}

func (b backgroundCall) AppName() string             { return b.app }
func (b backgroundCall) UserID() string              { return b.user }
func (b backgroundCall) SessionID() string           { return b.session }
func (b backgroundCall) UserContent() *genai.Content { return b.userContent }

// startPrepared starts the background summary of the request the response
// answers, when the call kept a candidate (noteGrowth), the session has no
// summary prepared yet and the guard's bound allows. The compaction is begun
// here, with the session owned, on values of its own (a turn over a private
// session entry: its count cache and summary message are the goroutine's);
// the goroutine runs the engine's summary of the span (summarizeSpan: the
// same prompt, budget, rolling pieces and fallback as an inline compaction).
func (g *Guard) startPrepared(c Call, cfg *Agent, st State) {
	sess, err := g.sessions.acquire(c, sessionKey(c))
	if err != nil {
		return
	}
	defer g.sessions.release(sess)
	mem := sess.memory(cfg.name)
	cand := mem.candidate
	mem.candidate = prepareCandidate{}
	if !cand.ok || sess.prepared.Load() != nil || !g.prep.enter() {
		return
	}
	ctx, cancel := context.WithCancel(g.prep.ctx)
	own := &sessionEntry{key: sess.key, cache: newCountCache()}
	call := backgroundCall{Context: ctx, app: c.AppName(), user: c.UserID(), session: c.SessionID(), userContent: c.UserContent()}
	t, _ := g.newTurn(callInput{call: call, ro: st, cfg: cfg, sess: own, prev: cand.prev, mode: modeCompact, background: &cand}, cand.req)
	comp, _ := g.beginCompaction(t, cand.sent, cfg.policy.name(), ReasonTokens)
	end := 0
	if comp != nil {
		end = preparedEnd(t, comp, cand)
	}
	if end == 0 {
		// Nothing to summarize, or the request a prepared summary would
		// make (the summary, the continuation, the next step verbatim)
		// would not fit under the threshold: the compaction runs inline,
		// and no call is spent on a summary it would not use.
		if comp != nil {
			comp.span.End()
			mem.unprepared = InlineStepTooLarge
		}
		cancel()
		g.prep.leave()
		return
	}
	p := &preparedSummary{agent: cfg.name, first: comp.first, end: end, chain: mem.prefix.chainOf(cand.req.Contents, end),
		prevSummary: comp.prevSummary, compactions: cand.prev.compactions, userReq: comp.userReq,
		started: g.clock.Now(), cancel: cancel, done: make(chan struct{})}
	sess.prepared.Store(p)
	mem.unprepared = InlinePreparedUnusable // should the next call not use it
	g.prep.started.Add(1)
	t.log().Info("contextguard: preparing the summary while tools run",
		"tokens", cand.before, "threshold", cand.lim.threshold, "contents", end-comp.first, "kept_contents", comp.cov-end)
	go g.runPrepared(t, comp, p)
}

// preparedEnd is where the summary prepared by c ends, 0 for no summary
// worth preparing: the first of the strategy's splits (the newest turns or
// contents it keeps verbatim) whose request is likely to leave room for
// the next step (fitsPrepared), else the whole span when its request is
// likely to fit (preparedFits), whether or not it leaves that room.
// The request such a summary makes is the summary, the contents from the
// split on, and the step the tools are running for.
func preparedEnd(t *turn, c *compaction, cand prepareCandidate) int {
	for _, split := range t.cfg.policy.suffixes(t, c, ReasonTokens) {
		if fitsPrepared(c, cand, t.cal.scale(contentsTokens(t.est, t.raw[split:c.cov]))) {
			return split
		}
	}
	if preparedFits(cand.lim, preparedRequest(c, cand, 0), satAdd(cand.before, cand.growth), c.budget) {
		return c.cov
	}
	return 0
}

// preparedFits reports whether the request of count n that a prepared
// summary makes is sent in place of the request of count before. Under the
// threshold it is. Past it, by the contents the summary keeps verbatim (the
// step its tools ran for), it is when it stays halfway to the room the
// request has, as far as the guard lets a request go that it cannot
// compact below the trigger (decide), and frees at least a summary's
// length (budget). The next request then compacts again, from the summary
// prepared while this step's tools run, and the compaction waits for none
// of it; the inline compaction it replaces would have summarized the step
// too, in the model call. A summary that freed less than its own length
// would start a run of summaries of summaries.
func preparedFits(lim limits, n, before, budget int) bool {
	return n <= lim.threshold || (n <= lim.halfwayToRoom(lim.threshold) && satAdd(n, budget) <= before)
}

// preparedRequest is the request a summary prepared by c would make, about:
// the summary at the length c asks for at most, the continuation, the kept
// contents of tail tokens, and the next step verbatim (its predicted
// growth).
func preparedRequest(c *compaction, cand prepareCandidate, tail int) int {
	return satAdd(satAdd(satAdd(c.bare, c.budget), tail), cand.growth)
}

// fitsPrepared reports whether the request a summary prepared by c would
// make is likely to leave room for one more such step under the threshold
// (leavesRoom).
func fitsPrepared(c *compaction, cand prepareCandidate, tail int) bool {
	return leavesRoom(preparedRequest(c, cand, tail), cand.growth, cand.lim.threshold)
}

// leavesRoom reports whether a request of count n, compacted with a
// prepared summary, leaves room under the threshold for a step as large as
// the largest recent one (growth is the prediction, with its margin). A
// strategy's split that keeps the newest contents verbatim is prepared
// only when it does: otherwise the next step would reach the trigger at
// once, and a summary of the whole span frees more.
func leavesRoom(n, growth, threshold int) bool {
	return satAdd(n, int(float64(growth)/growthMargin)) <= threshold
}

// runPrepared writes p's summary on its own goroutine: the summary of the
// span its compaction covers, as fullSummary asks for it.
func (g *Guard) runPrepared(t *turn, c *compaction, p *preparedSummary) {
	defer g.prep.leave()
	defer close(p.done)
	defer func() {
		if r := recover(); r != nil {
			p.failed = true
			t.log().Error("contextguard: preparing the summary panicked; the next compaction runs inline", "panic", fmt.Sprint(r))
		}
		c.span.SetAttributes(attribute.Bool("contextguard.prepared", true))
		c.span.End()
	}()
	t.sess.mu.Lock() // the private entry: summarize parks it around the call
	var o outcome
	if p.end < c.cov {
		o = g.summarizeSpan(t, c, p.end, false, func(summary string) []*genai.Content {
			return keptTail(t, c, p.end, summary)
		})
	} else {
		o = g.fullSummary(t, c)
	}
	t.sess.mu.Unlock()
	p.summary, p.ev = o.summary, c.ev
	p.took = g.clock.Now().Sub(p.started)
	p.failed = t.ctx.Err() != nil
}

// chainOf is the chain hash of raw[:n], raw being the contents the memo was
// last brought to (the call just made): the memo is brought to raw again,
// which costs a key walk when it already holds it.
func (m *prefixMemo) chainOf(raw []*genai.Content, n int) uint64 {
	m.update(raw)
	return m.at(n)
}

// checkPrepared drops the session's prepared summary for the call's agent
// when the request no longer starts with what it covers (the history
// changed: another branch, an edited log, a compaction stored elsewhere).
func (g *Guard) checkPrepared(t *turn) {
	p := t.sess.prepared.Load()
	if p == nil || p.agent != t.cfg.name {
		return
	}
	if p.end > len(t.raw) || t.prefixChain(p.end) != p.chain || p.compactions != t.prev.compactions {
		g.dropPrepared(t, "the history it covers is no longer the request's")
	}
}

// dropPrepared cancels the session's prepared summary and counts it
// dropped, for why.
func (g *Guard) dropPrepared(t *turn, why string) {
	p := t.sess.prepared.Swap(nil)
	if p == nil {
		return
	}
	p.cancel()
	g.prep.dropped.Add(1)
	g.tel.preparedSummary(t.ctx, t.cfg.name, "dropped")
	t.log().Info("contextguard: prepared summary dropped", "reason", why, "prepared_agent", p.agent)
}

// wastePrepared counts a prepared summary that a compaction could not use,
// for why; its calls were spent for nothing.
func (g *Guard) wastePrepared(t *turn, p *preparedSummary, why string) {
	p.cancel()
	g.prep.wasted.Add(1)
	g.tel.preparedSummary(t.ctx, t.cfg.name, "wasted")
	t.log().Info("contextguard: prepared summary not used; compacting inline", "reason", why)
}

// compactPrepared is a compaction for tokens that uses the session's
// prepared summary when it covers the request's prefix: the request is the
// summary message followed by the contents after what it covers, verbatim
// (the model's function calls and the tool results: pair-safe), pruned as
// always. It waits for what is left of the summary, at most the summary
// timeout. When the summary cannot be used, or the request it makes does not
// fit under the threshold, the compaction runs inline (compactWith) and the
// prepared summary counts as wasted.
func (g *Guard) compactPrepared(t *turn, cs []*genai.Content, p *preparedSummary, s compactionStrategy, reason string) step {
	t.sess.prepared.Store(nil)
	c, done := g.beginCompaction(t, cs, s.name(), reason)
	if c == nil {
		g.wastePrepared(t, p, "nothing to compact")
		return done
	}
	end := p.end
	switch {
	case c.first != p.first || c.prevSummary != p.prevSummary || end > c.cov || end <= c.first ||
		(c.userReq != p.userReq && coveredRequest(t, end) != nil):
		// A request the summary covers must be the one it was written
		// for; a newer one (a turn begun since) is sent verbatim after it.
		g.wastePrepared(t, p, "the request changed since it was prepared")
		return g.compactWith(t, c, s, reason)
	case t.hookInstructions != "":
		g.wastePrepared(t, p, "the before-compaction hook gave instructions")
		return g.compactWith(t, c, s, reason)
	case pairSafeStart(t.raw, end) != end:
		g.wastePrepared(t, p, "it ends inside a call/response pair")
		return g.compactWith(t, c, s, reason)
	}
	waited, ok := g.awaitPrepared(t, p)
	if !ok || p.failed {
		g.wastePrepared(t, p, "it was not written within the summary timeout")
		return g.compactWith(t, c, s, reason)
	}
	tail := t.raw[end:]
	out := make([]*genai.Content, 0, len(tail)+1)
	out = append(out, summaryMessage(t, p.summary, c.userReq, coveredRequest(t, end)))
	out = append(out, tail...)
	out, _ = pruneToolResults(t.est, t.cfg.pruneKeep, t.recall, t.raw, out)
	o := outcome{contents: out, summary: p.summary, watermark: end, newEst: t.weigh(out)}
	o.newCount = t.cal.scale(o.newEst)
	if !preparedFits(t.lim, o.newCount, t.before, c.budget) {
		g.wastePrepared(t, p, "the request it makes is too large")
		return g.compactWith(t, c, s, reason)
	}
	c.ev.Ran, c.ev.InlineReason = RanPrepared, ""
	c.ev.Waited = waited
	c.ev.SummarizerCalls, c.ev.RollingCalls = p.ev.SummarizerCalls, p.ev.RollingCalls
	c.ev.Fallback, c.ev.FallbackReason = p.ev.Fallback, p.ev.FallbackReason
	c.ev.SummaryForm = p.ev.SummaryForm
	c.ev.ContentsSummarized = end - c.first
	c.summarizing = max(p.took-waited, 0)
	g.prep.used.Add(1)
	g.tel.preparedSummary(t.ctx, t.cfg.name, "used")
	return g.finishCompaction(t, c, o)
}

// errPreparedTimeout ends the wait for a prepared summary.
var errPreparedTimeout = errors.New("the prepared summary was not written within the summary timeout")

// awaitPrepared waits for p, with the session parked (a concurrent call for
// it waits, a re-entrant one is refused), at most the agent's summary
// timeout on the guard's clock, or until the call's context ends. It
// returns how long the call waited and whether p is written.
func (g *Guard) awaitPrepared(t *turn, p *preparedSummary) (time.Duration, bool) {
	if p.ready() {
		return 0, true
	}
	began := g.clock.Now()
	ctx, cancel := withTimeout(t.ctx, g.clock, t.cfg.summaryTimeout)
	defer cancel()
	ctx = t.sess.park(ctx)
	select {
	case <-p.done:
	case <-ctx.Done():
	}
	t.sess.unpark()
	return g.clock.Now().Sub(began), p.ready()
}

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
