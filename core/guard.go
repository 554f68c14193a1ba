package core

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
)

// PluginName is the name the guard's plugin registers under.
const PluginName = "contextguard"

// Guard is the engine: it holds the per-agent configuration. One guard
// serves any number of sessions concurrently; Add may be called at any time,
// also after the plugin was built.
type Guard struct {
	host     Host  // WithHost's, with defaults
	clock    Clock // WithClock's
	log      *slog.Logger
	appender SessionAppender // WithSessionService's
	tel      *telemetry
	optErrs  []error
	sessions *sessionTable
	prep     *preparer // the summaries prepared while tools run

	// Embedded parts, whose methods serve the guard's callers.
	hooks
	windows     // the registry's windows and their warnings (agent_config.go)
	agentTable  // the agents' configurations (agents.go)
	reports     // the provider's counts (calibration.go)
	configCache // the instructions' and tools' hashes and estimates (config_hash.go)
}

// Err returns every configuration error recorded so far, joined, or nil.
func (g *Guard) Err() error {
	g.mu.RLock()
	defer g.mu.RUnlock()
	all := append(append([]error(nil), g.optErrs...), g.errs...)
	return errors.Join(all...)
}

// hooks are the user's compaction hooks, nil when not given.
type hooks struct {
	hook       func(context.Context, CompactionEvent)                      // WithOnCompaction's
	beforeHook func(context.Context, PendingCompaction) CompactionDecision // WithBeforeCompaction's
}

// fireHook calls the OnCompaction hook with ev, after the session was
// released so a hook may call back into the guard.
func (h *hooks) fireHook(ctx context.Context, ev *CompactionEvent) {
	if ev != nil && h.hook != nil {
		h.hook(ctx, *ev)
	}
}

// SwitchedOff reports whether the session whose state is st is switched
// off (StateKeyDisabled). For adapters.
func (g *Guard) SwitchedOff(st StateReader) bool { return sessionDisabled(st, g.log) }

// CheckAgent says why the guard cannot answer for agentName (a nil guard,
// an empty name, an agent not guarded), nil when it can. For adapters.
func (g *Guard) CheckAgent(name string) error {
	switch {
	case g == nil:
		return errors.New("contextguard: the guard is nil")
	case name == "":
		return errors.New("contextguard: the agent name is empty")
	case g.agent(name) == nil:
		return fmt.Errorf("contextguard: agent %q is not guarded; add it with Add", name)
	}
	return nil
}
