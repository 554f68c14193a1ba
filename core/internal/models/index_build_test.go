package models

import (
	"math/rand/v2"
	"slices"
	"testing"

	"charm.land/catwalk/pkg/catwalk"
	"charm.land/catwalk/pkg/embedded"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConflictsDeterministic checks that shared ids resolve the same way
// whatever the order of catwalk's data, and across repeated calls.
func TestConflictsDeterministic(t *testing.T) {
	// Each of these ids is listed by several catwalk providers.
	names := []string{
		"gemini-2.5-pro", "gpt-4o", "claude-sonnet-4-5", "claude-sonnet-4.5",
		"gpt-4o-mini", "o3-pro", "glm-4.6", "minimax-m2.5", "kimi-k2.5",
		"deepseek-v3.2", "claude-sonnet-4-6", "gemini-3.7-flash", "grok-4",
	}
	want := make(map[string]Info, len(names))
	for _, n := range names {
		info, ok := Lookup(n)
		require.True(t, ok, n)
		want[n] = info
	}

	for range 200 {
		for _, n := range names {
			got, _ := Lookup(n)
			require.Equal(t, want[n], got, n)
		}
	}

	reference := index()
	rng := rand.New(rand.NewPCG(1, 2))
	for range 5 {
		providers := embedded.GetAll()
		rng.Shuffle(len(providers), func(i, j int) { providers[i], providers[j] = providers[j], providers[i] })
		for i := range providers {
			ms := providers[i].Models
			rng.Shuffle(len(ms), func(a, b int) { ms[a], ms[b] = ms[b], ms[a] })
		}
		require.Equal(t, reference, buildIndex(providers))
	}

	// Reversed input, too.
	providers := embedded.GetAll()
	slices.Reverse(providers)
	require.Equal(t, reference, buildIndex(providers))
}

// TestConflictRules checks the tie-break rules on synthetic data.
func TestConflictRules(t *testing.T) {
	providers := []catwalk.Provider{
		{ID: "zz-router", Models: []catwalk.Model{
			{ID: "claude-x", ContextWindow: 1_000_000, DefaultMaxTokens: 1},
			{ID: "acme-1", ContextWindow: 10, DefaultMaxTokens: 1},
		}},
		{ID: "aa-router", Models: []catwalk.Model{
			{ID: "acme-1", ContextWindow: 20, DefaultMaxTokens: 1},
			{ID: "acme-2", ContextWindow: 0, DefaultMaxTokens: 1},
			{ID: "acme-3-20240101", ContextWindow: 30, DefaultMaxTokens: 1},
			{ID: "acme-3-20250101", ContextWindow: 40, DefaultMaxTokens: 1},
		}},
		{ID: catwalk.InferenceProviderBedrock, Models: []catwalk.Model{
			{ID: "us.anthropic.claude-x-20250101-v1:0", ContextWindow: 300, DefaultMaxTokens: 1},
		}},
		{ID: catwalk.InferenceProviderAnthropic, Models: []catwalk.Model{
			{ID: "claude-x-20250101", ContextWindow: 200, DefaultMaxTokens: 1},
		}},
	}
	idx := buildIndex(providers)

	// First party beats an exact id from another provider.
	assert.Equal(t, "anthropic", idx["claude-x"].Provider)
	assert.Equal(t, "anthropic", idx["claude-x-20250101"].Provider)
	// The Bedrock-specific id still resolves to Bedrock.
	assert.Equal(t, "bedrock", idx["claude-x-20250101-v1:0"].Provider)
	// No family preference: provider id order.
	assert.Equal(t, Info{ID: "acme-1", Provider: "aa-router", ContextWindow: 20, DefaultMaxTokens: 1}, idx["acme-1"])
	// Models without a context window are not indexed.
	assert.NotContains(t, idx, "acme-2")
	// Same provider, same derived key: the newest snapshot.
	assert.Equal(t, "acme-3-20250101", idx["acme-3"].ID)
}
