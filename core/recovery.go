package core

import (
	"fmt"
	"log/slog"

	"github.com/adk-contextguard/contextguard/core/internal/calib"
	"github.com/adk-contextguard/contextguard/core/internal/convo"
	"github.com/adk-contextguard/contextguard/core/internal/sat"
	"github.com/adk-contextguard/contextguard/core/internal/state"
	"github.com/adk-contextguard/contextguard/core/internal/window"
)

// Recovery is a compacted request for the agent's recovery model to answer
// in place of the one the provider rejected (ARCHITECTURE.md, Recovery).
type Recovery struct {
	req *Request
	log *slog.Logger
}

// recoverOverflow is the engine's part of OnModelErrorCallback for a
// context overflow ov. With a recovery model, the request is compacted to
// half the window and returned for it to answer; otherwise the overflow is
// recorded so the next call compacts first, and (nil, nil) returns the
// provider's error. An error is the callback's error.
func (g *Guard) recoverOverflow(c Call, st State, ro StateReader, cfg *Agent, req *Request, ov ContextOverflow, modelErr error) (*Recovery, error) {
	logger := g.log.With("agent", cfg.name, "session", c.SessionID())
	logger.Warn("contextguard: the provider rejected the request as too long",
		"provider", ov.Provider, "real_tokens", ov.Tokens, "limit", ov.Limit, "recovery_model", cfg.recoveryLLM != nil)
	if onlyCurrentRequest(c, req) {
		// No compaction can shrink it (for example an attachment charged
		// far above the estimate).
		logger.Error("contextguard: the provider rejected the user's current request itself; nothing the guard can cut will make it fit")
		return nil, fmt.Errorf("%w: the provider rejected the user's current request, which is all the request holds", irreducibleError(max(ov.Tokens, ov.Limit+1), overflowWindow(ov, g.limits(cfg, req.Model).Window)))
	}

	creq, ev, err := g.handleOverflow(c, st, ro, cfg, req, ov, logger)
	g.fireHook(c, ev)
	switch {
	case err != nil:
		logger.Error("contextguard: recovery impossible", "error", err)
		return nil, fmt.Errorf("contextguard: recovering from a context overflow: %w; the provider said: %w", err, modelErr)
	case cfg.recoveryLLM == nil || req == nil:
		logger.Info("contextguard: no recovery model; returning the provider's error, the session's next call compacts first")
		return nil, nil
	case creq == nil:
		logger.Warn("contextguard: nothing left to compact; returning the provider's error")
		return nil, nil
	}
	return &Recovery{req: creq, log: logger}, nil
}

// recoveryFailed handles the recovery model's error: the compaction is
// reused by the next call, which compacts again only when the compacted
// request was still too long. nil returns the provider's error.
func (g *Guard) recoveryFailed(c Call, st State, cfg *Agent, rec *Recovery, err error) error {
	creq, logger := rec.req, rec.log
	if again, ok := AsContextOverflow(err); ok {
		g.rememberOverflow(c, st, cfg, creq, again, logger)
		if onlyCurrentRequest(c, creq) {
			logger.Error("contextguard: the recovery model rejected the summary and the user's current request alone; nothing the guard can cut will make it fit")
			return fmt.Errorf("%w: the summary and the user's current request alone were rejected by the recovery model", irreducibleError(max(again.Tokens, again.Limit+1), overflowWindow(again, g.limits(cfg, creq.Model).Window)))
		}
	}
	logger.Error("contextguard: the recovery model failed; returning the provider's error",
		"error", err)
	return nil
}

// overflowWindow is the provider's limit when stated, else window.
func overflowWindow(ov ContextOverflow, window int) int {
	if ov.Limit > 0 {
		return ov.Limit
	}
	return window
}

