package core

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/adk-contextguard/contextguard/core/coretest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/sat"
	"github.com/adk-contextguard/contextguard/core/internal/textcut"
	"github.com/adk-contextguard/contextguard/core/internal/window"
)

// TestReportJudge: what provider counts are believed for, for a request
// the guard estimated at 10,000 tokens in a 128k window: the call's count
// (count) and the session's learned ratio (learn).
func TestReportJudge(t *testing.T) {
	const est = 10_000
	hard := window.New(128_000).HardLimit()
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
			v := report{real: tt.real, estimate: est, hardLimit: hard, learned: tt.learned, suspect: tt.suspect}.judge()
			assert.Equal(t, tt.count, v.count, "the call's count; reason: %q", v.reason)
			assert.Equal(t, tt.learn, v.learn, "the learned ratio; reason: %q", v.reason)
			if tt.count || tt.newSusp {
				assert.Equal(t, tt.wantRatio, v.ratio)
			}
			if tt.newSusp {
				assert.Equal(t, tt.wantRatio, v.suspect, "the jumped ratio waits for confirmation")
			} else {
				assert.Zero(t, v.suspect)
			}
			if tt.count && tt.learn {
				assert.Empty(t, v.reason)
			} else {
				assert.NotEmpty(t, v.reason)
			}
		})
	}
}

// TestAfterModel_HigherCountAfterUnseenEdit is the scenario: a
// session whose provider counts like the estimator (learned ratio 1.0),
// then an edit the guard's estimate does not see, so the provider's next
// count is 1.6x the estimate, in a 16,000 window. That count is the call's
// count at once, so the next request, which carries the edit too, is
// counted at least at it and compacts first instead of going past the
// window; the session learns the ratio only when the next count confirms
// it.
func TestAfterModel_HigherCountAfterUnseenEdit(t *testing.T) {
	sum := fixedSummary("SUMMARY")
	g, _ := newTestGuard(t, sum, WithMaxTokens(16_000))
	ctx := newFakeCtx("a").withUser("LATEST go on")
	ctx.set(keyProviderRatio, 1000)

	raw := append(history(6, 900), userMsg("LATEST go on"))
	req := request(raw...)
	_, err := g.beforeModel(ctx, req)
	require.NoError(t, err)
	require.Zero(t, sum.Calls(), "under the trigger by the guard's estimate")
	est := ctx.getInt(keyLastEstimate)
	threshold := ctx.getInt(keyThreshold)
	require.Less(t, sat.Scale(est, defaultCorrection), threshold)

	real := est * 16 / 10
	require.Greater(t, real, threshold, "the provider's count is past the trigger")
	require.LessOrEqual(t, real, 16_000, "and inside the window")
	_, err = g.afterModel(ctx, &Response{UsageMetadata: &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: int32(real)}}, nil)
	require.NoError(t, err)
	assert.Equal(t, real, ctx.getInt(keyRealTokens), "the higher count is the call's count")
	assert.Equal(t, 1000, ctx.getInt(keyProviderRatio), "the session's ratio waits for confirmation")
	assert.Equal(t, 1600, ctx.getInt(keySuspectRatio))

	next := request(append(append([]*genai.Content{}, raw...), modelMsg("done"), userMsg("LATEST go on"))...)
	_, err = g.beforeModel(ctx, next)
	require.NoError(t, err)
	assert.Equal(t, 1, sum.Calls(), "the next request is counted at least at the provider's count, and compacts first")
	assert.Contains(t, textcut.ContentText(next.Contents[0]), "SUMMARY")
}

// TestAfterModel_JumpLearnedOnConfirmation: a jumped ratio the next count
// repeats is learned by the session; one it does not repeat is not.
func TestAfterModel_JumpLearnedOnConfirmation(t *testing.T) {
	g, _ := newTestGuard(t, fixedSummary("x"))
	ctx := newFakeCtx("a")
	ctx.set(keyLastEstimate, 1000)
	ctx.set(keyWindow, 128_000)
	ctx.set(keyProviderRatio, 1000)
	respond := func(n int32) {
		_, err := g.afterModel(ctx, &Response{UsageMetadata: &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: n}}, nil)
		require.NoError(t, err)
	}

	respond(2000) // a running total's second call
	respond(3000) // and its third: not a confirmation
	assert.Equal(t, 1000, ctx.getInt(keyProviderRatio), "a running total is never learned")
	assert.Equal(t, 3000, ctx.getInt(keyRealTokens), "each count is still the call's count")

	respond(3050) // a real change of content repeats
	assert.Equal(t, 3050, ctx.getInt(keyProviderRatio))
	assert.Zero(t, ctx.getInt(keySuspectRatio))
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
		{"no count: bounded by maxCorrection", 4_500, 0, 5_000},
		{"an unbelievable count is no count", 0, 90_000, 1_375},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, learnFromOverflow(tt.learned, defaultCorrection, tt.real, est))
		})
	}
	t.Run("no estimate: nothing learned", func(t *testing.T) {
		assert.Equal(t, 1_200, learnFromOverflow(1_200, defaultCorrection, 15_000, 0))
	})
}

