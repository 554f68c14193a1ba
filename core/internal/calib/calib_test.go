package calib

import (
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
