package core

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

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
	clock    Clock
	registry ModelRegistry
	// unknownModels are the model names the registry did not know, warned
	// about once each (window).
	unknownModels sync.Map
	log           *slog.Logger
	hook          func(context.Context, CompactionEvent)
	// beforeHook is WithBeforeCompaction's hook, nil without one.
	beforeHook func(context.Context, PendingCompaction) CompactionDecision
	// appender persists compactions made between turns
	// (WithSessionService), nil without one.
	appender SessionAppender
	tel      *telemetry
	optErrs  []error

	mu     sync.RWMutex
	agents map[string]*Agent
	// fallback is AddDefault's configuration; derived holds it under the
	// names of the agents it guarded lately (at most maxDerivedAgents).
	fallback *Agent
	derived  map[string]*derivedAgent
	errs     []error
	// unguardedLogged holds the names of agents without a configuration
	// whose first call was logged.
	unguardedLogged sync.Map

	sessions      *sessionTable
	triggerWarned sync.Map // agent+window -> bool
	reportWarned  sync.Map // agent -> bool: an unbelievable provider count was logged

	// configs caches the hashes of instructions and tools (prefix_count.go).
	configs configHashes
	// fixed caches the estimate of each system instruction and tool set
	// by its configHash (fixedOf).
	fixed configHashes

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
	tel, err := newTelemetry(o.tracerProvider, o.meterProvider)
	if err != nil {
		o.errs = append(o.errs, fmt.Errorf("contextguard: creating OpenTelemetry instruments: %w", err))
		tel, _ = newTelemetry(tracenoop.NewTracerProvider(), metricnoop.NewMeterProvider())
	}
	return &Guard{
		host:       o.host.withDefaults(o.clock),
		clock:      o.clock,
		tel:        tel,
		registry:   registry,
		log:        o.logger,
		hook:       o.onCompaction,
		beforeHook: o.beforeCompaction,
		appender:   o.appender,
		optErrs:    o.errs,
		agents:     make(map[string]*Agent),
		derived:    make(map[string]*derivedAgent),
		sessions:   newSessionTable(o.bounds.withDefaults(), o.logger),
		prep:       newPreparer(&o, tel),
	}
}

// Err returns every configuration error recorded so far, joined, or nil.
func (g *Guard) Err() error {
	g.mu.RLock()
	defer g.mu.RUnlock()
	all := append(append([]error(nil), g.optErrs...), g.errs...)
	return errors.Join(all...)
}

// The reasons of a compaction (CompactionEvent.Reason, the log's reason
// field, Usage.LastCompactionReason); ReasonRequested is the fifth. They are
// stored in session state, so their values never change.
const (
	// ReasonTokens: the request's calibrated count reached the trigger.
	ReasonTokens = "tokens"
	// ReasonTurns: the sliding window's turn budget was spent.
	ReasonTurns = "turns"
	// ReasonOutputLimit: the previous response stopped at the output limit
	// near the window.
	ReasonOutputLimit = "output_limit"
	// ReasonOverflow: the provider rejected the request as too long, and
	// the guard compacted it to recover.
	ReasonOverflow = "overflow"
)

