package core

import (
	"log/slog"
	"sync"

	"github.com/adk-contextguard/contextguard/core/internal/models"
)

// Context windows: the model registry (catwalk's model list by default).

// ModelRegistry tells the guard how large a model's context window is.
type ModelRegistry interface {
	// ContextWindow is the model's context window in tokens; 0 or less
	// means unknown (the guard then uses DefaultContextWindow).
	ContextWindow(model string) int
}

// RegistryOption configures NewCrushRegistry.
type RegistryOption func(*crushRegistry)

// WithRegistryLogger sets where the registry warns about unknown models
// (default slog.Default()).
func WithRegistryLogger(l *slog.Logger) RegistryOption {
	return func(r *crushRegistry) {
		if l != nil {
			r.log = l
		}
	}
}

// WithDefaultWindow sets the window reported for unknown models (default
// DefaultContextWindow). Values of 0 or less keep the default.
func WithDefaultWindow(n int) RegistryOption {
	return func(r *crushRegistry) {
		if n > 0 {
			r.defaultWindow = n
		}
	}
}

// NewCrushRegistry returns the default registry, backed by the model data
// embedded in charm.land/catwalk (no network). Model IDs are normalised:
// case, surrounding space, "models/" and provider prefixes such as
// "anthropic/", and date, version or release suffixes such as "-20250929",
// "-latest" and "-preview" are ignored; when several providers list a
// model, the first-party provider's entry wins. An unknown model gets DefaultContextWindow and one warning per
// model name.
func NewCrushRegistry(opts ...RegistryOption) ModelRegistry {
	r := &crushRegistry{log: slog.Default(), defaultWindow: DefaultContextWindow}
	for _, o := range opts {
		if o != nil {
			o(r)
		}
	}
	return r
}

type crushRegistry struct {
	log           *slog.Logger
	defaultWindow int
	warned        sync.Map // model name -> struct{}
}

// find is the catwalk entry of model, when it lists a window for it.
func (r *crushRegistry) find(model string) (models.Info, bool) {
	info, ok := models.Lookup(model)
	return info, ok && info.ContextWindow > 0
}

// lookup is find, warning once per model name it does not know.
func (r *crushRegistry) lookup(model string) (models.Info, bool) {
	if info, ok := r.find(model); ok {
		return info, true
	}
	if _, seen := r.warned.LoadOrStore(model, struct{}{}); !seen {
		r.log.Warn("contextguard: unknown model; assuming the default context window (set WithMaxTokens to override)",
			"model", model, "window", r.defaultWindow)
	}
	return models.Info{}, false
}

// ContextWindow implements ModelRegistry.
func (r *crushRegistry) ContextWindow(model string) int {
	if info, ok := r.lookup(model); ok {
		return info.ContextWindow
	}
	return r.defaultWindow
}
