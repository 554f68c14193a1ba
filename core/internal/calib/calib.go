// Package calib turns raw estimates into calibrated counts and judges the
// provider's counts (ARCHITECTURE.md, "Trusting the provider's counts"): the
// raw estimate is scaled by what the provider reported for earlier requests
// of the session, each report believed only for what believing it risks.
package calib

import (
	"math"

	"github.com/adk-contextguard/contextguard/core/internal/sat"
)

const (
	// MaxCorrection caps the factor real/estimate, so one odd turn cannot
	// distort every later estimate; a report above it inside the window is
	// still the request's floor (Count), as for images charged by size.
	MaxCorrection = 5.0
	// minPlausibleRatio is the smallest ratio of a report to the estimate
	// believed: the estimator is never 5x high on a whole request (its worst
	// content kind is within 12% at p90); below is a broken adapter.
	minPlausibleRatio = 1 / MaxCorrection
	// maxRatioJump is how far (a factor, up or down) a report's ratio may
	// move from the learned one and be believed at once; a larger jump waits
	// for the next report, since a glitch or running total does not repeat.
	maxRatioJump = 1.5
	// ratioConfirmTolerance is how close a second report's ratio must be to
	// a suspect one to confirm it.
	ratioConfirmTolerance = 0.10
	// RatioScale stores ratios as integers (per mille): state numbers
	// decode as integers.
	RatioScale = 1000
	// OverflowStep raises the learned ratio on an overflow error with no
	// usable count (README, "How it decides", step 4). From the default 1.10
	// it gives 1.375: with a fifth of the window as buffer, enough for a
	// provider counting up to 1.7x the estimate, while one counting close to
	// the estimate loses at most a quarter of its room.
	OverflowStep = 1.25
)

// LearnFromOverflow returns the ratio (per mille) a session learns when the
// provider rejects as too long a request estimated at estimate raw tokens;
// learned is the ratio it had (0: none). A believable stated count (real > 0)
// calibrates as a usage report would; it is not judged by the stated limit,
// which may count max_tokens too (Anthropic). Otherwise the ratio rises one
// OverflowStep: an odd error (a quota worded as a token limit) must not take
// the session to MaxCorrection at once, while a real overflow repeats.
func LearnFromOverflow(learned int, defaultFactor float64, real, estimate int) int {
	if estimate <= 0 {
		return learned
	}
	if real > 0 {
		if f := float64(real) / float64(estimate); f >= minPlausibleRatio && f <= MaxCorrection {
			return PerMille(f)
		}
	}
	f := max(defaultFactor, float64(learned)/RatioScale) * OverflowStep
	return PerMille(min(f, MaxCorrection))
}

// PerMille stores a ratio in session state's integer form.
func PerMille(f float64) int { return int(math.Round(f * RatioScale)) }

// Calibration turns raw estimates into calibrated counts.
type Calibration struct {
	Factor float64
	Real   int // last real prompt tokens, 0 if unknown
}

// New is the calibration after a request estimated at lastEstimate that the
// provider counted at real: their ratio, clamped to [1, MaxCorrection];
// without a count, the larger of the estimator's default factor def and the
// session's learned ratio (per mille, 0: none).
func New(real, lastEstimate, ratio int, def float64) Calibration {
	if real > 0 && lastEstimate > 0 {
		return Calibration{Factor: clampFactor(float64(real) / float64(lastEstimate)), Real: real}
	}
	if ratio > 0 {
		def = max(def, clampFactor(float64(ratio)/RatioScale))
	}
	return Calibration{Factor: def}
}

func clampFactor(f float64) float64 { return math.Min(math.Max(f, 1.0), MaxCorrection) }

// Scale is the calibrated size of a piece estimated at n raw tokens. It is
// used for pieces (summaries, transcripts), where the last real count of the
// whole request says nothing.
func (c Calibration) Scale(n int) int { return sat.Scale(n, c.Factor) }

