package core

import (
	"github.com/adk-contextguard/contextguard/core/internal/contentid"
	"github.com/adk-contextguard/contextguard/core/internal/estimate"
	"github.com/adk-contextguard/contextguard/core/internal/sat"
	"github.com/adk-contextguard/contextguard/core/internal/tokens"
)

// requestTokens is the estimate of everything a request sends: contents,
// system instruction and tool declarations.
func requestTokens(e estimate.Estimator, req *Request) int {
	if req == nil {
		return 0
	}
	return sat.Add(estimate.Contents(e, req.Contents), estimate.Fixed(e, req.Config))
}

// estimatorFor is the feature estimator of a model, behind the seam.
func estimatorFor(model string) estimate.Estimator { return estimate.ForModel(model) }

// estimatorSalt separates the cached counts of different estimators that
// share a session's cache.
func estimatorSalt(model string) uint64 {
	return contentid.Mix(uint64(tokens.FamilyForModel(model)) + 1)
}
