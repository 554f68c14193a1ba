package core

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	metricnoop "go.opentelemetry.io/otel/metric/noop"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
	"google.golang.org/genai"
)

// PluginName is the name the guard's plugin registers under.
const PluginName = "contextguard"

// ErrIrreducible is returned (wrapped) by the plugin when the part of a
// request the guard cannot shrink (system instruction, tool declarations and
// the user's current request) does not fit the context window by itself.
var ErrIrreducible = errors.New("contextguard: the system instruction, tools and current request alone exceed the context window")

// ErrReentrant is returned (wrapped, with the session and agent) by the
// plugin's BeforeModelCallback and OnModelErrorCallback when the call comes
// from the summarizer of a compaction of the same session, that is when its
// context descends from the context the guard gave Summarize. Such a call
// would need the history that is being summarized, and the compaction waits
// for the summarizer, so it cannot be served; the summarizer should answer
// without it. Calls for other sessions, AfterModelCallback, and calls from
// the OnCompaction hook or a recovery model are served as usual.
var ErrReentrant = errors.New("contextguard: re-entrant call from the summarizer of the session's own compaction")

// Guard is the engine: it holds the per-agent configuration. One guard
// serves any number of sessions concurrently; Add may be called at any time,
// also after the plugin was built.
type Guard struct {
	// host is the host framework's functions (WithHost), with defaults.
	host     Host
	registry ModelRegistry
	log      *slog.Logger
	hook     func(context.Context, CompactionEvent)
	// beforeHook is WithBeforeCompaction's hook, nil without one.
	beforeHook func(context.Context, PendingCompaction) CompactionDecision
	tel        *telemetry
	optErrs    []error

	mu     sync.RWMutex
	agents map[string]*Agent
	// fallback is AddDefault's configuration; derived holds it under the
	// name of each agent it has guarded.
	fallback *Agent
	derived  map[string]*Agent
	errs     []error
	// unguardedLogged holds the names of agents without a configuration
	// whose first call was logged.
	unguardedLogged sync.Map

	sessions      *sessionTable
	triggerWarned sync.Map // agent+window -> bool
	reportWarned  sync.Map // agent -> bool: an unbelievable provider count was logged

	// configs caches the hashes of instructions and tools (prefix_count.go).
	configs configHashes
}

// New returns a guard that reads context windows from registry; a nil
// registry means the default one (NewCrushRegistry). Options are validated
// here; their errors are reported by Plugin and PluginConfig.
func New(registry ModelRegistry, opts ...Option) *Guard {
	o := guardOptions{logger: slog.Default()}
	for _, opt := range opts {
		if opt == nil {
			o.errs = append(o.errs, errors.New("contextguard: nil Option"))
			continue
		}
		opt(&o)
	}
	if registry == nil {
		registry = NewCrushRegistry(WithRegistryLogger(o.logger))
	}
	tel, err := newTelemetry(o.tracerProvider, o.meterProvider)
	if err != nil {
		o.errs = append(o.errs, fmt.Errorf("contextguard: creating OpenTelemetry instruments: %w", err))
		tel, _ = newTelemetry(tracenoop.NewTracerProvider(), metricnoop.NewMeterProvider())
	}
	return &Guard{
		host:       o.host.withDefaults(),
		tel:        tel,
		registry:   registry,
		log:        o.logger,
		hook:       o.onCompaction,
		beforeHook: o.beforeCompaction,
		optErrs:    o.errs,
		agents:     make(map[string]*Agent),
		derived:    make(map[string]*Agent),
		sessions:   newSessionTable(o.bounds.withDefaults()),
	}
}

// Err returns every configuration error recorded so far, joined, or nil.
func (g *Guard) Err() error {
	g.mu.RLock()
	defer g.mu.RUnlock()
	all := append(append([]error(nil), g.optErrs...), g.errs...)
	return errors.Join(all...)
}

