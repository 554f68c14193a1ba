package calib

import "math"

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
// total, a glitch) could put every request's irreducible part over the
// trigger for good.
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
