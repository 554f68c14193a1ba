package core

import (
	"log/slog"
	"math"

	"github.com/adk-contextguard/contextguard/core/internal/calib"
	"github.com/adk-contextguard/contextguard/core/internal/window"
	"google.golang.org/genai"
)

// Before the model call: the pipeline of one call, top to bottom
// (ARCHITECTURE.md, One model call): load, build the call's state (turn:
// inject the summary, match the prefix record), count, decide, compact,
// save. Every step returns what it decides (step); only the pipeline
// writes the turn.

// turn is the state of one model call (ARCHITECTURE.md, One model call):
// built once, by newTurn, for the guarded call, a call between turns,
// recovery and a summary prepared in the background alike. Only the
// pipeline (this file and compaction.go) writes it; the contents to send
// are not part of it: each step returns them (step).
type turn struct {
	ctx Call
	// ro is the session's state without the call's pending writes (ADK's
	// ReadonlyState): the todo list is read from it.
	ro  StateReader
	cfg *Agent
	// req is the request as ADK built it, never rewritten.
	req  Request
	prev guardState
	// measure holds the raw contents, the estimator, the calibration and
	// the estimate of the system instruction and tools: what the steps
	// that only count and cut take.
	measure
	// config identifies the system instruction, tools and estimator
	// (configHash).
	config uint64
	sess   *sessionEntry
	lim    window.Limits
	inj    injection
	base   *slog.Logger
	logger *slog.Logger // base with agent and session, built on first use
	// before is the calibrated count before compaction, beforeEst the raw
	// estimate it was scaled from.
	before, beforeEst int
	// rejected marks recovery from the provider's rejection of this very
	// request: its calibration comes from the provider's own count of it.
	rejected bool
	// focus is a requested compaction's focus (compaction_request.go),
	// hookInstructions the before-compaction hook's (compaction_hooks.go).
	focus, hookInstructions string
	// storedPrefix is the prefix record in state ("" for none), prefix how
	// it matched (prefix_count.go); frontier is the tool steps pruned.
	storedPrefix string
	prefix       prefixMatch
	frontier     int
	// mode is what the call may do (session_switch.go).
	mode callMode
	// recall reports that the request declares the recall tool (recall.go).
	recall bool
	// chain is the agent's memo of its contents' chain (prefix_mark.go).
	chain callChain
	// betweenTurns marks a compaction after a run ended (between_turns.go):
	// raw is the next turn's history, the user's next message aside.
	betweenTurns afterRun
	// unprepared is why a compaction for tokens runs inline, as the
	// agent's last call found it; sentEst the raw estimate of the request
	// that call let through, 0 for none (agentMemory).
	unprepared InlineReason
	sentEst    int
}

// callInput is what a call's state is built from, beside its request.
type callInput struct {
	call Call
	ro   StateReader
	cfg  *Agent
	sess *sessionEntry
	prev guardState
	// storedPrefix is the prefix record in state; memo the agent's memo of
	// its contents' chain (nil: the call hashes into its own).
	storedPrefix string
	memo         *prefixMemo
	mode         callMode
	// rejection is set by recovery: its own limits and calibration.
	rejection *rejection
	// betweenTurns is set after a run ended (between_turns.go).
	betweenTurns afterRun
	// background is set for a summary prepared while tools run
	// (prepared_start.go): the values of the call it follows.
	background *prepareCandidate
	// unprepared and sentEst are as the agent's last call left them.
	unprepared InlineReason
	sentEst    int
}

// rejection is what recovery from the provider's rejection of a request
// decides for itself (recovery.go): the limits it compacts to and the
// calibration the provider's own count gives.
type rejection struct {
	lim window.Limits
	cal calib.Calibration
}

// newTurn builds the state of a call of req, the request as ADK built it:
// it injects the stored summary and matches the stored prefix record, and
// returns the turn and the contents to send so far.
func (g *Guard) newTurn(in callInput, req Request) (*turn, []*genai.Content) {
	memo := in.memo
	if memo == nil {
		memo = &prefixMemo{}
	}
	t := &turn{
		ctx: in.call, ro: in.ro, cfg: in.cfg, req: req, prev: in.prev, sess: in.sess,
		measure:      measure{Raw: req.Contents},
		base:         g.log,
		storedPrefix: in.storedPrefix,
		mode:         in.mode,
		chain:        callChain{memo: memo},
		recall:       declaresRecall(req.Config),
		betweenTurns: in.betweenTurns,
		unprepared:   in.unprepared,
		sentEst:      in.sentEst,
	}
	t.Est = in.sess.estimator(in.cfg, req.Model)
	t.config = g.configHash(req.Config, t.Est.salt)
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
		compactions: in.prev.compactions, total: in.prev.lastEstimate, config: t.config}
	t.prefix = matchPrefix(in.cfg.stateIO(g.log), in.storedPrefix, own, t.Raw, &t.chain)
	if t.rejected {
		t.before = t.Cal.Count(t.Weigh(cs))
	} else {
		// Calibrated once the summary is placed (continuationBound).
		t.Cal = newCalibration(in.prev, t.Est)
	}
	return t, cs
}