// CompactionEvent describes one compaction, for the OnCompaction hook.
type CompactionEvent struct {
	// Agent and SessionID identify the conversation.
	Agent     string
	SessionID string
	// Strategy is the strategy that compacted.
	Strategy Strategy
	// Reason says what triggered it: "tokens" (the threshold), "turns" (the
	// sliding window's turn budget), "output_limit" (the previous response
	// stopped at the output limit near the window), "overflow" (the
	// provider rejected the request as too long) or ReasonRequested
	// (RequestCompaction asked for it, whatever the count).
	Reason string
	// TokensBefore and TokensAfter are the guard's calibrated counts of the
	// request before and after compaction.
	TokensBefore int
	TokensAfter  int
	// Threshold and Window are the numbers the decision was made against.
	Threshold int
	Window    int
	// ContentsSummarized is how many messages the new summary covers beyond
	// the previous summary.
	ContentsSummarized int
	// SummarizerCalls is how many times the summarizer was asked.
	SummarizerCalls int
	// RollingCalls is how many of those calls summarized an earlier piece
	// of a conversation too large for one summarizer input (a rolling
	// summary: each piece's summary is folded into the next piece's input,
	// so no message is left out).
	RollingCalls int
	// Discarded reports that the compacted request was not smaller than the
	// request before compaction, so it was not applied: the request was sent
	// as it was and nothing was stored.
	Discarded bool
	// Summary is the summary that went into the request (empty when the
	// compaction was discarded).
	Summary string
	// Fallback reports that the deterministic fallback summary was used, and
	// FallbackReason why.
	Fallback       bool
	FallbackReason string
	// Duration is the wall time the compaction took.
	Duration time.Duration
}

// turn is everything one BeforeModelCallback decides with.
type turn struct {
	ctx Call
	// ro is the session's state without the call's pending writes (ADK's
	// ReadonlyState): the todo list is read from it.
	ro  StateReader
	cfg *Agent
	// req is the request as it will be sent: its contents are rewritten
	// (injectSummary, pruning, the strategies).
	req    Request
	raw    []*genai.Content // contents as ADK built them
	prev   guardState
	est    cachedEstimator
	sess   *sessionEntry
	lim    limits
	cal    calibration
	inj    injection
	base   *slog.Logger
	logger *slog.Logger // base with agent and session, built on first use
	before int          // calibrated count before compaction
	// sumWindow is the context window of the summarizer's model.
	sumWindow int
	// spanCtx carries the compaction span to the summarizer call.
	spanCtx context.Context
	// event is the compaction this turn made, for the OnCompaction hook.
	event *CompactionEvent
	// rejected marks recovery from the provider's rejection of this very
	// request: its calibration comes from the provider's own count of it.
	rejected bool
	// focus is the focus of a requested compaction (compaction_request.go).
	focus string
	// hookInstructions are the before-compaction hook's instructions for
	// this compaction (compaction_hooks.go).
	hookInstructions string
	// prefix is the stored prefix record and how it matched
	// (prefix_count.go); frontier is the tool steps pruned (pruning.go).
	prefix   prefixMatch
	frontier int
}

// irreducibleSize is the size of a request (raw estimate n) that decides
// ErrIrreducible: the raw estimate, never scaled by a calibration factor
// (calibration.go), except when the provider itself rejected this request
// and said how large it was.
func (t *turn) irreducibleSize(n int) int {
	if t.rejected {
		return t.cal.scale(n)
	}
	return n
}

// guardRequest does the work of BeforeModelCallback while it owns the
// session (see sessionTable): st is the state the call reads and writes,
// ro the session's state without the call's writes. It returns the
// contents to send in place of req's, and the compaction it made, if any,
// for the hook, which runs once the session is released.
func (g *Guard) guardRequest(c Call, st State, ro StateReader, cfg *Agent, req Request) ([]*genai.Content, *CompactionEvent, error) {
	sess, err := g.sessions.acquire(c, sessionKey(c))
	if err != nil {
		return req.Contents, nil, sessionError(c, cfg.name, err)
	}
	defer g.sessions.release(sess)

	sio := cfg.stateIO(g.log)
	var prev guardState
	if st != nil {
		prev = sio.load(st)
	}
	mem := sess.memory(cfg.name)
	prev.request = sio.requestAt(st, mem.requestKey)
	prev = g.recall(c, cfg, mem, st, sio, &req, prev)
	if st != nil {
		defer mem.rememberCompaction(st, prev.compactions)
	}
	t := &turn{
		ctx:  c,
		ro:   ro,
		cfg:  cfg,
		req:  req,
		raw:  req.Contents,
		prev: prev,
		sess: sess,
		base: g.log,
	}
	t.est = sess.estimator(cfg, req.Model)
	t.lim = g.requestLimits(cfg, &req)
	t.inj = injectSummary(t)
	t.prefix = g.matchPrefix(t, st, sio)
	if !t.prefix.matched {
		t.est.prefetch(t.req.Contents)
	}
	t.cal = newCalibration(prev, t.est)

	next, err := g.decide(t)
	if t.inj.anchor != "" && next.anchor == "" && next.compactions == t.prev.compactions {
		// State written before the host anchored coverage: the summary
		// still in use gets the anchor of the cut located for it, which
		// decides the later calls' cuts.
		next.anchor = t.inj.anchor
	}
	next.window = t.lim.window
	next.threshold = t.lim.threshold
	recordUsage(t, &next)
	if st != nil {
		sio.save(st, prev, next)
		t.savePrefix(st, sio)
	}
	return t.req.Contents, t.event, err
}

