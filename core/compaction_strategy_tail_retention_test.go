package core

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/adk-contextguard/contextguard/core/coretest"

	"github.com/adk-contextguard/contextguard/core/internal/estimate"
	"github.com/adk-contextguard/contextguard/core/internal/pairs"
	"github.com/adk-contextguard/contextguard/core/internal/state"
	"github.com/adk-contextguard/contextguard/core/internal/textcut"
)

// TestTailRetention_KeepsNewestWithinFraction: at the token trigger the
// newest contents that fit the fraction of the window are sent verbatim
// after the summary, the split is pair-safe, the watermark is the split,
// and the summarizer sees exactly the contents before it.
func TestTailRetention_KeepsNewestWithinFraction(t *testing.T) {
	rs := &recordingSummarizer{reply: func(int, SummaryRequest) (string, error) { return "TAIL-SUMMARY", nil }}
	g, _ := newTestGuard(t, nil, WithSummarizer(rs), WithTailRetention(0.25), WithMaxTokens(32_000))
	raw := swHistory(0, 12, 1_000)
	ctx := newFakeCtx("a").withUser(textcut.ContentText(raw[len(raw)-4]))
	req := request(raw...)
	_, err := g.beforeModel(ctx, req)
	require.NoError(t, err)
	require.Len(t, rs.requests(), 1)

	split := ctx.getInt(state.KeyWatermark)
	require.Greater(t, split, 0)
	require.Less(t, split, len(raw), "a verbatim tail is kept")
	assert.Equal(t, split, pairs.SafeStart(raw, split), "the split is pair-safe")
	require.Len(t, req.Contents, 1+len(raw)-split)
	assert.Contains(t, textcut.ContentText(req.Contents[0]), "TAIL-SUMMARY")
	for i, c := range raw[split:] {
		assert.Same(t, c, req.Contents[1+i], "kept contents are sent verbatim")
	}
	require.NoError(t, coretest.CheckPairs(req.Contents))
	kept := estimate.Contents(testEst, raw[split:])
	assert.LessOrEqual(t, kept, 32_000/4, "the tail fits a quarter of the window")
	// One more content would not have fit.
	assert.Greater(t, estimate.Contents(testEst, raw[split-1:]), 32_000/4*10/11, "the tail is as long as the fraction allows, give or take a content")
	assert.Equal(t, contentsMarkers(raw[:split]), contentsMarkers(rs.requests()[0].Contents), "the summarizer sees the contents before the split")
}

// TestTailRetention_NoTailFits: when the newest content alone is larger
// than the fraction, everything is summarized, as the threshold strategy
// does.
func TestTailRetention_NoTailFits(t *testing.T) {
	sum := fixedSummary("FULL")
	g, _ := newTestGuard(t, sum, WithTailRetention(0.1), WithMaxTokens(8_000))
	raw := append(swHistory(0, 3, 200), userMsg("U9-MARK look at this"),
		callMsg("kubectl_logs", nil), respMsg("kubectl_logs", map[string]any{"output": coretest.Filler(14_000, 3)}))
	ctx := newFakeCtx("a").withUser("U9-MARK look at this")
	req := request(raw...)
	_, err := g.beforeModel(ctx, req)
	require.NoError(t, err)
	assert.Equal(t, 1, sum.Calls())
	require.Len(t, req.Contents, 1)
	assert.Contains(t, textcut.ContentText(req.Contents[0]), "U9-MARK", "the continuation quotes the request")
	assert.Equal(t, len(raw), ctx.getInt(state.KeyWatermark))
}

// TestTailRetention_OnlyAtTokenTrigger: under the trigger nothing is
// compacted, however many turns were added.
func TestTailRetention_OnlyAtTokenTrigger(t *testing.T) {
	sum := fixedSummary("S")
	g, _ := newTestGuard(t, sum, WithTailRetention(0.3), WithMaxTokens(200_000))
	raw := swHistory(0, 40, 50)
	ctx := newFakeCtx("a").withUser(textcut.ContentText(raw[len(raw)-4]))
	req := request(raw...)
	_, err := g.beforeModel(ctx, req)
	require.NoError(t, err)
	assert.Zero(t, sum.Calls())
	assert.Len(t, req.Contents, len(raw))
}

// TestWithTailRetention_Validated: a fraction outside (0, 1) is an error of
// Add, recorded for Plugin().
func TestWithTailRetention_Validated(t *testing.T) {
	for _, f := range []float64{0, -0.5, 1, 1.5, math.NaN(), math.Inf(1)} {
		g := newGuard(NewCrushRegistry())
		g.addModel("a", fixedSummary("S"), WithTailRetention(f))
		assert.ErrorContains(t, g.Err(), "WithTailRetention", "fraction %v", f)
	}
	g := newGuard(NewCrushRegistry())
	g.addModel("a", fixedSummary("S"), WithTailRetention(0.3))
	assert.NoError(t, g.Err())
}
