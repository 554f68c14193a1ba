package core

import (
	"fmt"
	"log/slog"

	"github.com/adk-contextguard/contextguard/core/internal/calib"
	"github.com/adk-contextguard/contextguard/core/internal/convo"
	"github.com/adk-contextguard/contextguard/core/internal/sat"
	"github.com/adk-contextguard/contextguard/core/internal/window"
)

// Recovery from a provider's overflow error (ARCHITECTURE.md, Recovery): the
// failed request compacted for the recovery model, and the session taught the
// provider's count.

// Recovery is a compacted request for the agent's recovery model
// to answer in place of the rejected one (recoverOverflow), with the
// logger of the call.
type Recovery struct {
	req *Request
	log *slog.Logger
}

// recoverOverflow is the engine's part of OnModelErrorCallback
// (ARCHITECTURE.md, Recovery) for a context overflow ov of an agent the
// guard guards: st is the state the call reads and writes, ro the
// session's state without the call's writes. An overflow is compacted to
// half the window, and the compacted request returned for the agent's
// recovery model to answer, when one is configured; otherwise it is
// recorded so the session's next call compacts first, and the provider's
// error is returned once (nil, nil). An error is the callback's error.
func (g *Guard) recoverOverflow(c Call, st State, ro StateReader, cfg *Agent, req *Request, ov ContextOverflow, modelErr error) (*Recovery, error) {
	logger := g.log.With("agent", cfg.name, "session", c.SessionID())
	logger.Warn("contextguard: the provider rejected the request as too long",
		"provider", ov.Provider, "real_tokens", ov.Tokens, "limit", ov.Limit, "recovery_model", cfg.recoveryLLM != nil)
	if onlyCurrentRequest(c, req) {
		// Nothing but the user's current request: the provider rejected
		// the part no compaction can shrink (for example an attachment it
		// charges far above the estimate).
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

// recoveryFailed handles the recovery model's error err: the compaction is
// remembered (mem.compacted) and reused by the next call; only a compacted
// request that is still too long makes that call compact again. It returns
// the callback's error, nil to return the provider's.
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

// overflowWindow is the window an overflow was judged against: the
// provider's limit when it states one, else the guard's window.
func overflowWindow(ov ContextOverflow, window int) int {
	if ov.Limit > 0 {
		return ov.Limit
	}
	return window
}

// onlyCurrentRequest reports whether the rejected request holds nothing a
// compaction may cover but the user's current request: the request alone,
// or only the guard's summary message carrying it, with at most the
// adapter's synthetic continuations after it (convo.CoverableLen). A
// compaction could not make it smaller. Anything else, the turn's own tool
// steps after the request included, is compacted (ARCHITECTURE.md,
// Recovery).
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

// handleOverflow does the work of OnModelErrorCallback while it owns the
// session: it compacts the rejected request with a recovery model, and
// returns the request to send and the compaction's event (for the hook);
// without one, or when nothing could be compacted, it records the overflow
// for the next call.
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
		// The provider's error is returned, and the state this call wrote
		// is lost with it: learn from the original ratio again.
		recordOverflow(sess, cfg, mem, req, jov, learned)
	}
	return creq, ev, err
}

// maxKnownWindow is the largest context window any model offers (Llama 4
// Scout's ten million tokens; the registry's largest is two million): no
// request a provider rejected held more tokens than its window by more
// than a request can, so an overflow error stating more is not a count.
const maxKnownWindow = 10_000_000

// maxOverflowRatio is the most an overflow error's count may exceed the
// larger of the guard's raw estimate of the rejected request and the window
// by, and still be a count: the calibration's own bound. The
// window counts too: a request the guard estimated far under it may still be
// over it (an attachment the estimate does not see).
const maxOverflowRatio = calib.MaxCorrection

// judgedOverflow is an overflow as recovery acts on it: the error's
// ContextOverflow, its count dropped when implausible (plausibleOverflow),
// and whether the session learns a provider ratio from it.
type judgedOverflow struct {
	ContextOverflow
	learns bool
}

