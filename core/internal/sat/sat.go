// Package sat is arithmetic on sizes that come from outside (windows up to
// math.MaxInt, image dimensions, provider reports): sums and scalings that
// saturate at math.MaxInt instead of wrapping, since a wrapped sum would
// turn an enormous request into a small one.
package sat

import "math"

// Add is a + b for non-negative token counts, saturating at math.MaxInt
// instead of wrapping.
func Add(a, b int) int {
	if b > 0 && a > math.MaxInt-b {
		return math.MaxInt
	}
	return a + b
}

// MulDiv is n·num/den, truncated toward zero as Go's integer division is,
// for num >= 0 and den > 0, without the overflow of n·num: n is a count
// from outside (a window up to math.MaxInt, less what a request holds), and
// a wrapped product would turn an enormous room into none. num/den is a
// share below one, so the result fits.
func MulDiv(n, num, den int) int {
	return n/den*num + n%den*num/den
}

// Scale is ceil(n·f) for n ≥ 0 and f ≥ 0, saturating at math.MaxInt
// (a float64 above MaxInt converts to an undefined int).
func Scale(n int, f float64) int {
	v := math.Ceil(float64(n) * f)
	if v >= math.MaxInt || math.IsNaN(v) {
		return math.MaxInt
	}
	if v <= 0 {
		return 0
	}
	return int(v)
}
