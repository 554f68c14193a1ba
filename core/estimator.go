package core

import (
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/contentid"
	"github.com/adk-contextguard/contextguard/core/internal/sat"
	"github.com/adk-contextguard/contextguard/core/internal/tokens"
)

// The turn's token estimator: what a request's pieces weigh, and the
// estimator of a model (ARCHITECTURE.md, Counting).

// tokenEstimator counts the tokens of the pieces of a request. It is the seam
// the feature estimator replaces; implementations are safe for concurrent use.
type tokenEstimator interface {
	// content is the tokens of one message, framing included.
	content(c *genai.Content) int
	// text is the tokens of a plain string.
	text(s string) int
	// declaration is the tokens of one function declaration.
	declaration(d *genai.FunctionDeclaration) int
	// builtinTools is the tokens of the built-in tools set on t.
	builtinTools(t *genai.Tool) int
	// defaultFactor multiplies raw estimates when the provider has not yet
	// reported a real count; it is sized to the estimator's p90 error.
	defaultFactor() float64
}

// requestTokens is the estimate of everything a request sends: contents,
// system instruction and tool declarations.
func requestTokens(e tokenEstimator, req *Request) int {
	if req == nil {
		return 0
	}
	return sat.Add(contentsTokens(e, req.Contents), fixedTokens(e, req))
}

// fixedTokens is the estimate of what a request carries besides its
// contents: the system instruction and the tool declarations.
func fixedTokens(e tokenEstimator, req *Request) int {
	if req == nil || req.Config == nil {
		return 0
	}
	return sat.Add(e.content(req.Config.SystemInstruction), toolsTokens(e, req.Config.Tools))
}

// toolsTokens is the estimate of the tool declarations sent with every call.
func toolsTokens(e tokenEstimator, ts []*genai.Tool) int {
	n := 0
	for _, t := range ts {
		if t == nil {
			continue
		}
		n = sat.Add(n, e.builtinTools(t))
		for _, d := range t.FunctionDeclarations {
			n = sat.Add(n, e.declaration(d))
		}
	}
	return n
}

func contentsTokens(e tokenEstimator, cs []*genai.Content) int {
	n := 0
	for _, c := range cs {
		n = sat.Add(n, e.content(c))
	}
	return n
}

// featureEstimator is the single-pass feature estimator of internal/tokens
// for one tokenizer family (o200k for GPT and o-series, Gemma-3 for Gemini,
// o200k times a factor for Claude; o200k for unknown models).
type featureEstimator struct{ e *tokens.Estimator }

func (f featureEstimator) content(c *genai.Content) int { return f.e.Content(c) }

func (f featureEstimator) text(s string) int { return f.e.Text(s) }

func (f featureEstimator) declaration(d *genai.FunctionDeclaration) int {
	return f.e.Declaration(d)
}

func (f featureEstimator) builtinTools(t *genai.Tool) int { return f.e.BuiltinTools(t) }

func (f featureEstimator) defaultFactor() float64 { return defaultCorrection }

// estimatorFor returns the token estimator for a model name.
func estimatorFor(model string) tokenEstimator {
	return featureEstimator{e: tokens.ForModel(model)}
}

// estimatorSalt separates the cached counts of different estimators that
// share a session's cache.
func estimatorSalt(model string) uint64 {
	return contentid.Mix(uint64(tokens.FamilyForModel(model)) + 1)
}

// defaultCorrection multiplies estimates while the provider has reported no
// real count yet. It is sized to the feature estimator's held-out p90 error
// (see internal/tokenfit/accuracy/testdata/fit_report.txt), rounded up.
const defaultCorrection = 1.10

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
	// content is the copy with placeholders, nil when no payload in the
	// content is large enough to prune.
	content *genai.Content
	// saved is what the placeholders save, in raw estimated tokens.
	saved int
}
