package core

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// Option configures a Guard.
type Option func(*guardOptions)

type guardOptions struct {
	host             Host
	clock            Clock
	logger           *slog.Logger
	onCompaction     func(context.Context, CompactionEvent)
	beforeCompaction func(context.Context, PendingCompaction) CompactionDecision
	tracerProvider   trace.TracerProvider
	meterProvider    metric.MeterProvider
	bounds           sessionBounds // session_table.go
	appender         SessionAppender
	prepared         int // WithPreparedSummaries' bound
	errs             []error
}

func (o *guardOptions) fail(err error) { o.errs = append(o.errs, fmt.Errorf("contextguard: %w", err)) }

// WithLogger sets the logger the guard writes to. The default is
// slog.Default(). A nil logger is an error.
func WithLogger(l *slog.Logger) Option {
	return required("WithLogger", "logger", l, func(o *guardOptions, l *slog.Logger) { o.logger = l })
}

// WithOnCompaction registers a hook called after every compaction, on the
// goroutine of the model call, with what was done. It runs once the guard
// has released the session, so it may call back into the guard, also for
// the same session. A nil hook is an error.
func WithOnCompaction(fn func(context.Context, CompactionEvent)) Option {
	return required("WithOnCompaction", "hook", fn, func(o *guardOptions, fn func(context.Context, CompactionEvent)) { o.onCompaction = fn })
}

// WithBeforeCompaction registers a hook called before every compaction, on
// the goroutine of the model call, with what is about to be compacted. Its
// answer can add instructions to this compaction's summary prompt or skip
// this one compaction (CompactionDecision). It runs as a summarizer does:
// calls for the same session wait for it, a call back into the guard for
// the same session from its context gets ErrReentrant, and it is bounded by
// the agent's summary timeout (the compaction then runs as configured). A
// nil hook is an error.
func WithBeforeCompaction(fn func(context.Context, PendingCompaction) CompactionDecision) Option {
	return required("WithBeforeCompaction", "hook", fn, func(o *guardOptions, fn func(context.Context, PendingCompaction) CompactionDecision) {
		o.beforeCompaction = fn
	})
}

// optionTarget is what an option configures, recording its errors for
// Plugin.
type optionTarget interface {
	*Agent | *guardOptions | *crushRegistry
	fail(err error)
}

// countOption is the one rule of count options: a negative n is an error
// naming what 0 means (zero: "means the default 20"), check rejects a
// positive n the option cannot take, and set applies n, 0 included.
func countOption[T optionTarget](option string, n int, zero string, check func(int) error, set func(T, int)) func(T) {
	return func(o T) {
		call := fmt.Sprintf("%s(%d)", option, n)
		if n < 0 {
			o.fail(fmt.Errorf("%s: must be >= 0 (0 %s)", call, zero))
			return
		}
		if n > 0 && check != nil {
			if err := check(n); err != nil {
				o.fail(fmt.Errorf("%s: %w (0 %s)", call, err, zero))
				return
			}
		}
		set(o, n)
	}
}

// required is an option whose value must not be nil, typed nil included.
func required[T optionTarget, V any](option, what string, v V, set func(T, V)) func(T) {
	return func(o T) {
		if IsNil(v) {
			o.fail(fmt.Errorf("%s: %s is nil", option, what))
			return
		}
		set(o, v)
	}
}

func orDefault(n, def int) int {
	if n == 0 {
		return def
	}
	return n
}

// The windows an option may declare. Below minWindow the guard's fixed
// costs leave no room for a conversation; above maxWindow, ten times the
// largest window offered today, it is a unit mistake or a typo.
const (
	minWindow = 1_024
	maxWindow = 100_000_000
)

func checkWindow(n int) error {
	if n < minWindow || n > maxWindow {
		return fmt.Errorf("a window must be between %d and %d tokens", minWindow, maxWindow)
	}
	return nil
}

// WithClock sets the clock of the guard's timeouts (WithSummaryTimeout, the
// WithBeforeCompaction hook's bound) and of the durations it reports
// (CompactionEvent.Duration, the summarizer's latency); the time stamped on
// a compaction stays the host framework's when it gives one (ADK's
// platform.Now). The default is SystemClock(). A nil clock is an error.
func WithClock(c Clock) Option {
	return required("WithClock", "clock", c, func(o *guardOptions, c Clock) { o.clock = c })
}