// plausibleOverflow judges ov's count against the request: a count above
// every known window (and the agent's own), or more than maxOverflowRatio
// times the larger of the guard's estimate and the window, is implausible
// (2^40, a running total, a gateway's sum). It says only that the request
// was too large: recovered as an overflow of unknown size, teaching the
// session no ratio, which would make its later calls compact early. The
// caller owns the session entry.
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

// rememberOverflow records, for the session's next call, that the recovery
// model rejected the compacted request too.
func (g *Guard) rememberOverflow(c Call, st State, cfg *Agent, req *Request, ov ContextOverflow, logger *slog.Logger) {
	sess, err := g.sessions.acquire(c, sessionKey(c))
	if err != nil {
		logger.Warn("contextguard: the recovery model's overflow is not recorded", "error", sessionError(c, cfg.name, err))
		return
	}
	defer g.sessions.release(sess)
	recordOverflow(sess, cfg, sess.memory(cfg.name), req, g.plausibleOverflow(sess, cfg, req, ov, logger), learnedRatio(st, cfg))
}

// learnedRatio is the provider ratio the session has learned so far, per
// mille, as the call whose state is st sees it (0: none).
func learnedRatio(st StateReader, cfg *Agent) int {
	if st == nil {
		return 0
	}
	return cfg.stateIO(quietLog).num(st, keyProviderRatio)
}

// recordOverflow records an overflow for the session's next call, with the
// provider ratio the session learns from it on top of learned. The caller
// holds the session entry.
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

// compactForRecovery compacts the rejected request to half the window (the
// provider's limit when smaller), calibrated with the provider's count, and
// persists the compaction in the call's state delta, which rides on the
// recovery response. It returns the request to send (nil when nothing could
// be compacted) and the event. The caller owns the session entry.
func (g *Guard) compactForRecovery(c Call, st State, ro StateReader, cfg *Agent, sess *sessionEntry, mem *agentMemory, req *Request, ov judgedOverflow, logger *slog.Logger) (*Request, *CompactionEvent, error) {
	sio := cfg.stateIO(g.log)
	var prev guardState
	if st != nil {
		prev = sio.load(st) // includes what this call's BeforeModelCallback wrote
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
	// The session learns the provider's ratio from the rejection; it rides
	// on the recovery response with the compaction.
	learned := prev
	if ov.learns {
		learned.providerRatio = calib.LearnFromOverflow(prev.providerRatio, est.DefaultFactor(), ov.Tokens, sent)
	}
	real := ov.Tokens
	if real <= 0 {
		real = max(sat.Add(win, 1), sat.Scale(sent, float64(learned.providerRatio)/calib.RatioScale))
	}
	rej := &rejection{lim: window.Limits{Window: win, Buffer: win - win/2, Threshold: win / 2}}
	if lo, ok := rej.lim.WithOutput(lim.Output); ok {
		rej.lim = lo
	}
	rej.cal = newCalibration(guardState{realTokens: real, lastEstimate: sent}, est)
	t, cs := g.newTurn(callInput{call: c, ro: ro, cfg: cfg, sess: sess, prev: learned, rejection: rej}, creq)
	logger.Info("contextguard: compacting the rejected request to half the window",
		"real_tokens", real, "estimated_tokens", sent, "correction", rej.cal.Factor, "threshold", rej.lim.Threshold, "window", win)

	s := g.compact(t, cs, learned, thresholdStrategy{}, ReasonOverflow)
	recordUsage(t.Cal, &s.next)
	if st != nil {
		sio.save(st, prev, s.next)
	}
	if s.next.compactions > prev.compactions {
		c := s.next
		mem.compacted = &c
	}
	if s.err != nil {
		return nil, s.event, s.err
	}
	if s.next.compactions == prev.compactions {
		return nil, s.event, nil
	}
	out := withContents(creq, s.contents)
	return &out, s.event, nil
}
