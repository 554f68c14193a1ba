package calib

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// def is the feature estimator's default factor, which the tests calibrate
// with when the provider has not counted yet.
const def = 1.10

// session is what a session's state tells a new calibration.
type session struct{ real, lastEstimate, ratio int }

// TestNew: the factor and the count of a request estimated at estimate
// tokens, from the provider's last count when there is one, bounded to
// [1, MaxCorrection].
func TestNew(t *testing.T) {
	tests := []struct {
		name       string
		st         session
		estimate   int
		wantFactor float64
		wantCount  int
	}{
		{"no real count uses the default factor", session{}, 1000, def, 1100},
		{"ratio", session{real: 2000, lastEstimate: 1000}, 1500, 2.0, 3000},
		{"floored at one", session{real: 500, lastEstimate: 1000}, 1000, 1.0, 1000},
		{"capped at five", session{real: 10000, lastEstimate: 1000}, 1000, 5.0, 10000},
		{"real count wins when larger", session{real: 9000, lastEstimate: 3000}, 1000, 3.0, 9000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New(tt.st.real, tt.st.lastEstimate, tt.st.ratio, def)
			assert.InDelta(t, tt.wantFactor, c.Factor, 1e-9)
			assert.Equal(t, tt.wantCount, c.Count(tt.estimate))
		})
	}
}

// TestNew_LearnedRatio: without a count for the last request (after a
// compaction, or a count that was not believed) the session's learned ratio
// still calibrates, bounded to [1, MaxCorrection].
func TestNew_LearnedRatio(t *testing.T) {
	tests := []struct {
		name string
		st   session
		want float64
	}{
		{"nothing learned", session{}, def},
		{"learned above the default", session{ratio: 1500}, 1.5},
		{"learned below the default", session{ratio: 900}, def},
		{"learned beyond the cap", session{ratio: 9000}, MaxCorrection},
		{"the last count wins", session{real: 1200, lastEstimate: 1000, ratio: 1500}, 1.2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.InDelta(t, tt.want, New(tt.st.real, tt.st.lastEstimate, tt.st.ratio, def).Factor, 1e-9)
		})
	}
}

// TestCalibration_Unscale: the length told to a summarizer, once written
// and calibrated, takes the room set aside for it (within rounding), and a
// factor at or below 1 leaves lengths as they are.
func TestCalibration_Unscale(t *testing.T) {
	tests := []struct {
		name   string
		factor float64
		n      int
		want   int
	}{
		{"no correction", 1, 1000, 1000},
		{"provider charges twice", 2, 1000, 500},
		{"provider charges 1.3x", 1.3, 1300, 1000},
		{"zero", 2, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Calibration{Factor: tt.factor}
			got := c.Unscale(tt.n)
			assert.Equal(t, tt.want, got)
			assert.InDelta(t, tt.n, c.Scale(got), 1, "calibrated back to the room set aside")
		})
	}
}

// TestLearnFromOverflow: the provider ratio a session learns when the
// provider rejects a request the guard estimated at 10,000 tokens.
func TestLearnFromOverflow(t *testing.T) {
	const est = 10_000
	tests := []struct {
		name    string
		learned int
		real    int
		want    int
	}{
		{"a stated count calibrates the session", 0, 15_000, 1_500},
		{"a stated count replaces an earlier ratio", 1_800, 15_000, 1_500},
		{"no count: a step up from the default factor", 0, 0, 1_375},
		{"no count: a step up from the learned ratio", 1_400, 0, 1_750},
		{"no count: bounded by MaxCorrection", 4_500, 0, 5_000},
		{"an unbelievable count is no count", 0, 90_000, 1_375},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, LearnFromOverflow(tt.learned, def, tt.real, est))
		})
	}
	t.Run("no estimate: nothing learned", func(t *testing.T) {
		assert.Equal(t, 1_200, LearnFromOverflow(1_200, def, 15_000, 0))
	})
}

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
