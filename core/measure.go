package core

import "google.golang.org/genai"

// measure is how a call weighs what it builds: the contents as ADK built
// them, the session's estimator, the call's calibration, and the raw
// estimate of what every request carries besides its contents. The steps
// that only count and cut (excerpts, transcript pieces, the quoted
// request, todo lines) take it, not the whole call's state (turn).
type measure struct {
	raw []*genai.Content
	est cachedEstimator
	cal calibration
	// fixed is the raw estimate of the system instruction and the tools.
	fixed int
}

// weigh is the raw estimate of the request with contents cs.
func (m measure) weigh(cs []*genai.Content) int { return satAdd(contentsTokens(m.est, cs), m.fixed) }

// text is the calibrated size of s.
func (m measure) text(s string) int { return m.cal.scale(m.est.text(s)) }