// fireHook calls the OnCompaction hook with ev, when there is both. It is
// called after the session was released, so a hook that calls back into the
// guard for the same session is served.
func (g *Guard) fireHook(ctx context.Context, ev *CompactionEvent) {
	if ev != nil && g.hook != nil {
		g.hook(ctx, *ev)
	}
}

// log returns the turn's logger, built only when something is logged so the
// common path allocates nothing for it.
func (t *turn) log() *slog.Logger {
	if t.logger == nil {
		t.logger = t.base.With("agent", t.cfg.name, "session", t.ctx.SessionID())
	}
	return t.logger
}

// window is the agent's context window: WithMaxTokens, else the registry's.
func (g *Guard) window(cfg *Agent, modelName string) int {
	if cfg.maxTokens > 0 {
		return cfg.maxTokens
	}
	if w := g.registry.ContextWindow(modelName); w > 0 {
		return w
	}
	return DefaultContextWindow
}

// limits applies the agent's trigger to its window, warning once per agent and
// window when the configured trigger does not fit.
func (g *Guard) limits(cfg *Agent, modelName string) limits {
	w := g.window(cfg, modelName)
	l, ok := cfg.limitsFor(w)
	if !ok {
		if _, seen := g.triggerWarned.LoadOrStore(cfg.name+"\x00"+strconv.Itoa(w), true); !seen {
			g.log.Warn("contextguard: the configured trigger does not fit the window; using the default trigger",
				"agent", cfg.name, "window", w, "threshold", l.threshold)
		}
	}
	return l
}

// requestLimits is limits for one request: when the request sets
// MaxOutputTokens, the trigger keeps room for the output
// (limits.withOutput), with a warning once per agent, window and output
// limit when that room would leave the prompt too little of the window.
func (g *Guard) requestLimits(cfg *Agent, req *Request) limits {
	l := g.limits(cfg, req.Model)
	out := maxOutputTokens(req)
	if out == 0 {
		return l
	}
	lo, ok := l.withOutput(out)
	if !ok {
		if _, seen := g.triggerWarned.LoadOrStore("output\x00"+cfg.name+"\x00"+strconv.Itoa(l.window)+"\x00"+strconv.Itoa(out), true); !seen {
			g.log.Warn("contextguard: the request's MaxOutputTokens leaves too little of the window for the prompt; not keeping room for the output",
				"agent", cfg.name, "window", l.window, "max_output_tokens", out, "threshold", l.threshold)
		}
	}
	return lo
}

// maxOutputTokens is the request's MaxOutputTokens, 0 when it sets none.
func maxOutputTokens(req *Request) int {
	if req == nil || req.Config == nil || req.Config.MaxOutputTokens <= 0 {
		return 0
	}
	return int(req.Config.MaxOutputTokens)
}

// injectSummary replaces the contents the stored summary covers by the
// summary message (ARCHITECTURE.md, Summary injection and the watermark). Without a match it cuts nothing. When the
// summary covers the user's current request (currentRequest), the message
// carries the request's attachments, and quotes the request itself if the
// stored continuation does not (state of the earlier guard, or stale or
// corrupt state), so the request is never dropped.
func injectSummary(t *turn) injection {
	if t.prev.summary == "" {
		return injection{}
	}
	w, reason, anchor := locateCut(t.raw, t.prev, t.est.fingerprint, t.req.Coverage)
	if w == 0 {
		t.log().Warn("contextguard: stored summary not applied; sending the contents as they are",
			"reason", reason, "watermark", t.prev.watermark, "anchor", t.prev.anchor, "contents", len(t.raw))
		return injection{reason: reason}
	}
	start := pairSafeStart(t.raw, w)
	request := t.prev.userRequest
	cur := coveredRequest(t, start)
	if cur != nil && !quotesRequest(request, cur) {
		t.log().Debug("contextguard: the stored continuation does not quote the user's latest message; quoting it",
			"watermark", w)
		request = boundContinuation(t, continuationText(cur))
	}
	out := make([]*genai.Content, 0, len(t.raw)-start+1)
	out = append(out, summaryMessage(t, t.prev.summary, request, cur))
	out = append(out, t.raw[start:]...)
	t.req.Contents = out
	return injection{cut: start, injected: true, anchor: anchor}
}

