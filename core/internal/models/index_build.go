package models

import (
	"bytes"
	"strings"

	"charm.land/catwalk/pkg/catwalk"
)

// The index: every catwalk model under its keys, the first-party
// provider preferred when several share a key.

// family maps a model-name prefix to the catwalk provider ids preferred for
// it, most preferred first: the first-party provider, then the vendor's own
// clouds. Providers not listed rank after all listed ones.
type family struct {
	prefix    string
	providers []catwalk.InferenceProvider
}

// firstParty is checked in order against the last path segment of a key;
// the first matching prefix wins.
var firstParty = []family{
	{"claude", []catwalk.InferenceProvider{
		catwalk.InferenceProviderAnthropic,
		catwalk.InferenceProviderVertexAI,
		catwalk.InferenceProviderBedrock,
		catwalk.InferenceProviderBedrockEurope,
	}},
	{"gpt-", openAIFamily},
	{"chatgpt", openAIFamily},
	{"codex", openAIFamily},
	{"o1", openAIFamily},
	{"o3", openAIFamily},
	{"o4", openAIFamily},
	{"gemini", googleFamily},
	{"gemma", googleFamily},
	{"grok", []catwalk.InferenceProvider{catwalk.InferenceProviderXAI}},
	{"deepseek", []catwalk.InferenceProvider{catwalk.InferenceProviderDeepSeek}},
	{"glm", []catwalk.InferenceProvider{
		catwalk.InferenceProviderZAI,
		catwalk.InferenceProviderZhipu,
		catwalk.InferenceProviderZhipuCoding,
	}},
	{"minimax", []catwalk.InferenceProvider{
		catwalk.InferenceProviderMiniMax,
		catwalk.InferenceProviderMiniMaxChina,
	}},
	{"kimi", []catwalk.InferenceProvider{catwalk.InferenceKimiCoding}},
	{"qwen", []catwalk.InferenceProvider{catwalk.InferenceProviderAlibabaSingapore}},
}

var (
	openAIFamily = []catwalk.InferenceProvider{
		catwalk.InferenceProviderOpenAI,
		catwalk.InferenceProviderAzure,
	}
	googleFamily = []catwalk.InferenceProvider{
		catwalk.InferenceProviderGemini,
		catwalk.InferenceProviderVertexAI,
	}
)

// otherProvider is the preference of a provider not listed for a family.
const otherProvider = 1 << 10

// preference ranks provider p for the model with the normalised key; lower
// is better.
func preference(key string, p catwalk.InferenceProvider) int {
	if i := strings.LastIndexByte(key, '/'); i >= 0 {
		key = key[i+1:]
	}
	for _, f := range firstParty {
		if !strings.HasPrefix(key, f.prefix) {
			continue
		}
		for rank, fp := range f.providers {
			if fp == p {
				return rank
			}
		}
		return otherProvider
	}
	return otherProvider
}

// candidate is one catwalk entry competing for an index key.
type candidate struct {
	info       Info
	preference int
	derivation int
}

// better reports whether a beats b under the package's conflict rules.
func (a candidate) better(b candidate) bool {
	switch {
	case a.preference != b.preference:
		return a.preference < b.preference
	case a.derivation != b.derivation:
		return a.derivation < b.derivation
	case a.info.Provider != b.info.Provider:
		return a.info.Provider < b.info.Provider
	case a.info.ID != b.info.ID:
		return a.info.ID > b.info.ID
	case a.info.ContextWindow != b.info.ContextWindow:
		return a.info.ContextWindow < b.info.ContextWindow
	default:
		return a.info.DefaultMaxTokens < b.info.DefaultMaxTokens
	}
}

// buildIndex indexes every model with a positive context window under each
// key of its lookup chain, keeping the best candidate per key.
func buildIndex(providers []catwalk.Provider) map[string]Info {
	best := make(map[string]candidate)
	for _, p := range providers {
		for _, m := range p.Models {
			if m.ContextWindow <= 0 {
				continue
			}
			info := Info{
				ID:               m.ID,
				Provider:         string(p.ID),
				ContextWindow:    int(m.ContextWindow),
				DefaultMaxTokens: int(m.DefaultMaxTokens),
			}
			key := normalizeInto(nil, m.ID)
			if len(key) == 0 {
				continue
			}
			pref := preference(string(key), p.ID)
			add := func(k []byte, derivation int) {
				c := candidate{info: info, preference: pref, derivation: derivation}
				if cur, ok := best[string(k)]; !ok || c.better(cur) {
					best[string(k)] = c
				}
			}
			add(key, 0)
			if i := bytes.LastIndexByte(key, '/'); i >= 0 {
				key = key[i+1:]
				add(key, 1)
			}
			for d := 2; ; d++ {
				var ok bool
				if key, ok = stripSuffix(key); !ok {
					break
				}
				add(key, d)
			}
		}
	}
	idx := make(map[string]Info, len(best))
	for k, c := range best {
		idx[k] = c.info
	}
	return idx
}
