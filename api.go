package contextguard

import "github.com/adk-contextguard/contextguard/core"

// The public API that takes no ADK type is the engine's (module core,
// ARCHITECTURE.md, Packages and modules), re-exported under the names it
// has always had by api_gen.go: type aliases for the types, wrappers for the
// functions, and the constants and variables declared from core's, each
// with core's doc comment (an alias's also shows the type's fields). Run
// `go generate .` in the repository root after changing core's public API
// or its doc comments (doc.go holds the directives); it rewrites api_gen.go
// and ADK v2's copies.

// ContextGuard holds the per-agent configuration of the plugin. One guard
// serves any number of sessions concurrently; Add may be called at any time,
// also after the plugin was built.
type ContextGuard struct {
	g *core.Guard
}

// New returns a guard that reads context windows from registry; a nil
// registry means the default one (NewCrushRegistry). Options are validated
// here; their errors are reported by Plugin and PluginConfig.
func New(registry ModelRegistry, opts ...Option) *ContextGuard {
	all := make([]Option, 0, len(opts)+1)
	all = append(all, core.WithHost(adkHost))
	all = append(all, opts...)
	return &ContextGuard{g: core.New(registry, all...)}
}

// Err returns every configuration error recorded so far, joined, or nil.
func (g *ContextGuard) Err() error { return g.engine().Err() }

// Close cancels the summaries the guard prepares in the background
// (WithPreparedSummaries) and waits until they have returned, at most
// DefaultSummaryTimeout: a summarizer that ignores its context is abandoned.
// Compactions go on inline afterwards. Close may be called more than once.
func (g *ContextGuard) Close() error { return g.engine().Close() }

// engine is the guard's engine; nil for a nil guard, whose methods then
// report it as the engine's do.
func (g *ContextGuard) engine() *core.Guard {
	if g == nil {
		return nil
	}
	return g.g
}