// decide compares the calibrated count with the trigger and compacts when it
// is reached, or, for the sliding-window strategy, when more turns than its
// budget were added since the last compaction. With tool-result pruning the
// request is pruned first and counted as pruned, so the summarizer runs only
// when pruning was not enough. It returns the state to persist.
func (g *Guard) decide(t *turn) (guardState, error) {
	next := t.prev
	t.req.Contents = pruneToolResults(t, t.req.Contents)
	est := t.requestEstimate()
	count := t.cal.count(est)
	t.before = count

	trigger := t.lim.threshold
	if f, room := t.prev.floor, t.lim.room(); f > trigger && f < room {
		// The last compaction could not get below the threshold (the
		// irreducible part is too large); compact again only once the
		// conversation has grown by half the room that is left (the window
		// less the room kept for the output).
		trigger = f + (room-f)/2
	}
	sliding := t.cfg.strategy == StrategySlidingWindow
	reason := ""
	turns := 0
	switch {
	case t.prev.request.pending:
		reason = ReasonRequested
	case count > trigger:
		reason = "tokens"
	case t.prev.compactNext != 0:
		// The previous response stopped at the output limit near the
		// window (cutAtOutputLimit).
		reason = "output_limit"
	case sliding:
		var due bool
		if turns, due = slidingTurnsDue(t); due {
			reason = "turns"
		}
	}
	if reason == "" {
		next.lastEstimate = est
		t.recordPrefix(est)
		return next, nil
	}
	t.prev.compactNext = 0 // one compaction answers it, whatever its outcome
	t.takeRequest()        // one compaction answers it too, even one the hook skips
	if g.beforeCompaction(t, reason, count) {
		next.compactNext = 0
		next.request = compactionRequest{}
		next.lastEstimate = est
		return next, nil
	}

	args := []any{"reason", reason, "tokens", count, "threshold", t.lim.threshold, "window", t.lim.window,
		"strategy", t.cfg.strategy, "contents", len(t.raw)}
	if reason == "turns" {
		args = append(args, "turns", turns)
	}
	t.log().Info("contextguard: trigger reached; compacting", args...)
	if sliding {
		return g.compactSlidingWindow(t, reason)
	}
	return g.compactThreshold(t, reason)
}

// afterResponse is the engine's part of AfterModelCallback, for a final
// response of an agent the guard guards: it records the provider's
// prompt-token count, when it is believable for the request the guard let
// through (calibration.go), and handles a response that stopped at the
// output limit near the window (recovery.go, cutAtOutputLimit). It returns
// the content that replaces the response's, nil to let the response
// through untouched.
func (g *Guard) afterResponse(c Call, cfg *Agent, st State, resp *Response) *genai.Content {
	if n := resp.promptTokens(); n != 0 {
		g.recordReport(c, cfg, st, n)
	}
	if resp.cutAtOutputLimit() {
		return g.cutAtOutputLimit(c, cfg, st, resp)
	}
	return nil
}

// promptTokens is the provider's prompt-token count of the request, 0 when
// the adapter does not count.
func (r *Response) promptTokens() int {
	if r.UsageMetadata == nil {
		return 0
	}
	return int(r.UsageMetadata.PromptTokenCount)
}

// cutAtOutputLimit reports whether the response stopped at the output
// limit.
func (r *Response) cutAtOutputLimit() bool {
	return r.FinishReason == genai.FinishReasonMaxTokens
}

// ---------------------------------------------------------------------------
// Per-session entries (ARCHITECTURE.md, Concurrency)
// ---------------------------------------------------------------------------

