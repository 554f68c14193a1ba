// Package models resolves a model name to its context window and default
// maximum output tokens, using the provider data embedded in
// charm.land/catwalk. It never touches the network.
//
// The index is built once, on first use, from every embedded catwalk
// provider. Afterwards each [Lookup] is a name normalisation plus at most a
// handful of map reads, and it is safe for concurrent use.
//
// # Normalisation
//
// [Normalize] turns a model name, as a user, ADK or an API client would pass
// it, into a canonical key:
//
//  1. Surrounding white space is trimmed and the name is lower-cased.
//  2. '@' becomes '-' (Vertex AI style "claude-sonnet-4-5@20250929"), and a
//     '.' between two digits becomes '-' so that "claude-sonnet-4.5" and
//     "claude-sonnet-4-5" share a key (catwalk spells the same model both
//     ways depending on the provider). The key of "gemini-2.5-pro" is thus
//     "gemini-2-5-pro"; [Info.ID] keeps catwalk's spelling.
//  3. Everything up to and including the last "models/" path segment is
//     dropped: "models/gemini-2.5-pro" (Gemini API) and
//     "projects/p/locations/l/publishers/google/models/gemini-2.5-pro"
//     (Vertex AI resource names) both become "gemini-2-5-pro".
//  4. Leading path segments naming a well-known provider, vendor or router
//     are dropped, repeatedly: "anthropic/", "openai/", "google/",
//     "gemini/", "vertex_ai/", "bedrock/", "azure/", "openrouter/",
//     "x-ai/", ... (see knownPrefixes).
//  5. An Amazon Bedrock inference-profile region ("us.", "eu.", "apac.",
//     "global.", ...) followed by a Bedrock vendor ("anthropic.",
//     "amazon.", "meta.", ...), or a bare Bedrock vendor, is dropped:
//     "us.anthropic.claude-sonnet-4-5-20250929-v1:0" becomes
//     "claude-sonnet-4-5-20250929-v1:0".
//
// # Lookup order
//
// [Lookup] tries, in order, and returns the first key present in the index:
//
//  1. the normalised name;
//  2. the normalised name without any remaining "something/" prefix (the
//     part after the last '/'), for namespaces the list above does not
//     know, such as "meta-llama/";
//  3. that name with one more version suffix stripped at a time: "-latest",
//     "-preview", a Bedrock "-v1:0" tag, a "-2024-08-06" date, or a
//     trailing group of 3 to 8 digits ("-20250929", "-0905", "-001"). So
//     "gemini-3-pro" finds the Gemini API's "gemini-3-pro-preview", and
//     "gemini-3.7-flash-preview" finds "gemini-3.7-flash".
//
// # Conflicts
//
// Every catwalk model is indexed under the same chain of keys, so the
// undated "claude-sonnet-4-5" finds Anthropic's "claude-sonnet-4-5-20250929".
// When several catwalk entries share a key, the winner is chosen by, in
// order:
//
//  1. the provider's preference for the model family (firstParty): the
//     first-party provider (Anthropic for claude-*, OpenAI for gpt-*, o1,
//     o3, o4, Gemini for gemini-*, xAI for grok-*, ...), then the vendor's
//     own clouds (Vertex AI, Bedrock, Azure), then every other provider;
//  2. how directly the key was derived (the full id beats an id with its
//     prefix stripped, which beats an id with a suffix stripped);
//  3. the catwalk provider id, ascending;
//  4. the catwalk model id, descending (the newest dated snapshot);
//  5. the smaller context window, then the smaller default max tokens.
//
// This is a total order, so the result never depends on the order of
// catwalk's data or on map iteration.
package models

import (
	"bytes"
	"strings"
	"sync"

	"charm.land/catwalk/pkg/catwalk"
	"charm.land/catwalk/pkg/embedded"
)

// Info is what the registry knows about one model.
type Info struct {
	// ID is the model id as catwalk lists it for Provider, for example
	// "claude-sonnet-4-5-20250929".
	ID string
	// Provider is catwalk's provider id the entry comes from, for example
	// "anthropic", "openai", "gemini", "openrouter".
	Provider string
	// ContextWindow is the model's context window in tokens.
	ContextWindow int
	// DefaultMaxTokens is catwalk's default maximum number of output tokens.
	DefaultMaxTokens int
}

// Lookup resolves a model name as a user or ADK would pass it. ok is false
// for unknown models. See the package documentation for the normalisation,
// the lookup order and the conflict rules.
func Lookup(name string) (Info, bool) {
	idx := index()
	var buf [128]byte
	key := normalizeInto(buf[:0], name)
	if len(key) == 0 {
		return Info{}, false
	}
	if info, ok := idx[string(key)]; ok {
		return info, true
	}
	if i := bytes.LastIndexByte(key, '/'); i >= 0 {
		key = key[i+1:]
		if info, ok := idx[string(key)]; ok {
			return info, true
		}
	}
	for {
		var ok bool
		if key, ok = stripSuffix(key); !ok {
			return Info{}, false
		}
		if info, ok := idx[string(key)]; ok {
			return info, true
		}
	}
}