// withContents is req carrying cs: the one place the engine sets the
// contents of a request it guards; the steps pass contents as values.
func withContents(req Request, cs []*genai.Content) Request {
	req.Contents = cs
	return req
}

// irreducibleSize is the size of a request (raw estimate n) that decides
// ErrIrreducible: the raw estimate, never scaled by a calibration
// (calibration.go), unless the provider itself rejected this request and
// said how large it was.
func (t *turn) irreducibleSize(n int) int {
	if t.rejected {
		return t.Cal.Scale(n)
	}
	return n
}

// log returns the turn's logger, built only when something is logged so the
// common path allocates nothing for it.
func (t *turn) log() *slog.Logger {
	if t.logger == nil {
		t.logger = t.base.With("agent", t.cfg.name, "session", t.ctx.SessionID())
	}
	return t.logger
}

// step is what a step of the pipeline decides: the contents to send, the
// state to persist, the compaction made (for the OnCompaction hook, nil
// for none) and the error to return.
type step struct {
	contents []*genai.Content
	next     guardState
	event    *CompactionEvent
	err      error
}

// guardRequest does the work of BeforeModelCallback while it owns the
// session (see sessionTable): st is the state the call reads and writes,
// ro the session's state without the call's writes. It returns the
// contents to send in place of req's, and the compaction it made, if any,
// for the hook, which runs once the session is released.
func (g *Guard) guardRequest(c Call, st State, ro StateReader, cfg *Agent, req Request, mode callMode) ([]*genai.Content, *CompactionEvent, error) {
	sess, err := g.sessions.acquire(c, sessionKey(c))
	if err != nil {
		return req.Contents, nil, sessionError(c, cfg.name, err)
	}
	defer g.sessions.release(sess)

	sio := cfg.stateIO(g.log)
	in := callInput{call: c, ro: ro, cfg: cfg, sess: sess, mode: mode}
	if st != nil {
		in.prev = sio.load(st)
		in.storedPrefix = sio.str(st, keyPrefix)
	}
	mem := sess.memory(cfg.name)
	mem.model = req.Model
	in.unprepared, in.sentEst = mem.unprepared, mem.lastEst
	in.prev.request = sio.requestAt(st, mem.requestKey)
	in.prev = g.recall(c, cfg, mem, st, sio, &req, in.prev)
	if st != nil {
		defer mem.rememberCompaction(st, in.prev.compactions)
	}
	in.memo = &mem.prefix
	t, cs := g.newTurn(in, req)
	if !t.prefix.matched {
		t.Est.prefetch(cs)
	}
	sess.checkPrepared(t.ctx, cfg.name, t.Raw, &t.chain, t.prev.compactions)

	s := g.decide(t, cs)
	sess.rememberCall(cfg, t.req, mode, max(t.before, t.prev.summarizedAt))
	t.inj.reanchor(t.prev, &s.next)
	s.next.window, s.next.threshold = t.lim.Window, t.lim.Threshold
	s.next.maxOutput = window.MaxOutput(req.Config)
	recordUsage(t.Cal, &s.next)
	g.prep.noteGrowth(t, mem, &s)
	mem.message.observe(t.prev, t.measure, t.prefix.matched && s.event == nil && s.err == nil, s.next)
	if st != nil {
		sio.save(st, in.prev, s.next)
		t.prefix.save(st, sio)
	}
	return s.contents, s.event, s.err
}