// onlyCurrentRequest reports whether the rejected request holds nothing a
// compaction may cover but the user's current request (alone or in the
// summary message, convo.CoverableLen): no compaction could shrink it.
func onlyCurrentRequest(c Call, req *Request) bool {
	if req == nil || convo.CoverableLen(req.Contents) != 1 {
		return false
	}
	if isSummaryMessage(req.Contents[0]) {
		// The summary message quotes the request: it is the request.
		return true
	}
	_, i := convo.CurrentRequest(c.UserContent(), req.Contents[:1])
	return i == 0
}

// handleOverflow does OnModelErrorCallback's work while it owns the
// session: it compacts for the recovery model and returns the request and
// the event; without one, or when nothing was compacted, it records the
// overflow for the next call.
func (g *Guard) handleOverflow(c Call, st State, ro StateReader, cfg *Agent, req *Request, ov ContextOverflow, logger *slog.Logger) (*Request, *CompactionEvent, error) {
	sess, err := g.sessions.acquire(c, sessionKey(c))
	if err != nil {
		return nil, nil, sessionError(c, cfg.name, err)
	}
	defer g.sessions.release(sess)
	mem := sess.memory(cfg.name)
	jov := g.plausibleOverflow(sess, cfg, req, ov, logger)
	learned := learnedRatio(st, cfg)
	if cfg.recoveryLLM == nil || req == nil {
		recordOverflow(sess, cfg, mem, req, jov, learned)
		return nil, nil, nil
	}
	creq, ev, err := g.compactForRecovery(c, st, ro, cfg, sess, mem, req, jov, logger)
	if err != nil || creq == nil {
		// This call's state is lost with the error: learn from the
		// original ratio again.
		recordOverflow(sess, cfg, mem, req, jov, learned)
	}
	return creq, ev, err
}

// maxKnownWindow is the largest window any model offers (Llama 4 Scout's):
// an overflow error stating more is not a count.
const maxKnownWindow = 10_000_000

// maxOverflowRatio is the most an overflow's count may exceed the larger of
// the estimate and the window by and still be a count: the calibration's
// bound. The window counts too, for what the estimate does not see.
const maxOverflowRatio = calib.MaxCorrection

// judgedOverflow is an overflow with its count dropped when implausible,
// and whether the session learns a provider ratio from it.
type judgedOverflow struct {
	ContextOverflow
	learns bool
}

// plausibleOverflow drops an implausible count (above every known window,
// or past maxOverflowRatio: 2^40, a running total, a gateway's sum): it is
// recovered as of unknown size and teaches no ratio, which would make later
// calls compact early. The caller owns the session entry.
func (g *Guard) plausibleOverflow(sess *sessionEntry, cfg *Agent, req *Request, ov ContextOverflow, logger *slog.Logger) judgedOverflow {
	if ov.Tokens <= 0 {
		return judgedOverflow{ContextOverflow: ov, learns: true}
	}
	bound, window, estimate := maxKnownWindow, 0, 0
	if req != nil {
		window = g.requestLimits(cfg, req).Window
		bound = max(bound, window)
		window = overflowWindow(ov, window)
		estimate = requestTokens(sess.estimator(cfg, req.Model), req)
	}
	if ov.Tokens <= bound && (req == nil || float64(ov.Tokens) <= maxOverflowRatio*float64(max(estimate, window))) {
		return judgedOverflow{ContextOverflow: ov, learns: true}
	}
	logger.Warn("contextguard: the provider's overflow error states an implausible count; recovering as from an overflow of unknown size, learning nothing from it",
		"real_tokens", ov.Tokens, "estimated_tokens", estimate, "limit", ov.Limit)
	return judgedOverflow{ContextOverflow: ContextOverflow{Provider: ov.Provider, Limit: ov.Limit}}
}

// rememberOverflow records that the recovery model rejected the compacted
// request too.
func (g *Guard) rememberOverflow(c Call, st State, cfg *Agent, req *Request, ov ContextOverflow, logger *slog.Logger) {
	sess, err := g.sessions.acquire(c, sessionKey(c))
	if err != nil {
		logger.Warn("contextguard: the recovery model's overflow is not recorded", "error", sessionError(c, cfg.name, err))
		return
	}
	defer g.sessions.release(sess)
	recordOverflow(sess, cfg, sess.memory(cfg.name), req, g.plausibleOverflow(sess, cfg, req, ov, logger), learnedRatio(st, cfg))
}

