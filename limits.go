package contextguard

import "math"

// limits are the numbers one decision is made against: the context window,
// the buffer kept free below it and the trigger (threshold) they leave.
type limits struct {
	window    int
	buffer    int
	threshold int
}

// irreducibleMargin is how far past the window the smallest request the
// guard can make may be estimated and still be sent: the estimator's p90
// error. Within it the request may well fit, and the provider decides;
// beyond it the guard refuses with ErrIrreducible rather than send a request
// known not to fit.
const irreducibleMargin = 0.10

// hardLimit is the raw (uncalibrated) estimate past which the smallest
// request is refused with ErrIrreducible. It is compared with raw
// estimates only, never with calibrated counts: a calibration factor comes
// from the provider's reports, and one absurd report must not be able to
// refuse every later call of a session (ARCHITECTURE.md, "Trusting the
// provider's counts").
func (l limits) hardLimit() int { return satAdd(l.window, scaleSat(l.window, irreducibleMargin)) }

func newLimits(window int) limits {
	b := bufferFor(window)
	return limits{window: window, buffer: b, threshold: window - b}
}

// satAdd is a + b for non-negative token counts, saturating at math.MaxInt
// instead of wrapping: sizes come from outside (windows up to math.MaxInt,
// image dimensions, provider reports), and a wrapped sum would turn an
// enormous request into a small one.
func satAdd(a, b int) int {
	if b > 0 && a > math.MaxInt-b {
		return math.MaxInt
	}
	return a + b
}

// scaleSat is ceil(n·f) for n ≥ 0 and f ≥ 0, saturating at math.MaxInt
// (a float64 above MaxInt converts to an undefined int).
func scaleSat(n int, f float64) int {
	v := math.Ceil(float64(n) * f)
	if v >= math.MaxInt || math.IsNaN(v) {
		return math.MaxInt
	}
	if v <= 0 {
		return 0
	}
	return int(v)
}
