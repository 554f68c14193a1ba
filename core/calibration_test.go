package core

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"
)

// TestReportJudge: which provider counts are believed, for a request the
// guard estimated at 10,000 tokens in a 128k window.
func TestReportJudge(t *testing.T) {
	const est = 10_000
	hard := newLimits(128_000).hardLimit()
	tests := []struct {
		name      string
		real      int
		learned   int // per mille
		suspect   int // per mille
		trusted   bool
		newSusp   bool // the ratio is kept to be confirmed
		wantRatio int
	}{
		{"plausible first count", 11_000, 0, 0, true, false, 1100},
		{"zero", 0, 1000, 0, false, false, 0},
		{"negative", -5, 1000, 0, false, false, 0},
		{"2^31-1", math.MaxInt32, 1000, 0, false, false, 0},
		{"beyond the window", hard + 1, 0, 0, false, false, 0},
		{"100x too low", est / 100, 1000, 0, false, false, 0},
		{"100x too low, first count", est / 100, 0, 0, false, false, 0},
		{"5.5x, first count: nothing to compare with, within the window", est * 11 / 2, 0, 0, true, false, 5500},
		{"10x, images charged by their bytes, first count", est * 10, 0, 0, true, false, 10000},
		{"5x too high after 1.0", est * 5, 1000, 0, false, true, 5000},
		{"jump confirmed by the next count", est * 2, 1000, 2050, true, false, 2000},
		{"jump not confirmed", est * 2, 1000, 3000, false, true, 2000},
		{"small drift believed", est * 13 / 10, 1000, 0, true, false, 1300},
		{"cumulative: second call doubles the ratio", est * 2, 1000, 0, false, true, 2000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ratio, trusted, reason := report{real: tt.real, estimate: est, hardLimit: hard, learned: tt.learned, suspect: tt.suspect}.judge()
			assert.Equal(t, tt.trusted, trusted, "reason: %q", reason)
			if trusted {
				assert.Empty(t, reason)
				assert.Equal(t, tt.wantRatio, ratio)
				return
			}
			assert.NotEmpty(t, reason)
			if tt.newSusp {
				assert.Equal(t, tt.wantRatio, ratio, "the jumped ratio waits for confirmation")
			}
		})
	}
}

// TestAfterModel_UnbelievableCountNotRecorded: an absurd count clears the
// call's real count (so the next call calibrates with what the session
// learned), is logged once per agent, and does not move the learned ratio.
func TestAfterModel_UnbelievableCountNotRecorded(t *testing.T) {
	g, logs := newTestGuard(t, fixedSummary("x"))
	ctx := newFakeCtx("a")
	ctx.set(keyLastEstimate, 1000)
	ctx.set(keyWindow, 8000)
	respond := func(n int32) {
		_, err := g.afterModel(ctx, &Response{UsageMetadata: &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: n}}, nil)
		require.NoError(t, err)
	}

	respond(1100)
	assert.Equal(t, 1100, ctx.getInt(keyRealTokens))
	assert.Equal(t, 1100, ctx.getInt(keyProviderRatio))

	for _, n := range []int32{math.MaxInt32, -7, 10} {
		respond(n)
		assert.Zero(t, ctx.getInt(keyRealTokens), "count %d", n)
		assert.Equal(t, 1100, ctx.getInt(keyProviderRatio), "count %d", n)
	}
	assert.Equal(t, 1, strings.Count(logs.String(), "level=WARN msg=\"contextguard: the provider's prompt-token count is not believable"), "one warning per agent, not per count: %s", logs)
}

// TestNewCalibration_LearnedRatio: without a count for the last request
// (after a compaction, or a count that was not believed) the session's
// learned ratio still calibrates, bounded to [1, maxCorrection].
func TestNewCalibration_LearnedRatio(t *testing.T) {
	e := estimatorFor("gpt-4o")
	tests := []struct {
		name string
		st   guardState
		want float64
	}{
		{"nothing learned", guardState{}, defaultCorrection},
		{"learned above the default", guardState{providerRatio: 1500}, 1.5},
		{"learned below the default", guardState{providerRatio: 900}, defaultCorrection},
		{"learned beyond the cap", guardState{providerRatio: 9000}, maxCorrection},
		{"the last count wins", guardState{realTokens: 1200, lastEstimate: 1000, providerRatio: 1500}, 1.2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.InDelta(t, tt.want, newCalibration(tt.st, e).factor, 1e-9)
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
			c := calibration{factor: tt.factor}
			got := c.unscale(tt.n)
			assert.Equal(t, tt.want, got)
			assert.InDelta(t, tt.n, c.scale(got), 1, "calibrated back to the room set aside")
		})
	}
}

// TestLearnFromOverflow: the provider ratio a session learns when the
// provider rejects a request the guard estimated at 10,000 tokens, in a
// window of 12,000.
func TestLearnFromOverflow(t *testing.T) {
	const est, limit = 10_000, 12_000
	tests := []struct {
		name    string
		learned int
		real    int
		want    int
	}{
		{"a stated count calibrates the session", 0, 15_000, 1_500},
		{"a stated count replaces an earlier ratio", 1_800, 15_000, 1_500},
		{"no count: a step up from the default factor, at least just over the limit", 0, 0, 1_375},
		{"no count: a step up from the learned ratio", 1_400, 0, 1_750},
		{"no count: bounded by maxCorrection", 4_500, 0, 5_000},
		{"an unbelievable count is no count", 0, 90_000, 1_375},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, learnFromOverflow(tt.learned, defaultCorrection, tt.real, limit, est))
		})
	}
	t.Run("the limit raises more than the step", func(t *testing.T) {
		assert.Equal(t, 2_000, learnFromOverflow(0, defaultCorrection, 0, 19_999, est))
	})
	t.Run("no estimate: nothing learned", func(t *testing.T) {
		assert.Equal(t, 1_200, learnFromOverflow(1_200, defaultCorrection, 15_000, limit, 0))
	})
}
