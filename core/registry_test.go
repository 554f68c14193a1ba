package core

import (
	"slices"
	"strings"
	"sync"
	"testing"

	"charm.land/catwalk/pkg/catwalk"
	"charm.land/catwalk/pkg/embedded"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/adk-contextguard/contextguard/core/internal/models"
)

// firstPartyProviders are the catwalk providers whose own listing is the
// window the README's "Context windows" section promises for their models.
var firstPartyProviders = []catwalk.InferenceProvider{
	catwalk.InferenceProviderAnthropic,
	catwalk.InferenceProviderOpenAI,
	catwalk.InferenceProviderGemini,
}

// listedWindow is the context window catwalk's embedded data lists for the
// model id of provider; the test fails when the entry is missing.
func listedWindow(t *testing.T, provider catwalk.InferenceProvider, id string) int {
	t.Helper()
	for _, p := range embedded.GetAll() {
		if p.ID != provider {
			continue
		}
		for _, m := range p.Models {
			if m.ID == id {
				require.Positive(t, m.ContextWindow, "%s/%s", provider, id)
				return int(m.ContextWindow)
			}
		}
	}
	require.Failf(t, "model missing from catwalk", "%s/%s", provider, id)
	return 0
}

// TestCrushRegistry_Flagships checks that the newest flagship models of
// each first-party provider in catwalk's data, spelled as users and
// clients pass them, get the window their first-party provider lists, not
// an aggregator's or a cloud's, and not the default for unknown models.
func TestCrushRegistry_Flagships(t *testing.T) {
	const (
		anthropic = catwalk.InferenceProviderAnthropic
		openai    = catwalk.InferenceProviderOpenAI
		google    = catwalk.InferenceProviderGemini
	)
	tests := []struct {
		name     string                    // as a user or client passes it
		provider catwalk.InferenceProvider // the first party
		id       string                    // the first party's catwalk id
	}{
		// Anthropic: the 5 generation, and the newest 4.x.
		{"claude-opus-5", anthropic, "claude-opus-5"},
		{"claude-sonnet-5", anthropic, "claude-sonnet-5"},
		{"claude-mythos-5", anthropic, "claude-mythos-5"},
		{"claude-fable-5", anthropic, "claude-fable-5"},
		{"anthropic/claude-opus-5", anthropic, "claude-opus-5"},
		{"claude-sonnet-5@20260101", anthropic, "claude-sonnet-5"},
		{"claude-opus-4-8", anthropic, "claude-opus-4-8"},
		{"claude-opus-4.8", anthropic, "claude-opus-4-8"},
		{"claude-opus-4-7", anthropic, "claude-opus-4-7"},
		{"claude-opus-4-6", anthropic, "claude-opus-4-6"},
		{"claude-sonnet-4-6", anthropic, "claude-sonnet-4-6"},
		{"Claude-Sonnet-4.6", anthropic, "claude-sonnet-4-6"},
		{"claude-haiku-4-5", anthropic, "claude-haiku-4-5-20251001"},
		// OpenAI: GPT-5.6, 5.5, 5.4, the newest Codex and the o-series.
		{"gpt-5.6-sol", openai, "gpt-5.6-sol"},
		{"gpt-5.6-terra", openai, "gpt-5.6-terra"},
		{"gpt-5.6-luna", openai, "gpt-5.6-luna"},
		{"openai/gpt-5.6-sol", openai, "gpt-5.6-sol"},
		{"gpt-5.5", openai, "gpt-5.5"},
		{"gpt-5.5-pro", openai, "gpt-5.5-pro"},
		{"gpt-5.5-2026-04-23", openai, "gpt-5.5"},
		{"gpt-5.4", openai, "gpt-5.4"},
		{"gpt-5.3-codex", openai, "gpt-5.3-codex"},
		{"o3", openai, "o3"},
		{"o4-mini", openai, "o4-mini"},
		{"o4-mini-2025-04-16", openai, "o4-mini"},
		// Google: Gemini 3.x, as the Gemini API and Vertex AI name them.
		{"gemini-3.7-flash", google, "gemini-3.7-flash"},
		{"models/gemini-3.7-flash", google, "gemini-3.7-flash"},
		{"gemini-3.6-flash", google, "gemini-3.6-flash"},
		{"gemini-3.5-flash", google, "gemini-3.5-flash"},
		{"gemini-3.5-flash-lite", google, "gemini-3.5-flash-lite"},
		{"gemini-3.1-pro-preview-customtools", google, "gemini-3.1-pro-preview-customtools"},
		// The Gemini API lists 3.1 Pro only as its custom-tools variant; the
		// plain id resolves to Google's Vertex AI entry, of the same window.
		{"gemini-3.1-pro-preview", google, "gemini-3.1-pro-preview-customtools"},
		{"gemini-3-pro-preview", google, "gemini-3-pro-preview"},
		{"gemini-3-flash-preview", google, "gemini-3-flash-preview"},
		// Without the "-preview" catwalk's ids carry (the names catwalk
		// displays, and the ids once a model is generally available), and
		// with it where catwalk lists the model without.
		{"gemini-3-pro", google, "gemini-3-pro-preview"},
		{"gemini-3-flash", google, "gemini-3-flash-preview"},
		{"gemini-3.7-flash-preview", google, "gemini-3.7-flash"},
		{"vertex_ai/gemini-3-pro", google, "gemini-3-pro-preview"},
	}
	logs := &logBuffer{}
	r := NewCrushRegistry(WithRegistryLogger(logs.logger()))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := listedWindow(t, tt.provider, tt.id)
			assert.Equal(t, want, r.ContextWindow(tt.name))
		})
	}
	assert.NotContains(t, logs.String(), "unknown model")
}

