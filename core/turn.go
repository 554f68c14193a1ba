package core

import (
	"context"
	"log/slog"

	"google.golang.org/genai"
)

// turn is the state of one model call (ARCHITECTURE.md, One model call):
// built once, by newTurn, for the guarded call, a call between turns,
// recovery and a summary prepared in the background alike. Only the
// pipeline (turn.go, before_model.go, compaction.go) writes it; the contents to send
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
	lim    limits
	inj    injection
	base   *slog.Logger
	logger *slog.Logger // base with agent and session, built on first use
	// before is the calibrated count before compaction, beforeEst the raw
	// estimate it was scaled from.
	before, beforeEst int
	// sumWindow is the context window of the summarizer's model.
	sumWindow int
	// spanCtx carries the compaction span to the summarizer call.
	spanCtx context.Context
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
	lim limits
	cal calibration
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
		measure:      measure{raw: req.Contents},
		base:         g.log,
		storedPrefix: in.storedPrefix,
		mode:         in.mode,
		chain:        callChain{memo: memo},
		recall:       declaresRecall(req.Config),
		betweenTurns: in.betweenTurns,
		unprepared:   in.unprepared,
		sentEst:      in.sentEst,
	}
	t.est = in.sess.estimator(in.cfg, req.Model)
	t.config = g.configHash(req.Config, t.est.salt)
	t.fixed = g.fixedOf(t.config, t.est, &req)
	if b := in.background; b != nil {
		t.lim, t.cal, t.inj, t.before = b.lim, b.cal, b.inj, b.before
		return t, b.sent
	}
	if r := in.rejection; r != nil {
		t.lim, t.cal, t.rejected = r.lim, r.cal, true
	} else {
		t.lim = g.requestLimits(in.cfg, &req)
	}
	var cs []*genai.Content
	t.inj, cs = injectSummary(t)
	t.prefix = g.matchPrefix(t, in.cfg.stateIO(g.log))
	if t.rejected {
		t.before = t.cal.count(t.weigh(cs))
	} else {
		// Calibrated once the summary is placed (continuationBound).
		t.cal = newCalibration(in.prev, t.est)
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
		return t.cal.scale(n)
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
