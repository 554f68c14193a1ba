package core

import (
	"log/slog"
	"sync"

	"github.com/adk-contextguard/contextguard/core/internal/calib"
	"github.com/adk-contextguard/contextguard/core/internal/sat"
	"github.com/adk-contextguard/contextguard/core/internal/window"

	"google.golang.org/genai"
)

// newCalibration is the calibration of a call from the session's state
// (core/internal/calib; ARCHITECTURE.md, "Trusting the provider's counts").
func newCalibration(st guardState, e tokenEstimator) calib.Calibration {
	return calib.New(st.realTokens, st.lastEstimate, st.providerRatio, e.defaultFactor())
}

// reports records the provider's prompt-token counts, logging those not
// believed: a warning the first time for an agent, debug after.
type reports struct {
	log    *slog.Logger
	warned sync.Map // agent name -> bool
}

// recordReport records the provider's count of the request let through in
// this call for what it is believed (calib.Report.Judge): as the call's count
// and as the session's learned ratio. A count not believed clears the call's
// count, so the next call calibrates with the learned one.
func (r *reports) recordReport(c Call, sio stateIO, st State, real int) {
	prev := guardState{
		providerRatio: sio.num(st, keyProviderRatio),
		suspectRatio:  sio.num(st, keySuspectRatio),
		window:        sio.num(st, keyWindow),
	}
	rep := calib.Report{Real: real, Estimate: sio.num(st, keyLastEstimate), Learned: prev.providerRatio, Suspect: prev.suspectRatio}
	if prev.window > 0 {
		rep.HardLimit = window.New(prev.window).HardLimit()
	}
	v := rep.Judge()
	next := prev
	next.suspectRatio = v.Suspect
	if v.Learn && v.Ratio > 0 {
		next.providerRatio = v.Ratio
	}
	if v.Count {
		sio.set(st, keyRealTokens, nil, real)
	} else {
		sio.set(st, keyRealTokens, nil, 0)
	}
	if v.Reason != "" {
		level := slog.LevelDebug
		if _, seen := r.warned.LoadOrStore(sio.agent, true); !seen {
			level = slog.LevelWarn
		}
		msg := "contextguard: the provider's prompt-token count is not believable; not calibrating with it"
		if v.Count {
			msg = "contextguard: the provider's prompt-token count jumped; calibrating the next call with it, not the session yet"
		}
		r.log.Log(c, level, msg,
			"agent", sio.agent, "session", c.SessionID(), "real_tokens", real, "estimate", rep.Estimate,
			"window", prev.window, "reason", v.Reason)
	}
	sio.set(st, keyProviderRatio, prev.providerRatio, next.providerRatio)
	sio.set(st, keySuspectRatio, prev.suspectRatio, next.suspectRatio)
}

// measure is how a call weighs what it builds: the contents as ADK built
// them, the session's estimator and calibration, and the raw estimate of the
// instruction and tools (fixed). The steps that only count and cut take it,
// not the whole call's state (turn).
type measure struct {
	raw   []*genai.Content
	est   cachedEstimator
	cal   calib.Calibration
	fixed int
}

// weigh is the raw estimate of the request with contents cs.
func (m measure) weigh(cs []*genai.Content) int { return sat.Add(contentsTokens(m.est, cs), m.fixed) }

// text is the calibrated size of s.
func (m measure) text(s string) int { return m.cal.Scale(m.est.text(s)) }