// sessionTable holds what the guard keeps in memory per session: the
// per-content count cache, the last summary message built and the record of
// each agent (recovery.go), and the ownership that serialises the guard's
// work on a session, so it never summarizes the same history twice at once
// while other sessions proceed.
//
// Ownership and user code. A call owns a session from acquire to release.
// The entry's mutex is held while the guard itself works, never while user
// code runs:
//
//   - a Summarizer runs with the mutex released and the session marked busy
//     (park, unpark): the call still owns the session, so a concurrent call
//     for it waits, in acquire, until the owner releases it, and gives up
//     when its own context is done; the wait never holds a mutex;
//   - a call whose context descends from the summarizer's (the summarizer,
//     or an agent it runs, calling back into the guard for the session it
//     summarizes) would wait for itself: acquire recognises it by the mark
//     the summarizer's context carries (withReentry) and returns
//     ErrReentrant at once;
//   - the OnCompaction hook and a recovery model run after release, so they
//     may call the guard for the same session.
//
// A summarizer that calls back with a context that does not descend from
// its own waits like any concurrent call, until the summary timeout makes
// the owner stop waiting for the summarizer (CallBounded) and finish with
// the fallback summary. The TokenCounter and the ModelRegistry run with the
// mutex held: they answer synchronously and must not call the guard.
type sessionTable struct {
	mu    sync.Mutex
	max   sessionBounds // past either, the least recently used idle entries are dropped
	bytes int           // what the entries retain (retainedBytes), as last accounted
	byKey map[string]*list.Element
	order *list.List // front: most recently used
}

type sessionEntry struct {
	key   string
	mu    sync.Mutex
	users int // owners and waiters; an entry in use is never evicted
	// accounted is the entry's share of the table's bytes; guarded by the
	// table's mutex.
	accounted int

	// Guarded by mu.
	//
	// busy is set while the owner runs user code with mu released (park),
	// and cleared, its done channel closed, when the owner releases the
	// session.
	busy    *busyMark
	cache   *countCache
	summary summaryMemo
	// agents is the in-memory record of each agent of the session that
	// survives a failed model call (recovery.go).
	agents []*agentMemory
}

// busyMark marks a session whose owner runs user code with the entry's
// mutex released.
type busyMark struct {
	done chan struct{} // closed when the owner releases the session
}

// summaryMemo reuses the summary message across calls while the stored
// summary is unchanged, so its text is neither rebuilt nor recounted.
type summaryMemo struct {
	summary, request string
	msg              *genai.Content
}

func newSessionTable(b sessionBounds) *sessionTable {
	return &sessionTable{max: b, byKey: make(map[string]*list.Element), order: list.New()}
}

// acquire makes the caller the owner of the session's entry, with its mutex
// held; the caller must call release. While another call owns the session
// and runs user code, acquire waits for it to release the session; it
// returns ctx's error if ctx is done first, and ErrReentrant (unwrapped) at
// once if ctx descends from that owner's summarizer context.
func (s *sessionTable) acquire(ctx context.Context, key string) (*sessionEntry, error) {
	s.mu.Lock()
	el, ok := s.byKey[key]
	if !ok {
		el = s.order.PushFront(&sessionEntry{key: key, cache: newCountCache()})
		s.byKey[key] = el
	} else {
		s.order.MoveToFront(el)
	}
	e := el.Value.(*sessionEntry)
	e.users++
	s.evictLocked()
	s.mu.Unlock()

	for {
		e.mu.Lock()
		b := e.busy
		if b == nil {
			return e, nil
		}
		e.mu.Unlock()
		if err := b.wait(ctx); err != nil {
			s.leave(e)
			return nil, err
		}
	}
}

// release ends the caller's ownership of e: it clears the busy mark, waking
// the calls waiting for the session, unlocks e, accounts what e retains
// and evicts idle entries past the table's bounds.
func (s *sessionTable) release(e *sessionEntry) {
	if b := e.busy; b != nil {
		e.busy = nil
		close(b.done)
	}
	size := e.retainedBytes()
	e.mu.Unlock()
	s.mu.Lock()
	s.bytes += size - e.accounted
	e.accounted = size
	e.users--
	s.evictLocked()
	s.mu.Unlock()
}

// leave drops a user of e, evicting idle entries past the table's bounds.
func (s *sessionTable) leave(e *sessionEntry) {
	s.mu.Lock()
	e.users--
	s.evictLocked()
	s.mu.Unlock()
}

func (s *sessionTable) evictLocked() {
	for el := s.order.Back(); el != nil && (s.order.Len() > s.max.sessions || s.bytes > s.max.bytes); {
		prev := el.Prev()
		if e := el.Value.(*sessionEntry); e.users == 0 {
			s.order.Remove(el)
			delete(s.byKey, e.key)
			s.bytes -= e.accounted
		}
		el = prev
	}
}