// WithHost sets the host framework's functions; an adapter passes it first,
// before the user's options. Nil fields keep the defaults (no key is ever
// "missing" by error; the guard's clock, WithClock).
func WithHost(h Host) Option {
	return func(o *guardOptions) { o.host = h }
}

// WithTracerProvider sets the OpenTelemetry tracer provider for compaction
// spans. The default is the global provider (otel.GetTracerProvider), the one
// ADK itself uses.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return required("WithTracerProvider", "provider", tp, func(o *guardOptions, tp trace.TracerProvider) { o.tracerProvider = tp })
}

// WithMeterProvider sets the OpenTelemetry meter provider for the guard's
// metrics. The default is the global provider (otel.GetMeterProvider).
func WithMeterProvider(mp metric.MeterProvider) Option {
	return required("WithMeterProvider", "provider", mp, func(o *guardOptions, mp metric.MeterProvider) { o.meterProvider = mp })
}

// WithSessionService sets where a compaction made between two runs is
// persisted: an event with the compaction's state delta appended to the
// session. A nil appender is an error. For adapters: each plugin's
// WithSessionService takes its framework's session service.
func WithSessionService(s SessionAppender) Option {
	return required("WithSessionService", "the session service", s, func(o *guardOptions, s SessionAppender) { o.appender = s })
}

// WithPreparedSummaries bounds how many summaries the guard prepares in the
// background at once, over all sessions: when a model response asks for
// tool calls and the next request will likely reach the trigger
// (WithEarlyCompaction), the guard writes the summary while the tools run,
// and the next model call waits only for what is left of it. limit 0
// (PreparedSummariesOff) turns this off; the default is
// DefaultPreparedSummaries. A negative limit is an error.
func WithPreparedSummaries(limit int) Option {
	return countOption("WithPreparedSummaries", limit, "turns prepared summaries off", nil, func(o *guardOptions, n int) {
		o.prepared = n
	})
}

// WithMaxSessions bounds how many sessions the guard keeps in memory (their
// count caches, summary messages and in-memory records); past it the least
// recently used idle session is dropped, and its next call counts from its
// prefix record in session state. Zero means DefaultMaxSessions; a negative
// value is an error.
func WithMaxSessions(n int) Option {
	return countOption("WithMaxSessions", n, fmt.Sprintf("means the default %d", DefaultMaxSessions), nil,
		func(o *guardOptions, n int) { o.bounds.sessions = n })
}

// WithMaxSessionBytes bounds the bytes the sessions kept in memory retain
// (see WithMaxSessions), as the guard accounts them: the strings and media
// of the contents their caches pin, plus a fixed cost per content and per
// session. Past it the least recently used idle sessions are dropped; a
// session in use is never dropped, so one session larger than the bound is
// kept while it is served. Zero means DefaultMaxSessionBytes; a negative
// value is an error.
func WithMaxSessionBytes(n int) Option {
	return countOption("WithMaxSessionBytes", n, fmt.Sprintf("means the default %d", DefaultMaxSessionBytes), nil,
		func(o *guardOptions, n int) { o.bounds.bytes = n })
}

// WithRegistryLogger sets where the registry warns when it reports
// WithDefaultWindow's window for an unknown model (default slog.Default()).
// Without WithDefaultWindow the registry reports an unknown model as
// unknown, and the guard warns with its own logger (WithLogger). A nil
// logger is an error, reported by Plugin.
func WithRegistryLogger(l *slog.Logger) RegistryOption {
	return required("WithRegistryLogger", "logger", l, func(r *crushRegistry, l *slog.Logger) { r.log = l })
}

// WithDefaultWindow sets the window reported for unknown models, with a
// warning once per model name. Without it (or with 0) an unknown model is
// reported as unknown (0), and the guard assumes DefaultContextWindow for
// it. A negative value is an error, and so is a window below 1,024 or above
// 100,000,000 tokens; the guard built with the registry reports them
// (Plugin).
func WithDefaultWindow(n int) RegistryOption {
	return countOption("WithDefaultWindow", n, "reports an unknown model as unknown", checkWindow,
		func(r *crushRegistry, n int) { r.defaultWindow = n })
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
		hooks:      hooks{hook: o.onCompaction, beforeHook: o.beforeCompaction},
		appender:   o.appender,
		optErrs:    o.errs,
		agentTable: agentTable{agents: make(map[string]*Agent), derived: make(map[string]*derivedAgent), host: host, log: o.logger},
		sessions:   newSessionTable(o.bounds.withDefaults(), o.logger),
		prep:       newPreparer(&o, tel),
	}
}
