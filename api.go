// Package contextguard is an ADK-Go plugin that keeps every LLM request of an
// agent inside its model's context window.
//
// Before each model call the guard counts the request's tokens (contents,
// system instruction and tool declarations), calibrated by the provider's
// real prompt-token count of the previous call. When the count reaches the
// trigger (the window minus a buffer: 20k tokens for windows of 200k and
// more, 20% below that) it summarizes the conversation with an LLM, or with
// a deterministic fallback when the LLM fails, stores the summary in the ADK
// session, and sends the model one message holding the summary and the
// user's current request instead of the history. On later calls the summary
// replaces the contents it covers, located by a watermark and a fingerprint,
// so the compaction persists although ADK rebuilds the request from its
// append-only event log every step. After each call the guard records the
// provider's prompt-token count to calibrate the next estimate.
//
// Register it with a runner in a few lines:
//
//	guard := contextguard.New(nil) // nil: the default, catwalk-backed registry
//	guard.Add("assistant", llm)    // the agent's name and the model that summarizes
//	r, err := runner.New(runner.Config{
//		AppName:        "app",
//		Agent:          assistant,
//		SessionService: session.InMemoryService(),
//		PluginConfig:   guard.PluginConfig(),
//	})
//
// Agents that were not added pass through untouched.
package contextguard

import (
	"context"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/adk-contextguard/contextguard/core"
)

// The public API that takes no ADK type is the engine's (module core,
// ARCHITECTURE.md, Packages and modules), re-exported here under the names
// it has always had: type aliases for the types, wrappers for the
// functions, and the constants re-declared from core's.

// PluginName is the name the guard's plugin registers under.
const PluginName = core.PluginName

// Defaults, named so the README and the code cannot drift apart.
const (
	// DefaultContextWindow is the window assumed for a model the registry does
	// not know (a warning is logged once per model).
	DefaultContextWindow = core.DefaultContextWindow
	// DefaultMaxCompactionAttempts bounds summarizer calls per model call.
	DefaultMaxCompactionAttempts = core.DefaultMaxCompactionAttempts
	// DefaultSlidingWindowTurns is the turn budget used by WithSlidingWindow(0).
	DefaultSlidingWindowTurns = core.DefaultSlidingWindowTurns
	// DefaultPruneKeepSteps is how many of the newest tool steps
	// WithToolResultPruning(0) leaves intact.
	DefaultPruneKeepSteps = core.DefaultPruneKeepSteps
	// DefaultSummaryTimeout bounds one summarizer call; on expiry the
	// deterministic fallback summary is used.
	DefaultSummaryTimeout = core.DefaultSummaryTimeout
)

// Bounds of the guard's in-memory state (WithMaxSessions, WithMaxSessionBytes).
const (
	// DefaultMaxSessions is how many sessions the guard keeps in memory.
	DefaultMaxSessions = core.DefaultMaxSessions
	// DefaultMaxSessionBytes bounds the memory the guard keeps for sessions.
	DefaultMaxSessionBytes = core.DefaultMaxSessionBytes
)

// ReasonRequested is CompactionEvent.Reason for a compaction asked for with
// RequestCompaction, RequestCompactionInState or CompactTool.
const ReasonRequested = core.ReasonRequested

// MaxFocusBytes bounds the focus of a compaction request.
const MaxFocusBytes = core.MaxFocusBytes

// CompactToolName is the name of the tool CompactTool returns.
const CompactToolName = core.CompactToolName

// StateKeyDisabled is the session-state key that switches the guard off for
// a session when true (DisableSession, DisableInState).
const StateKeyDisabled = core.StateKeyDisabled

// ErrIrreducible is returned (wrapped) by the plugin when the part of a
// request the guard cannot shrink (system instruction, tool declarations and
// the user's current request) does not fit the context window by itself.
var ErrIrreducible = core.ErrIrreducible

// ErrReentrant is returned (wrapped, with the session and agent) by the
// plugin's BeforeModelCallback and OnModelErrorCallback when the call comes
// from the summarizer of a compaction of the same session.
var ErrReentrant = core.ErrReentrant

// Strategy names how an agent's conversation is compacted.
type Strategy = core.Strategy

const (
	// StrategyThreshold summarizes the whole conversation once the request
	// reaches the trigger (window minus buffer). It is the default.
	StrategyThreshold = core.StrategyThreshold
	// StrategySlidingWindow keeps the newest turns verbatim and summarizes the
	// rest, triggered by turn count or by the token trigger.
	StrategySlidingWindow = core.StrategySlidingWindow
)

// Option configures a ContextGuard.
type Option = core.Option

// AgentOption configures one agent (Add, AddDefault).
type AgentOption = core.AgentOption

// CompactionEvent describes one compaction, for the OnCompaction hook.
type CompactionEvent = core.CompactionEvent

// PendingCompaction describes a compaction about to run, for the
// BeforeCompaction hook.
type PendingCompaction = core.PendingCompaction

// CompactionDecision is the BeforeCompaction hook's answer.
type CompactionDecision = core.CompactionDecision

// ContextOverflow is what a provider's context-overflow error says.
type ContextOverflow = core.ContextOverflow

