package core

import (
	"math"

	"google.golang.org/genai"
)

// Before the model call: the pipeline of one call, top to bottom
// (ARCHITECTURE.md, One model call): load, build the call's state (turn.go:
// inject the summary, match the prefix record), count, decide, compact,
// save. Every step returns what it decides (step); only the pipeline
// writes the turn.

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
		t.est.prefetch(cs)
	}
	g.checkPrepared(t)

	s := g.decide(t, cs)
	sess.rememberCall(t)
	t.inj.reanchor(t.prev, &s.next)
	s.next.window, s.next.threshold = t.lim.window, t.lim.threshold
	s.next.maxOutput = maxOutputTokens(&req)
	recordUsage(t.cal, &s.next)
	g.noteGrowth(t, mem, &s)
	mem.message.observe(t, &s)
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
	t.prefix.body, t.before, t.beforeEst = r.body, r.count, r.est
	next := t.prev
	next.pruneFrontier, next.lastEstimate = t.frontier, r.est
	next.prefixKept, next.invalidated = t.prefixKept(r.cs, r.est, r.rewritten)
	if r.rewritten >= 0 {
		// Smaller than the request the provider last counted, whose count
		// no longer bounds it from below (calibration.count).
		next.realTokens = 0
	}
	reason, why := t.compactionReason(r.count, trigger, r.cs)
	if reason != "" {
		return g.compactDue(t, r.cs, next, reason, why)
	}
	t.prefix.next = t.recordPrefix(r.est)
	s := step{contents: r.cs, next: next}
	if r.unpruned > 0 && t.nextTurnCount(r.unpruned) > trigger {
		s.event = g.prunedAtTrigger(t, r.unpruned, r.count, next)
	}
	return s
}

// judged is the request decide judges: the contents as this call's pruning
// leaves them, their raw estimate (body: the part after the summary,
// requestEstimate) and calibrated count. unpruned is the count with the
// stored frontier when this call's pruning moves it, else 0; rewritten is
// the index of the first content pruning rewrote, -1 for none.
type judged struct {
	cs                                    []*genai.Content
	est, body, count, unpruned, rewritten int
}

// tokenTrigger is the count past which a call under lim compacts: the
// threshold, or, when the last compaction could not get below it (its
// floor: the irreducible part is too large), halfway from where it got to
// the room left, so the guard compacts again only once the conversation
// has grown by that much.
func tokenTrigger(lim limits, floor int) int {
	if room := lim.room(); floor > lim.threshold && floor < room {
		return lim.halfwayToRoom(floor)
	}
	return lim.threshold
}

// pruneAndCount prunes cs to the stored frontier, or further when that
// frees WithPruningMinFree (planPruning), or as far as it can when the
// request is over trigger, however little that frees (a compaction would
// rewrite more), and counts it as pruned. It sets the call's frontier.
func (t *turn) pruneAndCount(cs []*genai.Content, trigger int) judged {
	minFree := t.cfg.pruningMinFree()
	if t.mode == modeApplyOnly {
		// Switched off: the stored frontier stays, and moves no further.
		minFree = math.MaxInt
	}
	pruned, target, rewritten := planPruning(t.est, t.cfg.pruneKeep, minFree, t.recall, t.prev.pruneFrontier, t.raw, cs)
	t.frontier = pruned
	r := t.countPruned(cs)
	if rewritten >= 0 {
		r.unpruned = t.cal.count(t.weigh(pruneTo(t.est, min(t.prev.pruneFrontier, target), t.recall, t.raw, cs)))
	}
	if t.mode != modeApplyOnly && t.nextTurnCount(r.count) > trigger && t.frontier < target {
		unpruned := max(r.unpruned, r.count)
		_, rewritten = pruneFreed(t.est, t.recall, t.raw, cs, t.frontier, target)
		t.frontier = target
		r = t.countPruned(cs)
		r.unpruned = unpruned
	}
	if r.rewritten = rewritten; rewritten >= 0 {
		// Smaller than the request the provider last counted, whose count
		// no longer bounds it from below.
		r.count = t.cal.scale(r.est)
	}
	return r
}

// countPruned is cs pruned to the call's frontier, estimated and counted.
func (t *turn) countPruned(cs []*genai.Content) judged {
	r := judged{cs: pruneTo(t.est, t.frontier, t.recall, t.raw, cs)}
	r.est, r.body = t.requestEstimate(r.cs)
	r.count = t.cal.count(r.est)
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
		return t.cfg.policy.due(t, cs)
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
	args := append([]any{"reason", reason, "tokens", t.before, "threshold", t.lim.threshold, "window", t.lim.window,
		"strategy", t.cfg.policy.name(), "contents", len(t.raw)}, why...)
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
