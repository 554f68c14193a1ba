package core

import (
	"context"
	"log/slog"

	"google.golang.org/genai"
)

// Before the model call: the flow of one BeforeModelCallback, top to bottom
// (ARCHITECTURE.md, One model call): load, inject the summary, count,
// decide, compact, save.

// send sets the contents the request will carry: the one place the engine
// rewrites the request it guards. Summary injection, pruning and the
// strategies decide contents and hand them here (a strategy is a function
// from a summary to the request's contents); the adapter writes the final
// contents into its own request.
func (t *turn) send(cs []*genai.Content) { t.req.Contents = cs }

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
	// storedPrefix is the prefix record in state, "" without one, and
	// prefix how it matched (prefix_count.go); frontier is the tool steps
	// pruned (pruning.go).
	storedPrefix string
	prefix       prefixMatch
	frontier     int
	// mode is what the call may do: compact, or only apply what earlier
	// compactions stored (a session switched off, session_switch.go).
	mode callMode
	// hashes is the agent's memo of its contents' chain (prefix_mark.go),
	// brought to raw on first use (chained).
	hashes  *prefixMemo
	chained bool
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
func (g *Guard) guardRequest(c Call, st State, ro StateReader, cfg *Agent, req Request, mode callMode) ([]*genai.Content, *CompactionEvent, error) {
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
		ctx:    c,
		ro:     ro,
		cfg:    cfg,
		req:    req,
		raw:    req.Contents,
		prev:   prev,
		sess:   sess,
		base:   g.log,
		hashes: &mem.prefix,
		mode:   mode,
	}
	t.est = sess.estimator(cfg, req.Model)
	t.lim = g.requestLimits(cfg, &req)
	if st != nil {
		t.storedPrefix = sio.str(st, keyPrefix)
	}
	t.inj = injectSummary(t)
	t.prefix = g.matchPrefix(t, st, sio)
	if !t.prefix.matched {
		t.est.prefetch(t.req.Contents)
	}
	t.cal = newCalibration(prev, t.est)

	next, err := g.decide(t)
	t.reanchor(&next)
	next.window = t.lim.window
	next.threshold = t.lim.threshold
	next.maxOutput = maxOutputTokens(&t.req)
	recordUsage(t, &next)
	if st != nil {
		sio.save(st, prev, next)
		t.savePrefix(st, sio)
	}
	return t.req.Contents, t.event, err
}

// log returns the turn's logger, built only when something is logged so the
// common path allocates nothing for it.
func (t *turn) log() *slog.Logger {
	if t.logger == nil {
		t.logger = t.base.With("agent", t.cfg.name, "session", t.ctx.SessionID())
	}
	return t.logger
}

// decide compares the calibrated count with the trigger and compacts when it
// is reached, or, for the sliding-window strategy, when more turns than its
// budget were added since the last compaction. With tool-result pruning the
// request is pruned first and counted as pruned, so the summarizer runs only
// when pruning was not enough. It returns the state to persist.
func (g *Guard) decide(t *turn) (guardState, error) {
	next := t.prev
	t.send(pruneToolResults(t, t.req.Contents))
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
	case t.mode == modeApplyOnly:
		// Switched off: the stored summary and pruning stay applied, a
		// requested or due compaction waits until the guard is back on.
	case t.prev.request.pending:
		reason = ReasonRequested
	case count > trigger:
		reason = ReasonTokens
	case t.prev.compactNext != 0:
		// The previous response stopped at the output limit near the
		// window (cutAtOutputLimit).
		reason = ReasonOutputLimit
	case sliding:
		var due bool
		if turns, due = slidingTurnsDue(t); due {
			reason = ReasonTurns
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
	if reason == ReasonTurns {
		args = append(args, "turns", turns)
	}
	t.log().Info("contextguard: trigger reached; compacting", args...)
	if sliding {
		return g.compactSlidingWindow(t, reason)
	}
	return g.compactThreshold(t, reason)
}
