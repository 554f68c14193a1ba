package core

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"

	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/calib"
	"github.com/adk-contextguard/contextguard/core/internal/countcache"
	"github.com/adk-contextguard/contextguard/core/internal/state"
	"github.com/adk-contextguard/contextguard/core/internal/window"
)

// PluginName is the name the guard's plugin registers under.
const PluginName = "contextguard"

// Guard is the engine: it holds the per-agent configuration. One guard
// serves any number of sessions concurrently; Add may be called at any time,
// also after the plugin was built.
type Guard struct {
	host     Host  // WithHost's, with defaults
	clock    Clock // WithClock's
	log      *slog.Logger
	appender SessionAppender // WithSessionService's
	tel      *telemetry
	optErrs  []error
	sessions *sessionTable
	prep     *preparer // the summaries prepared while tools run

	// Embedded parts, whose methods serve the guard's callers.
	hooks
	windows     // the registry's windows and their warnings (agent_config.go)
	agentTable  // the agents' configurations (agents.go)
	reports     // the provider's counts (calibration.go)
	configCache // the instructions' and tools' hashes and estimates (config_hash.go)
}

// Err returns every configuration error recorded so far, joined, or nil.
func (g *Guard) Err() error {
	g.mu.RLock()
	defer g.mu.RUnlock()
	all := append(append([]error(nil), g.optErrs...), g.errs...)
	return errors.Join(all...)
}

// hooks are the user's compaction hooks, nil when not given.
type hooks struct {
	hook       func(context.Context, CompactionEvent)                      // WithOnCompaction's
	beforeHook func(context.Context, PendingCompaction) CompactionDecision // WithBeforeCompaction's
}

// fireHook calls the OnCompaction hook with ev, after the session was
// released so a hook may call back into the guard.
func (h *hooks) fireHook(ctx context.Context, ev *CompactionEvent) {
	if ev != nil && h.hook != nil {
		h.hook(ctx, *ev)
	}
}

// CheckAgent says why the guard cannot answer for agentName (a nil guard,
// an empty name, an agent not guarded), nil when it can. For adapters.
func (g *Guard) CheckAgent(name string) error {
	switch {
	case g == nil:
		return errors.New("contextguard: the guard is nil")
	case name == "":
		return errors.New("contextguard: the agent name is empty")
	case g.agent(name) == nil:
		return fmt.Errorf("contextguard: agent %q is not guarded; add it with Add", name)
	}
	return nil
}

// turn is the state of one model call (ARCHITECTURE.md, One model call),
// built by newTurn for every kind of call. Only the pipeline (this file and
// compaction.go) writes it; each step returns the contents to send (step).
type turn struct {
	ctx     Call
	ro      StateReader // without the call's pending writes: the todo list is read from it
	cfg     *Agent
	req     Request // as ADK built it, never rewritten
	prev    state.Agent
	measure        // what the steps that only count and cut take
	config  uint64 // configHash of the system instruction, tools and estimator
	sess    *sessionEntry
	lim     window.Limits
	inj     injection
	base    *slog.Logger
	logger  *slog.Logger // base with agent and session, built on first use
	// before is the calibrated count before compaction, beforeEst its raw
	// estimate.
	before, beforeEst int
	// rejected: recovery from the provider's rejection of this request,
	// calibrated with the provider's own count of it.
	rejected bool
	// focus is a requested compaction's (compaction_request.go),
	// hookInstructions the before-compaction hook's.
	focus, hookInstructions string
	storedPrefix            string      // the prefix record in state, "" for none
	prefix                  prefixMatch // prefix_count.go
	frontier                int         // the tool steps pruned
	mode                    callMode    // session_switch.go
	recall                  bool        // the request declares the recall tool
	chain                   countcache.Chain
	// betweenTurns: after a run ended, raw is the next turn's history
	// without the user's next message (between_turns.go).
	betweenTurns afterRun
	// unprepared and sentEst are as the agent's last call left them
	// (agentMemory).
	unprepared InlineReason
	sentEst    int
}