// Unscale is the raw size of a piece whose calibrated size is n: the length
// to ask of a writer (the summarizer) so that what it writes weighs n once
// calibrated. A summarizer counts as real tokenizers do, which the raw
// estimate follows; the factor is how much more the provider charges.
func (c Calibration) Unscale(n int) int {
	if c.Factor <= 1 {
		return n
	}
	return int(float64(n) / c.Factor)
}

// Count is the calibrated size of a whole request estimated at n raw tokens:
// never below the provider's last real count.
func (c Calibration) Count(n int) int { return max(c.Real, c.Scale(n)) }

// Report is one prompt-token count a provider returned for a request the
// guard let through, with what the guard knew of that request; 0 is unknown.
type Report struct {
	Real      int // the provider's count
	Estimate  int // the guard's raw estimate of the request
	HardLimit int // the largest request the guard may have sent
	Learned   int // the session's ratio from earlier believed reports, per mille
	Suspect   int // an earlier report's ratio that jumped and waits, per mille
}

// Verdict is what a report is believed for. Its two uses risk different
// things: the call's count (Count), which the next call is counted at least
// at and calibrated with, and the session's learned ratio (Learn), which
// outlives the call and every compaction.
type Verdict struct {
	Count, Learn bool
	// Ratio is the report's ratio to the estimate, per mille, bounded to
	// twice MaxCorrection; 0 without an estimate.
	Ratio int
	// Suspect is the ratio kept for the next report to confirm, per mille.
	Suspect int
	// Reason says why the report is not the call's count, or why its ratio
	// is not learned yet.
	Reason string
}

// Judge decides what a report is believed for. A count that is not
// positive, beyond the window, or under a fifth of the estimate is believed
// for nothing. Otherwise its ratio is compared with the learned one:
//   - within maxRatioJump, or confirming the suspect ratio (within
//     ratioConfirmTolerance): believed for both uses;
//   - higher by more: the call's count, since a count above the calibrated
//     estimate and inside the window can only make the guard compact
//     earlier, and once; the session learns the ratio once confirmed;
//   - lower by more: believed for nothing until confirmed, since it would
//     let the guard send more than the provider was seen to take.
//
// The learned ratio is held back longest: it calibrates every later
// request, and one learned from a count that does not repeat (a running
// total, a glitch) could keep every request over the trigger for good.
func (r Report) Judge() Verdict {
	switch {
	case r.Real <= 0:
		return Verdict{Reason: "the count is not positive"}
	case r.HardLimit > 0 && r.Real > r.HardLimit:
		return Verdict{Reason: "the count exceeds the window, which a call that succeeded cannot have sent"}
	case r.Estimate <= 0:
		return Verdict{Count: true}
	}
	f := float64(r.Real) / float64(r.Estimate)
	ratio := int(math.Round(min(f, MaxCorrection*2) * RatioScale))
	learned := float64(r.Learned) / RatioScale
	switch {
	case f < minPlausibleRatio:
		return Verdict{Reason: "the count is under a fifth of the guard's estimate"}
	case r.Learned <= 0 || within(f, learned, maxRatioJump):
		return Verdict{Count: true, Learn: true, Ratio: ratio}
	case r.Suspect > 0 && math.Abs(f/(float64(r.Suspect)/RatioScale)-1) <= ratioConfirmTolerance:
		return Verdict{Count: true, Learn: true, Ratio: ratio}
	case f > learned:
		return Verdict{Count: true, Ratio: ratio, Suspect: ratio,
			Reason: "the count's ratio to the estimate jumped above the session's usual ratio; the next call is counted with it, and the session learns it once the next count confirms it"}
	}
	return Verdict{Ratio: ratio, Suspect: ratio,
		Reason: "the count's ratio to the estimate dropped from the session's usual ratio; waiting for the next count to confirm it"}
}

// within reports whether a and b differ by at most a factor of f.
func within(a, b, f float64) bool { return a <= b*f && b <= a*f }