// CompactionEvent describes one compaction, for the OnCompaction hook.
type CompactionEvent struct {
	// Agent and SessionID identify the conversation.
	Agent     string
	SessionID string
	// Strategy is the strategy that compacted.
	Strategy Strategy
	// Reason says what triggered it: ReasonTokens, ReasonTurns,
	// ReasonOutputLimit, ReasonOverflow or ReasonRequested.
	Reason string
	// TokensBefore and TokensAfter are the guard's calibrated counts of the
	// request before and after compaction.
	TokensBefore int
	TokensAfter  int
	// Threshold and Window are the numbers the decision was made against.
	Threshold int
	Window    int
	// ContentsSummarized is how many messages the new summary covers beyond
	// the previous summary.
	ContentsSummarized int
	// SummarizerCalls is how many times the summarizer was asked.
	SummarizerCalls int
	// RollingCalls is how many of those calls summarized an earlier piece
	// of a conversation too large for one summarizer input (a rolling
	// summary: each piece's summary is folded into the next piece's input,
	// so no message is left out).
	RollingCalls int
	// SummaryForm is the form the summarizer was last asked in:
	// SummaryFormCached (the agent's request plus an instruction) or
	// SummaryFormTranscript; "" when it was not asked.
	SummaryForm SummaryForm
	// Discarded reports that the compacted request was not smaller than the
	// request before compaction, so it was not applied: the request was sent
	// as it was and nothing was stored.
	Discarded bool
	// Summary is the summary that went into the request (empty when the
	// compaction was discarded).
	Summary string
	// Fallback reports that the deterministic fallback summary was used, and
	// FallbackReason why.
	Fallback       bool
	FallbackReason string
	// Duration is the wall time the compaction took.
	Duration time.Duration
	// Ran says how the compaction ran: inline in the model call that needed
	// it, from a summary prepared while tools ran, or between two turns.
	Ran CompactionRun
	// Prepared reports that the summary was written in the background
	// while an earlier step's tools ran (WithPreparedSummaries), whether the
	// compaction then ran in a model call (Ran is RanPrepared) or between
	// two turns (Ran is RanBetweenTurns): Ran says when the compaction was
	// made, Prepared where its summary came from.
	Prepared bool
	// Waited is how long the model call waited for the compaction: all of
	// Duration when it ran inline, what was left of a prepared summary, 0
	// between turns.
	Waited time.Duration
	// InlineReason says why a compaction for tokens ran inline (Ran is
	// RanInline) instead of from a summary prepared while tools ran; it is
	// empty otherwise. A compaction for another Reason (requested, the turn
	// trigger, recovery, the output-limit stop) always runs in the call
	// that needs it.
	InlineReason InlineReason
	// PrefixKeptTokens is how much of the agent's previous request (the
	// guard's calibrated count) the compacted request keeps as its leading
	// part, which a provider's prompt cache reads again at its cached price:
	// the system instruction and tools, which a compaction never changes.
	// InvalidatedTokens is the rest of the previous request, which the
	// provider reads at the full price again (and an explicit cache writes
	// again). Both are 0 when the session has no previous request.
	PrefixKeptTokens  int
	InvalidatedTokens int
}

// CompactionRun is how a compaction ran (CompactionEvent.Ran, the log's ran
// field). The values are stable: they are written to logs and spans.
type CompactionRun string

// How a compaction ran.
const (
	// RanInline: in the model call that needed it, which waited for it.
	RanInline CompactionRun = "inline"
	// RanPrepared: in a model call, from a summary written in the
	// background while the previous step's tools ran; the call waited only
	// for what was left.
	RanPrepared CompactionRun = "prepared"
	// RanBetweenTurns: after a run ended, before the next one started,
	// whether its summary was written then or prepared while the run's
	// tools ran (CompactionEvent.Prepared).
	RanBetweenTurns CompactionRun = "between_turns"
)

// InlineReason is why a compaction for tokens ran inline
// (CompactionEvent.InlineReason, the log's inline_reason field). The values
// are stable: they are written to logs and spans.
type InlineReason string

// Why a compaction for tokens ran inline.
const (
	// InlineNotPrepared: no summary was prepared for the call: prepared
	// summaries are off (WithPreparedSummaries), a before-compaction hook
	// decides each compaction, the agent has no summarizer, no tools ran
	// before the call (a turn's first call), another agent of the session
	// has the session's one prepared summary, the call before compacted,
	// or the process has not served the session's previous call.
	InlineNotPrepared InlineReason = "not_prepared"
	// InlineNotPredicted: the last step grew the request past the trigger
	// by more than the agent's recent steps predicted (WithEarlyCompaction).
	InlineNotPredicted InlineReason = "not_predicted"
	// InlineStepTooLarge: the step is too large for a summary written
	// before its results arrived: the system instruction and tools, a
	// summary and the step are over the trigger together, so only a summary
	// that covers the step itself makes the request fit.
	InlineStepTooLarge InlineReason = "step_too_large"
	// InlineStepFillsWindow: the step's results fill the window by
	// themselves: beside the system instruction, the tools, the user's
	// request and the shortest summary the guard asks for, they are past
	// what a prepared summary's request may take. No summary written before
	// they arrived could make the request fit, however the steps before
	// were predicted; only one that covers the results does. Tool results
	// this large for the window are best capped where the tool returns
	// them, or pruned (WithToolResultPruning).
	InlineStepFillsWindow InlineReason = "step_fills_window"
	// InlinePreparedUnusable: a summary was prepared but could not serve
	// the call: the history it covers changed, the request it makes was
	// over the trigger (a step larger than predicted), or it was not
	// written within the summary timeout (the log line "prepared summary
	// dropped" or "not used" says which).
	InlinePreparedUnusable InlineReason = "prepared_unusable"
)

// fireHook calls the OnCompaction hook with ev, when there is both. It is
// called after the session was released, so a hook that calls back into the
// guard for the same session is served.
func (g *Guard) fireHook(ctx context.Context, ev *CompactionEvent) {
	if ev != nil && g.hook != nil {
		g.hook(ctx, *ev)
	}
}
