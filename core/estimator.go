package core

import (
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/contentid"
	"github.com/adk-contextguard/contextguard/core/internal/estimate"
	"github.com/adk-contextguard/contextguard/core/internal/sat"
	"github.com/adk-contextguard/contextguard/core/internal/tokens"
)

// tokenEstimator is the estimator seam (ARCHITECTURE.md, Counting); the
// count cache embeds it.
type tokenEstimator = estimate.Estimator

// requestTokens is the estimate of everything a request sends: contents,
// system instruction and tool declarations.
func requestTokens(e tokenEstimator, req *Request) int {
	if req == nil {
		return 0
	}
	return sat.Add(estimate.Contents(e, req.Contents), estimate.Fixed(e, req.Config))
}

// estimatorFor returns the token estimator for a model name.
func estimatorFor(model string) tokenEstimator { return estimate.ForModel(model) }

// estimatorSalt separates the cached counts of different estimators that
// share a session's cache.
func estimatorSalt(model string) uint64 {
	return contentid.Mix(uint64(tokens.FamilyForModel(model)) + 1)
}

// What the session's count cache keeps of one content beside its count.

// entryOverhead is what one cached content retains besides its strings:
// the cache entry and map slot, and the pinned copy ADK made of the content
// (its Content, Part and call or response structs and top-level maps),
// measured with BenchmarkSessionMemory.
const entryOverhead = 864

// contentRetained is what a cache entry pinning c retains.
func contentRetained(c *genai.Content) int {
	if c == nil {
		return entryOverhead
	}
	return sat.Add(entryOverhead, contentid.Size(c))
}

// prunedContent is the pruned copy of one content, computed once per
// distinct content and kept with its count in the session's cache.
type prunedContent struct {
	content *genai.Content // the copy with placeholders; nil when nothing is large enough to prune
	saved   int            // what the placeholders save, in raw estimated tokens
}