// callInput is what a call's state is built from, beside its request.
type callInput struct {
	call         Call
	ro           StateReader
	cfg          *Agent
	sess         *sessionEntry
	prev         state.Agent
	storedPrefix string
	memo         *countcache.Memo // nil: the call hashes into its own
	mode         callMode
	rejection    *rejection        // set by recovery
	betweenTurns afterRun          // set after a run ended
	background   *prepareCandidate // set for a summary prepared while tools run
	unprepared   InlineReason
	sentEst      int
}

// rejection is the limits recovery compacts to and the calibration the
// provider's own count gives (recovery.go).
type rejection struct {
	lim window.Limits
	cal calib.Calibration
}

// newTurn builds the state of a call of req: it injects the stored summary,
// matches the stored prefix record and returns the contents to send so far.
func (g *Guard) newTurn(in callInput, req Request) (*turn, []*genai.Content) {
	memo := in.memo
	if memo == nil {
		memo = &countcache.Memo{}
	}
	t := &turn{
		ctx: in.call, ro: in.ro, cfg: in.cfg, req: req, prev: in.prev, sess: in.sess,
		measure:      measure{Raw: req.Contents},
		base:         g.log,
		storedPrefix: in.storedPrefix,
		mode:         in.mode,
		chain:        countcache.Chain{Memo: memo},
		recall:       declaresRecall(req.Config),
		betweenTurns: in.betweenTurns,
		unprepared:   in.unprepared,
		sentEst:      in.sentEst,
	}
	t.Est = in.sess.estimator(in.cfg, req.Model)
	t.config = g.configHash(req.Config, t.Est.Salt)
	t.Fixed = g.fixedOf(t.config, t.Est, &req)
	if b := in.background; b != nil {
		t.lim, t.Cal, t.inj, t.before = b.lim, b.cal, b.inj, b.before
		return t, b.sent
	}
	if r := in.rejection; r != nil {
		t.lim, t.Cal, t.rejected = r.lim, r.cal, true
	} else {
		t.lim = g.requestLimits(in.cfg, &req)
	}
	var cs []*genai.Content
	t.inj, cs = injectSummary(t)
	own := prefixRecord{contents: len(t.Raw), cut: t.inj.cut, injected: t.inj.injected,
		compactions: in.prev.Compactions, total: in.prev.LastEstimate, config: t.config}
	t.prefix = matchPrefix(in.cfg.stateIO(g.log), in.storedPrefix, own, t.Raw, &t.chain)
	if t.rejected {
		t.before = t.Cal.Count(t.Weigh(cs))
	} else {
		// Calibrated once the summary is placed (continuationBound).
		t.Cal = newCalibration(in.prev, t.Est)
	}
	return t, cs
}

// withContents is req carrying cs: the steps pass contents as values.
func withContents(req Request, cs []*genai.Content) Request {
	req.Contents = cs
	return req
}

// irreducibleSize is the size of a request of raw estimate n that decides
// ErrIrreducible: n unscaled, unless the provider rejected this request and
// said how large it was.
func (t *turn) irreducibleSize(n int) int {
	if t.rejected {
		return t.Cal.Scale(n)
	}
	return n
}

// log returns the turn's logger, built on first use so the common path
// allocates nothing.
func (t *turn) log() *slog.Logger {
	if t.logger == nil {
		t.logger = t.base.With("agent", t.cfg.name, "session", t.ctx.SessionID())
	}
	return t.logger
}

// step is what a pipeline step decides; event is the compaction made, for
// the OnCompaction hook.
type step struct {
	contents []*genai.Content
	next     state.Agent
	event    *CompactionEvent
	err      error
}

