package calib

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestReportJudge: what provider counts are believed for, for a request
// the guard estimated at 10,000 tokens in a 128k window: the call's count
// (count) and the session's learned ratio (learn).
func TestReportJudge(t *testing.T) {
	const est = 10_000
	const hard = 128_000 * 11 / 10 // a 128k window and the estimator's p90 error
	tests := []struct {
		name      string
		real      int
		learned   int // per mille
		suspect   int // per mille
		count     bool
		learn     bool
		wantRatio int
		newSusp   bool // the ratio is kept to be confirmed
	}{
		{"plausible first count", 11_000, 0, 0, true, true, 1100, false},
		{"zero", 0, 1000, 0, false, false, 0, false},
		{"negative", -5, 1000, 0, false, false, 0, false},
		{"2^31-1", math.MaxInt32, 1000, 0, false, false, 0, false},
		{"beyond the window", hard + 1, 0, 0, false, false, 0, false},
		{"100x too low", est / 100, 1000, 0, false, false, 0, false},
		{"100x too low, first count", est / 100, 0, 0, false, false, 0, false},
		{"5.5x, first count: nothing to compare with, within the window", est * 11 / 2, 0, 0, true, true, 5500, false},
		{"10x, images charged by their bytes, first count", est * 10, 0, 0, true, true, 10000, false},
		{"5x after 1.0: the call's count at once, learned once confirmed", est * 5, 1000, 0, true, false, 5000, true},
		{"1.6x after 1.0, an unseen edit: the call's count at once", est * 16 / 10, 1000, 0, true, false, 1600, true},
		{"jump confirmed by the next count", est * 2, 1000, 2050, true, true, 2000, false},
		{"higher jump not confirmed: still the call's count", est * 2, 1000, 3000, true, false, 2000, true},
		{"small drift believed", est * 13 / 10, 1000, 0, true, true, 1300, false},
		{"cumulative: second call doubles the ratio, not learned", est * 2, 1000, 0, true, false, 2000, true},
		{"drop by more than 1.5x: believed for nothing until confirmed", est, 2000, 0, false, false, 1000, true},
		{"drop confirmed by the next count", est, 2000, 1020, true, true, 1000, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Report{Real: tt.real, Estimate: est, HardLimit: hard, Learned: tt.learned, Suspect: tt.suspect}.Judge()
			assert.Equal(t, tt.count, v.Count, "the call's count; reason: %q", v.Reason)
			assert.Equal(t, tt.learn, v.Learn, "the learned ratio; reason: %q", v.Reason)
			if tt.count || tt.newSusp {
				assert.Equal(t, tt.wantRatio, v.Ratio)
			}
			if tt.newSusp {
				assert.Equal(t, tt.wantRatio, v.Suspect, "the jumped ratio waits for confirmation")
			} else {
				assert.Zero(t, v.Suspect)
			}
			if tt.count && tt.learn {
				assert.Empty(t, v.Reason)
			} else {
				assert.NotEmpty(t, v.Reason)
			}
		})
	}
}
