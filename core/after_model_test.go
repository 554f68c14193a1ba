package core

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/coretest"
)

// TestAfterModel_CachedTokens: the provider's cached-token count is kept
// for Usage when a response reports usage, and a count that cannot be
// right (above the prompt's, negative) reads as none.
func TestAfterModel_CachedTokens(t *testing.T) {
	g, _ := newTestGuard(t, fixedSummary("S"), WithMaxTokens(100_000))
	ctx := newFakeCtx("a")
	_, err := g.beforeModel(ctx, request(coretest.History(2, 200)...))
	require.NoError(t, err)
	cached := func() int {
		u, err := g.UsageFromState(ctx.state, "a")
		require.NoError(t, err)
		return u.CachedTokens
	}
	report := func(prompt, cached int32) {
		_, err := g.afterModel(ctx, &Response{UsageMetadata: &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: prompt, CachedContentTokenCount: cached}}, nil)
		require.NoError(t, err)
	}
	assert.Zero(t, cached(), "nothing reported yet")
	report(900, 640)
	assert.Equal(t, 640, cached())
	report(1_000, 0)
	assert.Zero(t, cached(), "a report of none clears it")
	report(1_000, 5_000)
	assert.Zero(t, cached(), "more than the prompt is not believable")
	report(1_000, -3)
	assert.Zero(t, cached(), "negative is not believable")
	report(1_100, 900)
	assert.Equal(t, 900, cached())
}