// decide compares the calibrated count of cs, the contents with the
// summary injected, with the trigger and compacts when it is reached, or
// when the agent's strategy says a compaction is due (compactionStrategy).
// Tool results are pruned first and the request counted as pruned, so the
// summarizer runs only when pruning was not enough (pruneAndCount). A
// request let through stores its prefix record; pruning that took it from
// over the trigger to under it is reported as a compaction
// (prunedAtTrigger).
func (g *Guard) decide(t *turn, cs []*genai.Content) step {
	trigger := tokenTrigger(t.lim, t.prev.floor)
	r := t.pruneAndCount(cs, trigger)
	t.frontier, t.prefix.body, t.before, t.beforeEst = r.frontier, r.body, r.count, r.est
	next := t.prev
	next.pruneFrontier, next.lastEstimate = t.frontier, r.est
	next.prefixKept, next.invalidated = prefixKept(t.measure, &t.prefix, t.prev.lastEstimate, r.cs, r.est, r.rewritten)
	if r.rewritten >= 0 {
		// Smaller than the request the provider last counted, whose count
		// no longer bounds it from below (calibration.count).
		next.realTokens = 0
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

// judged is the request decide judges: the contents as this call's pruning
// leaves them (frontier: the tool steps pruned), their raw estimate (body:
// the part after the summary, prefixMatch.estimate) and calibrated count.
// unpruned is the count with the stored frontier when this call's pruning
// moves it, else 0; rewritten is the index of the first content pruning
// rewrote, -1 for none.
type judged struct {
	cs                                              []*genai.Content
	frontier, est, body, count, unpruned, rewritten int
}

// tokenTrigger is the count past which a call under lim compacts: the
// threshold, or, when the last compaction could not get below it (its
// floor: the irreducible part is too large), halfway from where it got to
// the room left, so the guard compacts again only once the conversation
// has grown by that much.
func tokenTrigger(lim window.Limits, floor int) int {
	if room := lim.Room(); floor > lim.Threshold && floor < room {
		return lim.HalfwayToRoom(floor)
	}
	return lim.Threshold
}

// pruneAndCount prunes cs to the stored frontier, or further when that
// frees WithPruningMinFree (planPruning), or as far as it can when the
// request is over trigger, however little that frees (a compaction would
// rewrite more), and counts it as pruned.
func (t *turn) pruneAndCount(cs []*genai.Content, trigger int) judged {
	minFree := t.cfg.pruningMinFree()
	if t.mode == modeApplyOnly {
		// Switched off: the stored frontier stays, and moves no further.
		minFree = math.MaxInt
	}
	pruned, target, rewritten := planPruning(t.Est, t.cfg.pruneKeep, minFree, t.recall, t.prev.pruneFrontier, t.Raw, cs)
	r := t.countPruned(cs, pruned)
	if rewritten >= 0 {
		r.unpruned = t.Cal.Count(t.Weigh(pruneTo(t.Est, min(t.prev.pruneFrontier, target), t.recall, t.Raw, cs)))
	}
	if t.mode != modeApplyOnly && t.nextTurnCount(r.count) > trigger && pruned < target {
		unpruned := max(r.unpruned, r.count)
		_, rewritten = pruneFreed(t.Est, t.recall, t.Raw, cs, pruned, target)
		r = t.countPruned(cs, target)
		r.unpruned = unpruned
	}
	if r.rewritten = rewritten; rewritten >= 0 {
		// Smaller than the request the provider last counted, whose count
		// no longer bounds it from below.
		r.count = t.Cal.Scale(r.est)
	}
	return r
}

// countPruned is cs pruned to frontier, estimated and counted.
func (t *turn) countPruned(cs []*genai.Content, frontier int) judged {
	r := judged{cs: pruneTo(t.Est, frontier, t.recall, t.Raw, cs), frontier: frontier}
	r.est, r.body = t.prefix.estimate(t.measure, frontier, r.cs)
	r.count = t.Cal.Count(r.est)
	return r
}

// compactionReason is why the call compacts a request counted at count
// (a Reason*), "" for not at all, and what the log line adds.
func (t *turn) compactionReason(count, trigger int, cs []*genai.Content) (reason string, why []any) {
	switch {
	case t.mode == modeApplyOnly:
		// Switched off: a requested or due compaction waits until the
		// guard is back on.
		return "", nil
	case t.prev.request.pending:
		return ReasonRequested, nil
	case t.nextTurnCount(count) > trigger:
		return ReasonTokens, nil
	case t.prev.compactNext != 0:
		// The previous response stopped at the output limit near the
		// window (cutAtOutputLimit).
		return ReasonOutputLimit, nil
	default:
		return t.cfg.policy.due(viewOf(t), cs)
	}
}

// compactDue runs the compaction due for reason over cs, the contents as
// decide judged them: the before-compaction hook first, which may skip
// it; then the compaction, from the summary prepared while the last
// step's tools ran when there is one for a compaction for tokens
// (compactPrepared), else inline. A compaction not applied stores next,
// decide's state, as it is; one applied builds on it.
func (g *Guard) compactDue(t *turn, cs []*genai.Content, next guardState, reason string, why []any) step {
	// One compaction answers an output-limit stop and a request, whatever
	// its outcome, even one the hook skips.
	next.compactNext = 0
	t.focus, next.request = takeRequest(t.prev.request)
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
