package core

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestLimitsWithOutput: the trigger kept for an output limit.
func TestLimitsWithOutput(t *testing.T) {
	tests := []struct {
		window, output int
		wantThreshold  int
		wantOK         bool
	}{
		{200_000, 0, 180_000, true},
		{200_000, 64_000, 200_000 - 64_000 - 4_000, true},
		{128_000, 32_000, 128_000 - 32_000 - 2_560, true},
		{128_000, 8_192, 102_400, true},           // the configured trigger already leaves the room
		{8_000, 8_192, 6_400, false},              // no room for the prompt at all
		{8_000, 5_000, 8_000 - 5_000 - 256, true}, // the margin's floor, the prompt keeps over a quarter
		{8_000, 5_800, 6_400, false},              // under a quarter of the window left
		{1 << 40, 1 << 31, 1<<40 - 1<<31 - 21_990_232_556, true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d/%d", tt.window, tt.output), func(t *testing.T) {
			l, ok := newLimits(tt.window).withOutput(tt.output)
			assert.Equal(t, tt.wantOK, ok)
			assert.Equal(t, tt.wantThreshold, l.threshold)
			assert.Equal(t, tt.window-tt.wantThreshold, l.buffer)
			if ok && tt.output > 0 {
				assert.LessOrEqual(t, l.threshold+tt.output, tt.window)
			}
		})
	}
}

func TestBufferFor(t *testing.T) {
	tests := []struct{ window, buffer int }{
		{4_000, 800},
		{8_000, 1_600},
		{128_000, 25_600},
		{199_999, 39_999},
		{200_000, 20_000}, // boundary inclusive (the earlier guard's boundary bug)
		{1_000_000, 20_000},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.buffer, bufferFor(tt.window), "window %d", tt.window)
		assert.Equal(t, tt.window-tt.buffer, newLimits(tt.window).threshold)
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
			assert.Equal(t, tc.want, mulDiv(tc.n, tc.num, tc.den))
			if tc.n > -1<<40 && tc.n < 1<<40 {
				assert.Equal(t, tc.n*tc.num/tc.den, mulDiv(tc.n, tc.num, tc.den), "as the plain product gives it")
			}
		})
	}
}
