package core

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	metricnoop "go.opentelemetry.io/otel/metric/noop"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// The guard: the engine's configuration shared by every session, built by
// New, and what every call asks of it (the hook, the switch, the agent).

// PluginName is the name the guard's plugin registers under.
const PluginName = "contextguard"

// Guard is the engine: it holds the per-agent configuration. One guard
// serves any number of sessions concurrently; Add may be called at any time,
// also after the plugin was built.
type Guard struct {
	host       Host  // WithHost's, with defaults
	clock      Clock // WithClock's
	log        *slog.Logger
	hook       func(context.Context, CompactionEvent)                      // WithOnCompaction's
	beforeHook func(context.Context, PendingCompaction) CompactionDecision // WithBeforeCompaction's
	appender   SessionAppender                                             // WithSessionService's
	tel        *telemetry
	optErrs    []error
	sessions   *sessionTable
	prep       *preparer // the summaries prepared while tools run

	// The parts below hold what they need (a logger, the registry) and
	// are embedded, so their methods serve the guard's callers.
	windows     // the registry's windows and their warnings (agent_config.go)
	agentTable  // the agents' configurations (agents.go)
	reports     // the provider's counts (calibration.go)
	configCache // the instructions' and tools' hashes and estimates (config_hash.go)
}

// New returns a guard that reads context windows from registry; a nil
// registry means the default one (NewCrushRegistry). Options are validated
// here; their errors are reported by Plugin and PluginConfig.
func New(registry ModelRegistry, opts ...Option) *Guard {
	o := guardOptions{logger: slog.Default(), clock: SystemClock(), prepared: DefaultPreparedSummaries}
	for _, opt := range opts {
		if opt == nil {
			o.errs = append(o.errs, errors.New("contextguard: nil Option"))
			continue
		}
		opt(&o)
	}
	if registry == nil {
		registry = NewCrushRegistry(WithRegistryLogger(o.logger))
	}
	if r, ok := registry.(registryOptionErrs); ok {
		o.errs = append(o.errs, r.optionErrs()...)
	}
	host := o.host.withDefaults(o.clock)
	tel, err := newTelemetry(o.tracerProvider, o.meterProvider)
	if err != nil {
		o.errs = append(o.errs, fmt.Errorf("contextguard: creating OpenTelemetry instruments: %w", err))
		tel, _ = newTelemetry(tracenoop.NewTracerProvider(), metricnoop.NewMeterProvider())
	}
	return &Guard{
		host:       host,
		clock:      o.clock,
		tel:        tel,
		windows:    windows{registry: registry, log: o.logger},
		reports:    reports{log: o.logger},
		log:        o.logger,
		hook:       o.onCompaction,
		beforeHook: o.beforeCompaction,
		appender:   o.appender,
		optErrs:    o.errs,
		agentTable: agentTable{agents: make(map[string]*Agent), derived: make(map[string]*derivedAgent), host: host, log: o.logger},
		sessions:   newSessionTable(o.bounds.withDefaults()),
		prep:       newPreparer(o.prepared, tel, o.logger),
	}
}

// Err returns every configuration error recorded so far, joined, or nil.
func (g *Guard) Err() error {
	g.mu.RLock()
	defer g.mu.RUnlock()
	all := append(append([]error(nil), g.optErrs...), g.errs...)
	return errors.Join(all...)
}

// fireHook calls the OnCompaction hook with ev, when there is both. It is
// called after the session was released, so a hook that calls back into the
// guard for the same session is served.
func (g *Guard) fireHook(ctx context.Context, ev *CompactionEvent) {
	if ev != nil && g.hook != nil {
		g.hook(ctx, *ev)
	}
}

// switchedOff reports whether the guard is switched off for the session
// whose state is st. It reads one key and allocates nothing.
func (g *Guard) switchedOff(st StateReader) bool {
	return sessionDisabled(st, g.log)
}

// checkAgent says why the guard cannot answer for agentName.
func (g *Guard) checkAgent(agentName string) error {
	switch {
	case g == nil:
		return errors.New("contextguard: the guard is nil")
	case agentName == "":
		return errors.New("contextguard: the agent name is empty")
	case g.agent(agentName) == nil:
		return fmt.Errorf("contextguard: agent %q is not guarded; add it with Add", agentName)
	}
	return nil
}