// guardRequest does BeforeModelCallback's work while it owns the session:
// st is the state the call reads and writes, ro without the call's writes.
// It returns the contents to send and the compaction made, for the hook,
// which runs once the session is released.
func (g *Guard) guardRequest(c Call, st State, ro StateReader, cfg *Agent, req Request, mode callMode) ([]*genai.Content, *CompactionEvent, error) {
	sess, err := g.sessions.acquire(c, sessionKey(c))
	if err != nil {
		return req.Contents, nil, sessionError(c, cfg.name, err)
	}
	defer g.sessions.release(sess)

	sio := cfg.stateIO(g.log)
	in := callInput{call: c, ro: ro, cfg: cfg, sess: sess, mode: mode}
	if st != nil {
		in.prev = sio.Load(st)
		in.storedPrefix = sio.Str(st, keyPrefix)
	}
	mem := sess.memory(cfg.name)
	mem.model = req.Model
	in.unprepared, in.sentEst = mem.unprepared, mem.lastEst
	in.prev.Request = sio.RequestAt(st, mem.requestKey)
	in.prev = g.recall(c, cfg, mem, st, sio, &req, in.prev)
	if st != nil {
		defer mem.rememberCompaction(st, in.prev.Compactions)
	}
	in.memo = &mem.prefix
	t, cs := g.newTurn(in, req)
	if !t.prefix.matched {
		t.Est.Prefetch(cs)
	}
	sess.checkPrepared(t.ctx, cfg.name, t.Raw, &t.chain, t.prev.Compactions)

	s := g.decide(t, cs)
	sess.rememberCall(cfg, t.req, mode, max(t.before, t.prev.SummarizedAt))
	t.inj.reanchor(t.prev, &s.next)
	s.next.Window, s.next.Threshold = t.lim.Window, t.lim.Threshold
	s.next.MaxOutput = window.MaxOutput(req.Config)
	recordUsage(t.Cal, &s.next)
	g.prep.noteGrowth(t, mem, &s)
	mem.message.observe(t.prev, t.measure, t.prefix.matched && s.event == nil && s.err == nil, s.next)
	if st != nil {
		sio.Save(st, in.prev, s.next)
		t.prefix.save(st, sio)
	}
	return s.contents, s.event, s.err
}

// decide compacts cs, the contents with the summary injected, when its
// count, pruned first (pruneAndCount), reaches the trigger or the strategy
// says a compaction is due. Pruning that took a request from over the
// trigger to under it is reported as a compaction (prunedAtTrigger).
func (g *Guard) decide(t *turn, cs []*genai.Content) step {
	trigger := tokenTrigger(t.lim, t.prev.Floor)
	r := t.pruneAndCount(cs, trigger)
	t.frontier, t.prefix.body, t.before, t.beforeEst = r.frontier, r.body, r.count, r.est
	next := t.prev
	next.PruneFrontier, next.LastEstimate = t.frontier, r.est
	next.PrefixKept, next.Invalidated = prefixKept(t.measure, &t.prefix, t.prev.LastEstimate, r.cs, r.est, r.rewritten)
	if r.rewritten >= 0 {
		// The provider's last count no longer bounds it from below.
		next.RealTokens = 0
	}
	reason, why := t.compactionReason(r.count, trigger, r.cs)
	if reason != "" {
		return g.compactDue(t, r.cs, next, reason, why)
	}
	t.prefix.next = t.prefix.ownRecord(t.Raw, &t.chain, t.frontier, r.est)
	s := step{contents: r.cs, next: next}
	if r.unpruned > 0 && t.nextTurnCount(r.unpruned) > trigger {
		s.event = prunedAtTrigger(g.tel, t, r.unpruned, r.count, next)
	}
	return s
}

// judged is the request decide judges, as this call's pruning leaves it.
// body is the estimate after the summary (prefixMatch.estimate); unpruned
// the count with the stored frontier when pruning moves it, else 0;
// rewritten the first content pruning rewrote, -1 for none.
type judged struct {
	cs                                              []*genai.Content
	frontier, est, body, count, unpruned, rewritten int
}

