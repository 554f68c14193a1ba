package models

import (
	"sync"
	"testing"

	"charm.land/catwalk/pkg/catwalk"
	"charm.land/catwalk/pkg/embedded"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// catwalkModel returns the entry catwalk's embedded data lists for provider
// and model id, failing the test when it is missing.
func catwalkModel(t *testing.T, provider catwalk.InferenceProvider, id string) catwalk.Model {
	t.Helper()
	for _, p := range embedded.GetAll() {
		if p.ID != provider {
			continue
		}
		for _, m := range p.Models {
			if m.ID == id {
				return m
			}
		}
	}
	require.Failf(t, "model missing from catwalk", "%s/%s", provider, id)
	return catwalk.Model{}
}

func TestLookupFirstParty(t *testing.T) {
	tests := []struct {
		name       string
		provider   catwalk.InferenceProvider
		id         string
		window     int // well-known public number, as catwalk states it
		maxTokens  int
		catwalkRef string
	}{
		{"gemini-2.5-pro", catwalk.InferenceProviderGemini, "gemini-2.5-pro", 1_048_576, 50_000, "gemini-2.5-pro"},
		{"models/gemini-2.5-pro", catwalk.InferenceProviderGemini, "gemini-2.5-pro", 1_048_576, 50_000, "gemini-2.5-pro"},
		{"claude-sonnet-4-5-20250929", catwalk.InferenceProviderAnthropic, "claude-sonnet-4-5-20250929", 200_000, 64_000, "claude-sonnet-4-5-20250929"},
		{"anthropic/claude-sonnet-4-5", catwalk.InferenceProviderAnthropic, "claude-sonnet-4-5-20250929", 200_000, 64_000, "claude-sonnet-4-5-20250929"},
		{"gpt-4o", catwalk.InferenceProviderOpenAI, "gpt-4o", 128_000, 8_192, "gpt-4o"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info, ok := Lookup(tt.name)
			require.True(t, ok)
			ref := catwalkModel(t, tt.provider, tt.catwalkRef)
			assert.Equal(t, Info{
				ID:               ref.ID,
				Provider:         string(tt.provider),
				ContextWindow:    int(ref.ContextWindow),
				DefaultMaxTokens: int(ref.DefaultMaxTokens),
			}, info)
			assert.Equal(t, tt.id, info.ID)
			assert.Equal(t, tt.window, info.ContextWindow)
			assert.Equal(t, tt.maxTokens, info.DefaultMaxTokens)
		})
	}
}

func TestLookupVariants(t *testing.T) {
	tests := []struct {
		name     string
		provider string
		id       string
	}{
		// Case and white space.
		{"GEMINI-2.5-PRO", "gemini", "gemini-2.5-pro"},
		{"  Gemini-2.5-Pro\t\n", "gemini", "gemini-2.5-pro"},
		{" models/Gemini-2.5-Pro ", "gemini", "gemini-2.5-pro"},
		{"Claude-Sonnet-4-5", "anthropic", "claude-sonnet-4-5-20250929"},
		{"GPT-4o", "openai", "gpt-4o"},
		// Provider prefixes.
		{"google/gemini-2.5-pro", "gemini", "gemini-2.5-pro"},
		{"gemini/gemini-2.5-pro", "gemini", "gemini-2.5-pro"},
		{"vertex_ai/gemini-2.5-pro", "gemini", "gemini-2.5-pro"},
		{"projects/p/locations/us-central1/publishers/google/models/gemini-2.5-pro", "gemini", "gemini-2.5-pro"},
		{"openai/gpt-4o", "openai", "gpt-4o"},
		{"openrouter/openai/gpt-4o", "openai", "gpt-4o"},
		{"anthropic/claude-sonnet-4.5", "anthropic", "claude-sonnet-4-5-20250929"},
		{"some-router/claude-sonnet-4-5", "anthropic", "claude-sonnet-4-5-20250929"},
		// Bedrock ids.
		{"us.anthropic.claude-sonnet-4-5-20250929-v1:0", "bedrock", "us.anthropic.claude-sonnet-4-5-20250929-v1:0"},
		{"anthropic.claude-sonnet-4-5-20250929-v1:0", "bedrock", "us.anthropic.claude-sonnet-4-5-20250929-v1:0"},
		{"bedrock/eu.anthropic.claude-sonnet-4-5-20250929-v1:0", "bedrock", "us.anthropic.claude-sonnet-4-5-20250929-v1:0"},
		// Date and version suffixes.
		{"claude-sonnet-4-5@20250929", "anthropic", "claude-sonnet-4-5-20250929"},
		{"claude-sonnet-4-5-20991231", "anthropic", "claude-sonnet-4-5-20250929"},
		{"claude-sonnet-4-5-latest", "anthropic", "claude-sonnet-4-5-20250929"},
		{"gpt-4o-2024-08-06", "openrouter", "openai/gpt-4o-2024-08-06"},
		{"gpt-4o-2099-01-01", "openai", "gpt-4o"},
		{"gpt-4.1-2025-04-14", "openai", "gpt-4.1"},
		{"gemini-2.5-pro-001", "gemini", "gemini-2.5-pro"},
		{"gemini-2.5-pro@latest", "gemini", "gemini-2.5-pro"},
		{"gemini-3-pro", "gemini", "gemini-3-pro-preview"},
		{"gemini-3.7-flash-preview", "gemini", "gemini-3.7-flash"},
		{"gemini-3.1-pro", "vertexai", "gemini-3.1-pro-preview"},
		// Other first parties.
		{"grok-4.20", "xai", "grok-4.20"},
		{"x-ai/grok-4.20", "xai", "grok-4.20"},
		{"o3", "openai", "o3"},
		{"deepseek/deepseek-v4-pro", "deepseek", "deepseek-v4-pro"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info, ok := Lookup(tt.name)
			require.True(t, ok)
			assert.Equal(t, tt.provider, info.Provider)
			assert.Equal(t, tt.id, info.ID)
			assert.Positive(t, info.ContextWindow)
		})
	}
}

func TestLookupUnknown(t *testing.T) {
	for _, name := range []string{
		"",
		"   ",
		"models/",
		"anthropic/",
		"no-such-model",
		"claude-sonnet-99",
		"gpt-4o-mega",
		"-latest",
		"20250929",
		"models/models/",
	} {
		t.Run(name, func(t *testing.T) {
			info, ok := Lookup(name)
			assert.False(t, ok)
			assert.Zero(t, info)
		})
	}
}

func TestLookupConcurrent(t *testing.T) {
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for range 100 {
				info, ok := Lookup("models/gemini-2.5-pro")
				assert.True(t, ok)
				assert.Equal(t, "gemini", info.Provider)
			}
		})
	}
	wg.Wait()
}

func BenchmarkLookup(b *testing.B) {
	names := []string{
		"gemini-2.5-pro",
		"models/gemini-2.5-pro",
		"claude-sonnet-4-5-20250929",
		"anthropic/claude-sonnet-4-5",
		"gpt-4o",
		"unknown-model-20250101",
	}
	Lookup("") // build the index outside the timed loop
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		Lookup(names[i%len(names)])
	}
}
