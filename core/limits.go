package core

import "github.com/adk-contextguard/contextguard/core/internal/window"

// DefaultContextWindow is the window assumed for a model the registry does
// not know (a warning is logged once per model).
const DefaultContextWindow = window.Default

// maxOutputTokens is the request's MaxOutputTokens, 0 when it sets none.
func maxOutputTokens(req *Request) int {
	if req == nil || req.Config == nil || req.Config.MaxOutputTokens <= 0 {
		return 0
	}
	return int(req.Config.MaxOutputTokens)
}
