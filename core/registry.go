package core

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/adk-contextguard/contextguard/core/internal/models"
)

// ModelRegistry tells the guard how large a model's context window is.
type ModelRegistry interface {
	// ContextWindow is the model's context window in tokens; 0 or less
	// means unknown. For an unknown agent model the guard uses
	// DefaultContextWindow and warns once per model, naming WithMaxTokens;
	// for an unknown summarizer model it does the same, naming
	// WithSummarizerWindow.
	ContextWindow(model string) int
}

// RegistryOption configures NewCrushRegistry.
type RegistryOption func(*crushRegistry)

// NewCrushRegistry returns the default registry, backed by the model data
// embedded in charm.land/catwalk (no network). Case, surrounding space,
// "models/" and provider prefixes ("anthropic/") and date, version or
// release suffixes ("-20250929", "-latest", "-preview") are ignored; the
// first-party provider's entry wins. An unknown model is reported as 0, so
// the guard gives it DefaultContextWindow with one warning per model that
// names the option to set; WithDefaultWindow reports another window.
func NewCrushRegistry(opts ...RegistryOption) ModelRegistry {
	r := &crushRegistry{log: slog.Default()}
	for _, o := range opts {
		if o == nil {
			r.fail(errors.New("nil RegistryOption"))
			continue
		}
		o(r)
	}
	return r
}

type crushRegistry struct {
	log           *slog.Logger
	defaultWindow int      // WithDefaultWindow's, 0 for none
	warned        sync.Map // model name -> struct{}
	errs          []error  // the options' errors, which New reports
}

func (r *crushRegistry) fail(err error) { r.errs = append(r.errs, fmt.Errorf("contextguard: %w", err)) }

func (r *crushRegistry) optionErrs() []error { return r.errs }

// registryOptionErrs is a registry whose options' errors New reports.
type registryOptionErrs interface{ optionErrs() []error }

// ContextWindow implements ModelRegistry.
func (r *crushRegistry) ContextWindow(model string) int {
	if info, ok := models.Lookup(model); ok && info.ContextWindow > 0 {
		return info.ContextWindow
	}
	if r.defaultWindow <= 0 {
		return 0
	}
	if _, seen := r.warned.LoadOrStore(model, struct{}{}); !seen {
		r.log.Warn("contextguard: unknown model; assuming the default context window (set WithMaxTokens to override)",
			"model", model, "window", r.defaultWindow)
	}
	return r.defaultWindow
}