// learnedRatio is the provider ratio learned so far, per mille (0: none).
func learnedRatio(st StateReader, cfg *Agent) int {
	if st == nil {
		return 0
	}
	return cfg.stateIO(quietLog).Num(st, state.KeyProviderRatio)
}

// recordOverflow records an overflow for the next call, with the ratio
// learned from it on top of learned. The caller owns the session entry.
func recordOverflow(sess *sessionEntry, cfg *Agent, mem *agentMemory, req *Request, ov judgedOverflow, learned int) {
	p := &pendingOverflow{real: ov.Tokens, limit: ov.Limit, contents: mem.sentLen}
	if req != nil {
		est := sess.estimator(cfg, req.Model)
		p.estimate = requestTokens(est, req)
		if ov.learns {
			p.ratio = calib.LearnFromOverflow(learned, est.DefaultFactor(), ov.Tokens, p.estimate)
		}
	}
	mem.overflow = p
}

// compactForRecovery compacts the rejected request to half the window (or
// the provider's limit), calibrated with the provider's count, into the
// state delta the recovery response carries. It returns the request to
// send, nil when nothing was compacted. The caller owns the session entry.
func (g *Guard) compactForRecovery(c Call, st State, ro StateReader, cfg *Agent, sess *sessionEntry, mem *agentMemory, req *Request, ov judgedOverflow, logger *slog.Logger) (*Request, *CompactionEvent, error) {
	sio := cfg.stateIO(g.log)
	var prev state.Agent
	if st != nil {
		prev = sio.Load(st) // includes what this call's BeforeModelCallback wrote
	}
	raw := req.Contents
	if req.Origin != nil && mem.sentReq == req.Origin && mem.sentRaw != nil {
		raw = mem.sentRaw
	}
	mem.sentReq, mem.sentRaw = nil, nil

	est := sess.estimator(cfg, req.Model)
	sent := max(requestTokens(est, req), 1)
	creq := withContents(*req, raw)

	lim := g.requestLimits(cfg, req)
	win := lim.Window
	if ov.Limit > 0 && ov.Limit < win {
		win = ov.Limit
	}
	learned := prev
	if ov.learns {
		learned.ProviderRatio = calib.LearnFromOverflow(prev.ProviderRatio, est.DefaultFactor(), ov.Tokens, sent)
	}
	real := ov.Tokens
	if real <= 0 {
		real = max(sat.Add(win, 1), sat.Scale(sent, float64(learned.ProviderRatio)/calib.RatioScale))
	}
	rej := &rejection{lim: window.Limits{Window: win, Buffer: win - win/2, Threshold: win / 2}}
	if lo, ok := rej.lim.WithOutput(lim.Output); ok {
		rej.lim = lo
	}
	rej.cal = newCalibration(state.Agent{RealTokens: real, LastEstimate: sent}, est)
	t, cs := g.newTurn(callInput{call: c, ro: ro, cfg: cfg, sess: sess, prev: learned, rejection: rej}, creq)
	logger.Info("contextguard: compacting the rejected request to half the window",
		"real_tokens", real, "estimated_tokens", sent, "correction", rej.cal.Factor, "threshold", rej.lim.Threshold, "window", win)

	s := g.compact(t, cs, learned, thresholdStrategy{}, ReasonOverflow)
	recordUsage(t.Cal, &s.next)
	if st != nil {
		sio.Save(st, prev, s.next)
	}
	if s.next.Compactions > prev.Compactions {
		c := s.next
		mem.compacted = &c
	}
	if s.err != nil {
		return nil, s.event, s.err
	}
	if s.next.Compactions == prev.Compactions {
		return nil, s.event, nil
	}
	out := withContents(creq, s.contents)
	return &out, s.event, nil
}
