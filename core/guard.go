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
// New, and the OnCompaction hook's event.

// PluginName is the name the guard's plugin registers under.
const PluginName = "contextguard"

// Guard is the engine: it holds the per-agent configuration. One guard
// serves any number of sessions concurrently; Add may be called at any time,
// also after the plugin was built.
type Guard struct {
	// host is the host framework's functions (WithHost), with defaults.
	host Host
	// clock is WithClock's, SystemClock by default.
	clock Clock
	// windows holds the registry and its warnings (agent_config.go).
	windows
	log  *slog.Logger
	hook func(context.Context, CompactionEvent)
	// beforeHook is WithBeforeCompaction's hook, nil without one.
	beforeHook func(context.Context, PendingCompaction) CompactionDecision
	// appender persists compactions made between turns
	// (WithSessionService), nil without one.
	appender SessionAppender
	tel      *telemetry
	optErrs  []error

	// agentTable holds the agents' configurations (agents.go).
	agentTable

	sessions *sessionTable
	// reports records the provider's counts (calibration.go).
	reports

	// configCache caches the instructions' and tools' hashes and estimates
	// (config_hash.go).
	configCache

	// prep runs the summaries prepared while tools run
	// (prepared_summary.go).
	prep *preparer
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
