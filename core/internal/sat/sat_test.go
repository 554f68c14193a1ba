package sat

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestAdd: a sum of counts, exact where it fits, math.MaxInt where it
// would wrap.
func TestAdd(t *testing.T) {
	for _, tc := range []struct {
		name       string
		a, b, want int
	}{
		{"small counts add exactly", 3, 4, 7},
		{"adding nothing keeps the count", 5, 0, 5},
		{"a negative b subtracts", 5, -2, 3},
		{"a window of MaxInt plus a margin saturates", math.MaxInt, 1, math.MaxInt},
		{"two halves of MaxInt saturate", math.MaxInt/2 + 1, math.MaxInt/2 + 1, math.MaxInt},
		{"the largest sum that fits is exact", math.MaxInt - 10, 10, math.MaxInt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Add(tc.a, tc.b))
		})
	}
}

// TestMulDiv: a share of a count, as the plain product would give it where
// that does not overflow, and still exact where it would.
func TestMulDiv(t *testing.T) {
	cases := []struct {
		n, num, den, want int
	}{
		{n: 0, num: 8, den: 10, want: 0},
		{n: 5, num: 8, den: 10, want: 4},
		{n: 6_400, num: 80, den: 100, want: 5_120},
		{n: 7, num: 3, den: 4, want: 5},
		{n: -5, num: 8, den: 10, want: -4},
		{n: -1_001, num: 80, den: 100, want: -800},
		{n: math.MaxInt, num: 80, den: 100, want: 7_378_697_629_483_820_645},
		{n: math.MaxInt - 20_000, num: 8, den: 10, want: 7_378_697_629_483_804_645},
		{n: math.MinInt + 1, num: 1, den: 2, want: -4_611_686_018_427_387_903},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%d*%d/%d", tc.n, tc.num, tc.den), func(t *testing.T) {
			assert.Equal(t, tc.want, MulDiv(tc.n, tc.num, tc.den))
			if tc.n > -1<<40 && tc.n < 1<<40 {
				assert.Equal(t, tc.n*tc.num/tc.den, MulDiv(tc.n, tc.num, tc.den), "as the plain product gives it")
			}
		})
	}
}

// TestScale: a count scaled by a factor rounds up, and saturates rather
// than converting an out-of-range float64.
func TestScale(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    int
		f    float64
		want int
	}{
		{"a whole product is exact", 1_000, 0.5, 500},
		{"a fraction rounds up", 1_001, 0.5, 501},
		{"a factor of zero gives zero", 1_000, 0, 0},
		{"a negative product gives zero", 1_000, -0.5, 0},
		{"a window of MaxInt scaled past one saturates", math.MaxInt, 1.1, math.MaxInt},
		{"a NaN factor saturates", 10, math.NaN(), math.MaxInt},
		{"an infinite factor saturates", 10, math.Inf(1), math.MaxInt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Scale(tc.n, tc.f))
		})
	}
}