// oddOverflowErrors are the odd errors on a small request: no
// count, "0 > 0", 2^63, a negative count, a limit only, a generic message,
// and a monthly quota (not an overflow at all).
var oddOverflowErrors = []struct {
	name string
	err  error
}{
	{"no count", providerErr("400 Bad Request: prompt is too long")},
	{"0 > 0", providerErr("prompt is too long: 0 tokens > 0 maximum")},
	{"2^63", providerErr("prompt is too long: 9223372036854775808 tokens > 16000 maximum")},
	{"negative count", providerErr("prompt is too long: -5 tokens > 16000 maximum")},
	{"a limit only", providerErr("This model's maximum context length is 16000 tokens.")},
	{"generic", &coretest.OverflowError{Style: coretest.ErrorGeneric}},
	{"monthly quota", providerErr("403: monthly token limit exceeded")},
}

// TestOnModelError_OddErrorRaisesRatioOneStep: each odd error, on a small
// request of a session without usage metadata, raises the learned ratio by
// at most one overflowStep from the estimator's default factor, never to
// maxCorrection.
func TestOnModelError_OddErrorRaisesRatioOneStep(t *testing.T) {
	oneStep := ratioPerMille(defaultCorrection * overflowStep)
	for _, tt := range oddOverflowErrors {
		t.Run(tt.name, func(t *testing.T) {
			g, _ := newTestGuard(t, fixedSummary("SUMMARY"), WithMaxTokens(16_000))
			ctx := newFakeCtx("a").withUser("LATEST go on")
			raw := append(history(1, 300), userMsg("LATEST go on"))
			req := request(raw...)
			_, err := g.beforeModel(ctx, req)
			require.NoError(t, err)
			_, err = g.onModelError(ctx, req, tt.err)
			require.NoError(t, err)

			next := request(append(append([]*genai.Content{}, raw...), modelMsg("ok"), userMsg("LATEST go on"))...)
			_, err = g.beforeModel(ctx, next)
			require.NoError(t, err)
			ratio := ctx.getInt(keyProviderRatio)
			assert.LessOrEqual(t, ratio, oneStep, "at most one step: %d", ratio)
		})
	}
}

// TestOnModelError_OddErrorCompactsAboutAsOften: a ten-turn session of a
// 16,000 window without usage metadata, each turn about 2,000 tokens, with
// one odd error in its second turn, calls the summarizer at most once more
// (the compaction the error asks of the next call) than the same session
// without it.
func TestOnModelError_OddErrorCompactsAboutAsOften(t *testing.T) {
	play := func(t *testing.T, odd error) int {
		t.Helper()
		sum := fixedSummary("SUMMARY of the work so far")
		g, _ := newTestGuard(t, sum, WithMaxTokens(16_000))
		ctx := newFakeCtx("a")
		var raw []*genai.Content
		for turn := range 10 {
			text := fmt.Sprintf("LATEST turn %d %s", turn, filler(3_600, 3*turn))
			ctx.withUser(text)
			raw = append(raw, userMsg(text))
			req := request(raw...)
			_, err := g.beforeModel(ctx, req)
			require.NoError(t, err)
			if turn == 1 && odd != nil {
				_, err = g.onModelError(ctx, req, odd)
				require.NoError(t, err)
				continue
			}
			raw = append(raw, modelMsg(fmt.Sprintf("answer %d %s", turn, filler(3_600, 3*turn+1))))
		}
		return sum.Calls()
	}
	base := play(t, nil)
	require.Positive(t, base, "the session compacts on its own")
	t.Logf("without an odd error: %d summarizer calls", base)
	for _, tt := range oddOverflowErrors {
		t.Run(tt.name, func(t *testing.T) {
			calls := play(t, tt.err)
			t.Logf("%d summarizer calls", calls)
			assert.LessOrEqual(t, calls, base+1)
		})
	}
}

func TestCalibration(t *testing.T) {
	e := testEst
	tests := []struct {
		name       string
		st         guardState
		estimate   int
		wantFactor float64
		wantCount  int
	}{
		{"no real count uses the default factor", guardState{}, 1000, defaultCorrection, 1100},
		{"ratio", guardState{realTokens: 2000, lastEstimate: 1000}, 1500, 2.0, 3000},
		{"floored at one", guardState{realTokens: 500, lastEstimate: 1000}, 1000, 1.0, 1000},
		{"capped at five", guardState{realTokens: 10000, lastEstimate: 1000}, 1000, 5.0, 10000},
		{"real count wins when larger", guardState{realTokens: 9000, lastEstimate: 3000}, 1000, 3.0, 9000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCalibration(tt.st, e)
			assert.InDelta(t, tt.wantFactor, c.factor, 1e-9)
			assert.Equal(t, tt.wantCount, c.count(tt.estimate))
		})
	}
}
