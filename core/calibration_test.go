package core

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/coretest"

	"github.com/adk-contextguard/contextguard/core/internal/calib"
	"github.com/adk-contextguard/contextguard/core/internal/estimate"
	"github.com/adk-contextguard/contextguard/core/internal/sat"
	"github.com/adk-contextguard/contextguard/core/internal/state"
	"github.com/adk-contextguard/contextguard/core/internal/textcut"
)

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
	ctx.set(state.KeyProviderRatio, 1000)

	raw := append(coretest.History(6, 900), userMsg("LATEST go on"))
	req := request(raw...)
	_, err := g.beforeModel(ctx, req)
	require.NoError(t, err)
	require.Zero(t, sum.Calls(), "under the trigger by the guard's estimate")
	est := ctx.getInt(state.KeyLastEstimate)
	threshold := ctx.getInt(state.KeyThreshold)
	require.Less(t, sat.Scale(est, estimate.DefaultCorrection), threshold)

	real := est * 16 / 10
	require.Greater(t, real, threshold, "the provider's count is past the trigger")
	require.LessOrEqual(t, real, 16_000, "and inside the window")
	_, err = g.afterModel(ctx, &Response{UsageMetadata: &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: int32(real)}}, nil)
	require.NoError(t, err)
	assert.Equal(t, real, ctx.getInt(state.KeyRealTokens), "the higher count is the call's count")
	assert.Equal(t, 1000, ctx.getInt(state.KeyProviderRatio), "the session's ratio waits for confirmation")
	assert.Equal(t, 1600, ctx.getInt(state.KeySuspectRatio))

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
	ctx.set(state.KeyLastEstimate, 1000)
	ctx.set(state.KeyWindow, 128_000)
	ctx.set(state.KeyProviderRatio, 1000)
	respond := func(n int32) {
		_, err := g.afterModel(ctx, &Response{UsageMetadata: &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: n}}, nil)
		require.NoError(t, err)
	}

	respond(2000) // a running total's second call
	respond(3000) // and its third: not a confirmation
	assert.Equal(t, 1000, ctx.getInt(state.KeyProviderRatio), "a running total is never learned")
	assert.Equal(t, 3000, ctx.getInt(state.KeyRealTokens), "each count is still the call's count")

	respond(3050) // a real change of content repeats
	assert.Equal(t, 3050, ctx.getInt(state.KeyProviderRatio))
	assert.Zero(t, ctx.getInt(state.KeySuspectRatio))
}

// TestAfterModel_UnbelievableCountNotRecorded: an absurd count clears the
// call's real count (so the next call calibrates with what the session
// learned), is logged once per agent, and does not move the learned ratio.
func TestAfterModel_UnbelievableCountNotRecorded(t *testing.T) {
	g, logs := newTestGuard(t, fixedSummary("x"))
	ctx := newFakeCtx("a")
	ctx.set(state.KeyLastEstimate, 1000)
	ctx.set(state.KeyWindow, 8000)
	respond := func(n int32) {
		_, err := g.afterModel(ctx, &Response{UsageMetadata: &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: n}}, nil)
		require.NoError(t, err)
	}

	respond(1100)
	assert.Equal(t, 1100, ctx.getInt(state.KeyRealTokens))
	assert.Equal(t, 1100, ctx.getInt(state.KeyProviderRatio))

	for _, n := range []int32{math.MaxInt32, -7, 10} {
		respond(n)
		assert.Zero(t, ctx.getInt(state.KeyRealTokens), "count %d", n)
		assert.Equal(t, 1100, ctx.getInt(state.KeyProviderRatio), "count %d", n)
	}
	assert.Equal(t, 1, strings.Count(logs.String(), "level=WARN msg=\"contextguard: the provider's prompt-token count is not believable"), "one warning per agent, not per count: %s", logs)
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
// at most one OverflowStep from the estimator's default factor, never to
// MaxCorrection (core/internal/calib).
func TestOnModelError_OddErrorRaisesRatioOneStep(t *testing.T) {
	oneStep := calib.PerMille(estimate.DefaultCorrection * calib.OverflowStep)
	for _, tt := range oddOverflowErrors {
		t.Run(tt.name, func(t *testing.T) {
			g, _ := newTestGuard(t, fixedSummary("SUMMARY"), WithMaxTokens(16_000))
			ctx := newFakeCtx("a").withUser("LATEST go on")
			raw := append(coretest.History(1, 300), userMsg("LATEST go on"))
			req := request(raw...)
			_, err := g.beforeModel(ctx, req)
			require.NoError(t, err)
			_, err = g.onModelError(ctx, req, tt.err)
			require.NoError(t, err)

			next := request(append(append([]*genai.Content{}, raw...), modelMsg("ok"), userMsg("LATEST go on"))...)
			_, err = g.beforeModel(ctx, next)
			require.NoError(t, err)
			ratio := ctx.getInt(state.KeyProviderRatio)
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
			text := fmt.Sprintf("LATEST turn %d %s", turn, coretest.Filler(3_600, 3*turn))
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
			raw = append(raw, modelMsg(fmt.Sprintf("answer %d %s", turn, coretest.Filler(3_600, 3*turn+1))))
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
