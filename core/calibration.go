package core

import (
	"log/slog"
	"sync"

	"github.com/adk-contextguard/contextguard/core/internal/calib"
	"github.com/adk-contextguard/contextguard/core/internal/countcache"
	"github.com/adk-contextguard/contextguard/core/internal/estimate"
	"github.com/adk-contextguard/contextguard/core/internal/state"
	"github.com/adk-contextguard/contextguard/core/internal/window"
)

// newCalibration is the calibration of a call from the session's state
// (core/internal/calib; ARCHITECTURE.md, "Trusting the provider's counts").
func newCalibration(st state.Agent, e estimate.Estimator) calib.Calibration {
	return calib.New(st.RealTokens, st.LastEstimate, st.ProviderRatio, e.DefaultFactor())
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
func (r *reports) recordReport(c Call, sio state.IO, st State, real int) {
	prev := state.Agent{
		ProviderRatio: sio.Num(st, state.KeyProviderRatio),
		SuspectRatio:  sio.Num(st, state.KeySuspectRatio),
		Window:        sio.Num(st, state.KeyWindow),
	}
	rep := calib.Report{Real: real, Estimate: sio.Num(st, state.KeyLastEstimate), Learned: prev.ProviderRatio, Suspect: prev.SuspectRatio}
	if prev.Window > 0 {
		rep.HardLimit = window.New(prev.Window).HardLimit()
	}
	v := rep.Judge()
	learned := prev.ProviderRatio
	if v.Learn && v.Ratio > 0 {
		learned = v.Ratio
	}
	if v.Count {
		sio.Set(st, state.KeyRealTokens, nil, real)
	} else {
		sio.Set(st, state.KeyRealTokens, nil, 0)
	}
	if v.Reason != "" {
		level := slog.LevelDebug
		if _, seen := r.warned.LoadOrStore(sio.Agent, true); !seen {
			level = slog.LevelWarn
		}
		msg := "contextguard: the provider's prompt-token count is not believable; not calibrating with it"
		if v.Count {
			msg = "contextguard: the provider's prompt-token count jumped; calibrating the next call with it, not the session yet"
		}
		r.log.Log(c, level, msg,
			"agent", sio.Agent, "session", c.SessionID(), "real_tokens", real, "estimate", rep.Estimate,
			"window", prev.Window, "reason", v.Reason)
	}
	sio.Set(st, state.KeyProviderRatio, prev.ProviderRatio, learned)
	sio.Set(st, state.KeySuspectRatio, prev.SuspectRatio, v.Suspect)
}

// measure is how a call weighs what it builds, through the session's count cache.
type measure = estimate.Measure[countcache.Counter]
