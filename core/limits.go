package core

import "github.com/adk-contextguard/contextguard/core/internal/window"

// DefaultContextWindow is the window assumed for a model the registry does
// not know (a warning is logged once per model).
const DefaultContextWindow = window.Default