// TestCrushRegistry_FirstPartyListings checks that every model a
// first-party provider lists, and the provider's default large model,
// resolves by its own id to the window that provider lists, whatever other
// providers list under the same name.
func TestCrushRegistry_FirstPartyListings(t *testing.T) {
	logs := &logBuffer{}
	r := NewCrushRegistry(WithRegistryLogger(logs.logger()))
	for _, p := range embedded.GetAll() {
		if !slices.Contains(firstPartyProviders, p.ID) {
			continue
		}
		t.Run(string(p.ID), func(t *testing.T) {
			require.NotEmpty(t, p.Models)
			assert.Equal(t, listedWindow(t, p.ID, p.DefaultLargeModelID), r.ContextWindow(p.DefaultLargeModelID), "default large model %s", p.DefaultLargeModelID)
			for _, m := range p.Models {
				assert.Equal(t, int(m.ContextWindow), r.ContextWindow(m.ID), m.ID)
			}
		})
	}
	assert.NotContains(t, logs.String(), "unknown model")
}

// TestCrushRegistry_WellKnownWindows pins a few windows as numbers. Each
// name is listed by another catwalk provider with a different window, so
// the wrong provider winning shows here even if catwalk's first-party
// entry changed with it.
func TestCrushRegistry_WellKnownWindows(t *testing.T) {
	tests := []struct {
		name   string
		window int
	}{
		{"claude-sonnet-4-6", 200_000},
		{"claude-sonnet-4-5", 200_000},
		{"claude-opus-4-6", 200_000},
		{"gpt-5.5", 1_050_000},
		{"gpt-5.6-sol", 1_050_000},
		{"gemini-3.7-flash", 1_048_576},
	}
	r := NewCrushRegistry()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.window, r.ContextWindow(tt.name))

			key := models.Normalize(tt.name)
			var others []string
			for _, p := range embedded.GetAll() {
				for _, m := range p.Models {
					if models.Normalize(m.ID) == key && int(m.ContextWindow) != tt.window {
						others = append(others, string(p.ID)+"/"+m.ID)
					}
				}
			}
			assert.NotEmpty(t, others, "no other provider lists %s with another window: the anchor cannot catch a wrong provider", tt.name)
		})
	}
}

func TestRegistry(t *testing.T) {
	r := NewCrushRegistry()
	tests := []struct {
		model  string
		window int
	}{
		{"gemini-2.5-pro", 1_048_576},
		{"models/gemini-2.5-pro", 1_048_576},
		{"claude-sonnet-4-5-20250929", 200_000},
		{"anthropic/claude-sonnet-4-5", 200_000},
		{"gpt-4o", 128_000},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.window, r.ContextWindow(tt.model), tt.model)
	}
}

// TestRegistry_UnknownModelWarnsOnce: the registry reports a model it does
// not know as unknown (0, the ModelRegistry contract), and the guard gives
// it DefaultContextWindow with one warning per model name; with
// WithDefaultWindow the registry reports that window and warns itself.
func TestRegistry_UnknownModelWarnsOnce(t *testing.T) {
	assert.Zero(t, NewCrushRegistry().ContextWindow("acme-llm-9000"), "unknown is 0")

	logs := &logBuffer{}
	g := newGuard(NewCrushRegistry(), WithLogger(logs.logger()))
	cfg := &Agent{name: "a"}
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() { assert.Equal(t, DefaultContextWindow, g.window(cfg, "acme-llm-9000")) })
	}
	wg.Wait()
	assert.Equal(t, DefaultContextWindow, g.window(cfg, "acme-llm-9000"))
	assert.Equal(t, 1, strings.Count(logs.String(), "unknown model"))
	assert.Contains(t, logs.String(), "model=acme-llm-9000")
	assert.Contains(t, logs.String(), "WithMaxTokens")
	g.window(cfg, "another-unknown")
	assert.Equal(t, 2, strings.Count(logs.String(), "unknown model"), "one warning per model")

	regLogs := &logBuffer{}
	r := NewCrushRegistry(WithRegistryLogger(regLogs.logger()), WithDefaultWindow(64_000))
	assert.Equal(t, 64_000, r.ContextWindow("acme-llm-9000"))
	assert.Equal(t, 64_000, r.ContextWindow("acme-llm-9000"))
	assert.Equal(t, 1, strings.Count(regLogs.String(), "unknown model"))
}
