package core

import (
	"github.com/adk-contextguard/contextguard/core/internal/contentid"
	"github.com/adk-contextguard/contextguard/core/internal/estimate"
	"github.com/adk-contextguard/contextguard/core/internal/sat"
	"github.com/adk-contextguard/contextguard/core/internal/tokens"
)

// tokenEstimator is the estimator seam (ARCHITECTURE.md, Counting).
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