// ModelRegistry gives the context window of a model by name.
type ModelRegistry = core.ModelRegistry

// RegistryOption configures NewCrushRegistry.
type RegistryOption = core.RegistryOption

// Summarizer writes the summary of a conversation.
type Summarizer = core.Summarizer

// SummaryRequest is what a Summarizer is asked to summarize.
type SummaryRequest = core.SummaryRequest

// TodoItem is one entry of the agent's todo list kept in session state.
type TodoItem = core.TodoItem

// TokenCounter counts the tokens of a text for an agent's model
// (WithTokenCounter).
type TokenCounter = core.TokenCounter

// TokenCounterFunc is a TokenCounter from a function.
type TokenCounterFunc = core.TokenCounterFunc

// Usage is how full an agent's context is in a session.
type Usage = core.Usage

// AsContextOverflow reports whether err, or an error it wraps, is a
// provider's context-overflow error, and what it says.
func AsContextOverflow(err error) (ContextOverflow, bool) { return core.AsContextOverflow(err) }

// NewCrushRegistry returns the default ModelRegistry, backed by catwalk's
// model catalogue.
func NewCrushRegistry(opts ...RegistryOption) ModelRegistry { return core.NewCrushRegistry(opts...) }

// WithDefaultWindow sets the window the registry reports for a model it
// does not know.
func WithDefaultWindow(n int) RegistryOption { return core.WithDefaultWindow(n) }

// WithRegistryLogger sets the registry's logger.
func WithRegistryLogger(l *slog.Logger) RegistryOption { return core.WithRegistryLogger(l) }

// WithLogger sets the guard's logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return core.WithLogger(l) }

// WithOnCompaction sets a hook called after each compaction.
func WithOnCompaction(fn func(context.Context, CompactionEvent)) Option {
	return core.WithOnCompaction(fn)
}

// WithBeforeCompaction sets a hook called before each compaction, which may
// skip it or change its instructions.
func WithBeforeCompaction(fn func(context.Context, PendingCompaction) CompactionDecision) Option {
	return core.WithBeforeCompaction(fn)
}

// WithMaxSessions bounds how many sessions the guard keeps in memory.
func WithMaxSessions(n int) Option { return core.WithMaxSessions(n) }

// WithMaxSessionBytes bounds the memory the guard keeps for sessions.
func WithMaxSessionBytes(n int) Option { return core.WithMaxSessionBytes(n) }

// WithTracerProvider sets the OpenTelemetry tracer provider of the guard's
// spans.
func WithTracerProvider(tp trace.TracerProvider) Option { return core.WithTracerProvider(tp) }

// WithMeterProvider sets the OpenTelemetry meter provider of the guard's
// metrics.
func WithMeterProvider(mp metric.MeterProvider) Option { return core.WithMeterProvider(mp) }

// WithTriggerTokens sets the trigger as a token count.
func WithTriggerTokens(n int) AgentOption { return core.WithTriggerTokens(n) }

// WithTriggerFraction sets the trigger as a fraction of the window.
func WithTriggerFraction(f float64) AgentOption { return core.WithTriggerFraction(f) }

// WithReserve sets the tokens kept free below the window.
func WithReserve(n int) AgentOption { return core.WithReserve(n) }

// WithInstructions adds instructions to the summary prompt.
func WithInstructions(text string) AgentOption { return core.WithInstructions(text) }

// WithSummaryTokens sets the summary's length in tokens.
func WithSummaryTokens(n int) AgentOption { return core.WithSummaryTokens(n) }

// WithSummarizerWindow sets the summarizer model's context window.
func WithSummarizerWindow(n int) AgentOption { return core.WithSummarizerWindow(n) }

// WithSlidingWindow selects the sliding-window strategy with a turn budget.
func WithSlidingWindow(maxTurns int) AgentOption { return core.WithSlidingWindow(maxTurns) }

// WithToolResultPruning prunes old tool results, keeping the newest steps.
func WithToolResultPruning(keepSteps int) AgentOption {
	return core.WithToolResultPruning(keepSteps)
}

// WithMaxTokens caps the request size below the model's window.
func WithMaxTokens(n int) AgentOption { return core.WithMaxTokens(n) }

// WithMaxCompactionAttempts bounds the summarizer calls of one model call.
func WithMaxCompactionAttempts(n int) AgentOption { return core.WithMaxCompactionAttempts(n) }

// WithSummarizer sets the agent's summarizer in place of its model's.
func WithSummarizer(s Summarizer) AgentOption { return core.WithSummarizer(s) }

// WithSummaryTimeout bounds one summarizer call.
func WithSummaryTimeout(d time.Duration) AgentOption { return core.WithSummaryTimeout(d) }

// WithTokenCounter sets the agent's token counter.
func WithTokenCounter(tc TokenCounter) AgentOption { return core.WithTokenCounter(tc) }

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

// engine is the guard's engine; nil for a nil guard, whose methods then
// report it as the engine's do.
func (g *ContextGuard) engine() *core.Guard {
	if g == nil {
		return nil
	}
	return g.g
}