// tokenTrigger is the count past which a call compacts: the threshold, or,
// when the last compaction could not get below it (floor), halfway from the
// floor to the room, so it compacts again only after that much growth.
func tokenTrigger(lim window.Limits, floor int) int {
	if room := lim.Room(); floor > lim.Threshold && floor < room {
		return lim.HalfwayToRoom(floor)
	}
	return lim.Threshold
}

// pruneAndCount prunes cs to the stored frontier, further when that frees
// WithPruningMinFree, or as far as it can over the trigger (a compaction
// would rewrite more), and counts it.
func (t *turn) pruneAndCount(cs []*genai.Content, trigger int) judged {
	minFree := t.cfg.pruningMinFree()
	if t.mode == modeApplyOnly {
		// Switched off: the stored frontier stays, and moves no further.
		minFree = math.MaxInt
	}
	pruned, target, rewritten := planPruning(t.Est, t.cfg.pruneKeep, minFree, t.recall, t.prev.PruneFrontier, t.Raw, cs)
	r := t.countPruned(cs, pruned)
	if rewritten >= 0 {
		r.unpruned = t.Cal.Count(t.Weigh(pruneTo(t.Est, min(t.prev.PruneFrontier, target), t.recall, t.Raw, cs)))
	}
	if t.mode != modeApplyOnly && t.nextTurnCount(r.count) > trigger && pruned < target {
		unpruned := max(r.unpruned, r.count)
		_, rewritten = pruneFreed(t.Est, t.recall, t.Raw, cs, pruned, target)
		r = t.countPruned(cs, target)
		r.unpruned = unpruned
	}
	if r.rewritten = rewritten; rewritten >= 0 {
		r.count = t.Cal.Scale(r.est) // as in decide
	}
	return r
}

func (t *turn) countPruned(cs []*genai.Content, frontier int) judged {
	r := judged{cs: pruneTo(t.Est, frontier, t.recall, t.Raw, cs), frontier: frontier}
	r.est, r.body = t.prefix.estimate(t.measure, frontier, r.cs)
	r.count = t.Cal.Count(r.est)
	return r
}

// compactionReason is the Reason* the call compacts for, "" for none, and
// what the log line adds.
func (t *turn) compactionReason(count, trigger int, cs []*genai.Content) (reason string, why []any) {
	switch {
	case t.mode == modeApplyOnly:
		return "", nil // a due compaction waits until the guard is back on
	case t.prev.Request.Pending:
		return ReasonRequested, nil
	case t.nextTurnCount(count) > trigger:
		return ReasonTokens, nil
	case t.prev.CompactNext != 0:
		return ReasonOutputLimit, nil // cutAtOutputLimit
	default:
		return t.cfg.policy.due(viewOf(t), cs)
	}
}

// compactDue runs the before-compaction hook, which may skip, then the
// compaction: from the prepared summary for a compaction for tokens when
// there is one, else inline. A compaction not applied stores next as is.
func (g *Guard) compactDue(t *turn, cs []*genai.Content, next state.Agent, reason string, why []any) step {
	// Answered whatever the outcome, even when the hook skips.
	next.CompactNext = 0
	t.focus, next.Request = takeRequest(t.prev.Request)
	skip, instructions := g.beforeCompaction(t, reason, t.before)
	t.hookInstructions = instructions
	if skip {
		return step{contents: cs, next: next}
	}
	args := append([]any{"reason", reason, "tokens", t.before, "threshold", t.lim.Threshold, "window", t.lim.Window,
		"strategy", t.cfg.policy.name(), "contents", len(t.Raw)}, why...)
	msg := "contextguard: trigger reached; compacting"
	if t.betweenTurns {
		msg = "contextguard: the next turn would reach the trigger; compacting between turns"
	}
	t.log().Info(msg, args...)
	if p := t.sess.prepared.Load(); reason == ReasonTokens && p != nil && p.agent == t.cfg.name {
		return g.compactPrepared(t, cs, next, p, t.cfg.policy, reason)
	}
	return g.compact(t, cs, next, t.cfg.policy, reason)
}