// Normalize returns the canonical lookup key for a model name: trimmed,
// lower-cased, "@" and dots between digits turned into "-", and the
// "models/", provider and Bedrock region/vendor prefixes removed. Date and
// version suffixes are kept; [Lookup] strips them only when the full key is
// unknown. See the package documentation for the details.
func Normalize(name string) string {
	var buf [128]byte
	return string(normalizeInto(buf[:0], name))
}

// index returns the model index, building it on first use.
var index = sync.OnceValue(func() map[string]Info {
	return buildIndex(embedded.GetAll())
})

// knownPrefixes are leading path segments that name a provider, a vendor
// namespace or a router; Normalize drops them.
var knownPrefixes = map[string]bool{
	"anthropic":        true,
	"openai":           true,
	"azure":            true,
	"azure_ai":         true,
	"google":           true,
	"gemini":           true,
	"vertex_ai":        true,
	"vertex_ai_beta":   true,
	"vertexai":         true,
	"vertex":           true,
	"bedrock":          true,
	"bedrock_converse": true,
	"openrouter":       true,
	"vercel":           true,
	"xai":              true,
	"x-ai":             true,
	"deepseek":         true,
	"zai":              true,
	"z-ai":             true,
	"zhipu":            true,
	"minimax":          true,
	"moonshotai":       true,
	"qwen":             true,
}

// bedrockRegions are the region prefixes of Amazon Bedrock cross-region
// inference profiles ("us.anthropic.claude-...").
var bedrockRegions = map[string]bool{
	"us": true, "us-gov": true, "eu": true, "apac": true, "global": true,
	"au": true, "jp": true, "ca": true,
}

// bedrockVendors are the vendor prefixes of Amazon Bedrock model ids
// ("anthropic.claude-...").
var bedrockVendors = map[string]bool{
	"anthropic": true, "amazon": true, "meta": true, "mistral": true,
	"cohere": true, "ai21": true, "deepseek": true, "openai": true,
	"qwen": true,
}

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

// normalizeInto appends the canonical key of name to dst and returns the
// key, which aliases dst's storage.
func normalizeInto(dst []byte, name string) []byte {
	s := strings.TrimSpace(name)
	if !isASCII(s) {
		s = strings.ToLower(s)
	}
	b := dst[:0]
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		case c == '@':
			c = '-'
		case c == '.' && i > 0 && i+1 < len(s) && isDigit(s[i-1]) && isDigit(s[i+1]):
			c = '-'
		}
		b = append(b, c)
	}

	// Everything up to the last "models/" path segment.
	const models = "models/"
	for i := len(b) - len(models); i >= 0; i-- {
		if (i == 0 || b[i-1] == '/') && string(b[i:i+len(models)]) == models {
			b = b[i+len(models):]
			break
		}
	}

	// Well-known provider, vendor and router prefixes.
	for {
		i := bytes.IndexByte(b, '/')
		if i < 0 || !knownPrefixes[string(b[:i])] {
			break
		}
		b = b[i+1:]
	}

	// Bedrock "region.vendor." or "vendor." prefixes.
	if i := bytes.IndexByte(b, '.'); i > 0 {
		first, rest := b[:i], b[i+1:]
		switch {
		case bedrockRegions[string(first)]:
			if j := bytes.IndexByte(rest, '.'); j > 0 && bedrockVendors[string(rest[:j])] {
				b = rest[j+1:]
			}
		case bedrockVendors[string(first)]:
			b = rest
		}
	}
	return b
}

// stripSuffix removes one trailing version suffix from key: "-latest",
// "-preview", a Bedrock "-vN:M" tag, a "-YYYY-MM-DD" date or a "-" followed
// by 3 to 8 digits. ok is false when key has no such suffix or nothing would
// remain.
func stripSuffix(key []byte) (stripped []byte, ok bool) {
	for _, tag := range [...]string{"-latest", "-preview"} {
		if len(key) > len(tag) && string(key[len(key)-len(tag):]) == tag {
			return key[:len(key)-len(tag)], true
		}
	}
	// "-dddd-dd-dd"
	if n := len(key); n > 11 && key[n-11] == '-' && key[n-6] == '-' && key[n-3] == '-' &&
		allDigits(key[n-10:n-6]) && allDigits(key[n-5:n-3]) && allDigits(key[n-2:]) {
		return key[:n-11], true
	}
	i := bytes.LastIndexByte(key, '-')
	if i <= 0 {
		return key, false
	}
	seg := key[i+1:]
	switch {
	case len(seg) >= 3 && len(seg) <= 8 && allDigits(seg):
		return key[:i], true
	case isBedrockVersion(seg):
		return key[:i], true
	}
	return key, false
}

// isBedrockVersion reports whether seg looks like "v1:0".
func isBedrockVersion(seg []byte) bool {
	if len(seg) < 4 || seg[0] != 'v' {
		return false
	}
	colon := bytes.IndexByte(seg, ':')
	return colon > 1 && colon < len(seg)-1 && allDigits(seg[1:colon]) && allDigits(seg[colon+1:])
}

func allDigits(b []byte) bool {
	for _, c := range b {
		if !isDigit(c) {
			return false
		}
	}
	return len(b) > 0
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
