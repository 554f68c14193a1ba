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
	"sync"

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

// index returns the model index, building it on first use.
var index = sync.OnceValue(func() map[string]Info {
	return buildIndex(embedded.GetAll())
})