// park releases the mutex of an entry the caller owns so that user code can
// run, marking the entry busy: the caller stays its owner, and other calls
// wait for it in acquire. It returns ctx marked as coming from this owner's
// user code (withReentry), for the user code to run under. unpark takes the
// mutex back; the mark stays until release.
func (e *sessionEntry) park(ctx context.Context) context.Context {
	if e.busy == nil {
		e.busy = &busyMark{done: make(chan struct{})}
	}
	b := e.busy
	e.mu.Unlock()
	return withReentry(ctx, b)
}

// unpark takes back the mutex park released.
func (e *sessionEntry) unpark() { e.mu.Lock() }

// wait waits until the owner that set b releases the session. A call from
// that owner's own user code cannot be served (ErrReentrant); a call whose
// ctx is done gives up with ctx's error.
func (b *busyMark) wait(ctx context.Context) error {
	if isReentrant(ctx, b) {
		return ErrReentrant
	}
	select {
	case <-b.done:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// reentryKey is the context key of the busy marks of the sessions whose
// user code a context comes from.
type reentryKey struct{}

// reentry is one mark in a context's chain: a summarizer's context may
// itself descend from another session's summarizer.
type reentry struct {
	mark   *busyMark
	parent *reentry
}

// withReentry returns ctx marked as coming from the user code run under b.
func withReentry(ctx context.Context, b *busyMark) context.Context {
	parent, _ := ctx.Value(reentryKey{}).(*reentry)
	return context.WithValue(ctx, reentryKey{}, &reentry{mark: b, parent: parent})
}

// isReentrant reports whether ctx comes from the user code run under b.
func isReentrant(ctx context.Context, b *busyMark) bool {
	r, _ := ctx.Value(reentryKey{}).(*reentry)
	for ; r != nil; r = r.parent {
		if r.mark == b {
			return true
		}
	}
	return false
}

// sessionError says which session and agent a call that acquire refused was
// for.
func sessionError(c Call, agentName string, err error) error {
	if errors.Is(err, ErrReentrant) {
		return fmt.Errorf("%w: session %q, agent %q: the call comes from the summarizer compacting this session; answer without calling the guard for it",
			err, c.SessionID(), agentName)
	}
	return fmt.Errorf("contextguard: session %q, agent %q: waiting for the session's compaction: %w", c.SessionID(), agentName, err)
}

// estimator is the one place a turn's estimator is built, for
// BeforeModelCallback and the overflow path alike: the agent's (its
// WithTokenCounter, else the built-in estimator of the model's family),
// counting through the session's cache. It starts a new pass over the cache.
// The caller owns the entry.
func (e *sessionEntry) estimator(cfg *Agent, modelName string) cachedEstimator {
	e.cache.begin()
	est, salt := cfg.estimator(modelName)
	return cachedEstimator{tokenEstimator: est, cache: e.cache, salt: salt}
}

// PanicError is a panic of user code run by CallBounded: the value the code
// panicked with and the goroutine's stack at the panic. For adapters.
type PanicError struct {
	Value any
	Stack []byte
}

// Error describes the panic by its value.
func (p *PanicError) Error() string { return fmt.Sprintf("panic: %v", p.Value) }

// CallBounded runs f(ctx) on its own goroutine and returns its result, or
// stops waiting when ctx is done first, so that user code that ignores its
// context (a model stuck on the network) cannot hold the agent past ctx's
// deadline. An abandoned call keeps running until f returns; its result goes
// to a buffered channel, so its goroutine then exits, and a late panic is
// recovered and dropped. A panic of f is returned as a *PanicError. For adapters (the recovery model's call).
func CallBounded[T any](ctx context.Context, f func(context.Context) (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		defer func() {
			if p := recover(); p != nil {
				r = result{err: &PanicError{Value: p, Stack: debug.Stack()}}
			}
			done <- r
		}()
		if err := ctx.Err(); err != nil {
			// The wait ended before the call started: do not start it.
			r.err = fmt.Errorf("not started: %w", context.Cause(ctx))
			return
		}
		r.v, r.err = f(ctx)
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		select {
		case r := <-done: // it returned too: its answer wins
			return r.v, r.err
		default:
		}
		var zero T
		return zero, fmt.Errorf("stopped waiting for it: %w", context.Cause(ctx))
	}
}

func sessionKey(c Call) string {
	return c.AppName() + "\x00" + c.UserID() + "\x00" + c.SessionID()
}

// errorf builds an error wrapping ErrIrreducible with details.
func irreducibleError(need, window int) error {
	return fmt.Errorf("%w: about %d tokens are needed, the window is %d", ErrIrreducible, need, window)
}
