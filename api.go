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

// The reasons of a compaction (CompactionEvent.Reason,
// Usage.LastCompactionReason).
const (
	// ReasonTokens: the request's calibrated count reached the trigger.
	ReasonTokens = core.ReasonTokens
	// ReasonTurns: the sliding window's turn budget was spent.
	ReasonTurns = core.ReasonTurns
	// ReasonOutputLimit: the previous response stopped at the output limit
	// near the window.
	ReasonOutputLimit = core.ReasonOutputLimit
	// ReasonOverflow: the provider rejected the request as too long, and
	// the guard compacted it to recover.
	ReasonOverflow = core.ReasonOverflow
	// ReasonRequested: a compaction asked for with RequestCompaction,
	// RequestCompactionInState or CompactTool.
	ReasonRequested = core.ReasonRequested
)

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

// AgentOption configures one agent registered with Add.
type AgentOption = core.AgentOption

// CompactionEvent describes one compaction, for the OnCompaction hook.
type CompactionEvent = core.CompactionEvent

// PendingCompaction is what a WithBeforeCompaction hook is told of a
// compaction about to start.
type PendingCompaction = core.PendingCompaction

// CompactionDecision is a WithBeforeCompaction hook's answer. The zero value
// lets the compaction run as configured.
type CompactionDecision = core.CompactionDecision

// ContextOverflow describes a provider's rejection of a request as longer
// than the model's context window.
type ContextOverflow = core.ContextOverflow

// ModelRegistry tells the guard how large a model's context window is.
type ModelRegistry = core.ModelRegistry

// RegistryOption configures NewCrushRegistry.
type RegistryOption = core.RegistryOption

// Summarizer turns a conversation into a summary the agent can resume from.
// Implementations should honour ctx; the guard bounds each call with the
// agent's summary timeout (it stops waiting when the timeout expires, even
// if Summarize has not returned) and falls back to a deterministic summary
// on any error, empty or oversize output, timeout or panic. Summarize runs
// without the guard's session lock, but a call it makes back into the guard
// for the session it summarizes, with ctx or a context derived from it,
// cannot be served and gets ErrReentrant.
type Summarizer = core.Summarizer

// SummaryRequest is what the guard hands a Summarizer. Contents and
// Transcript describe the same messages, already fitted to the summarizer's
// window: Contents for custom summarizers, Transcript as the LLM summarizer
// renders it.
type SummaryRequest = core.SummaryRequest

// TodoItem is one entry of the agent's todo list (session key "todos"),
// carried into every summary so the agent can restore it after compaction.
type TodoItem = core.TodoItem

// TokenCounter counts the tokens of a text exactly, for users who have their
// provider's tokenizer (or a local copy of it). See WithTokenCounter.
type TokenCounter = core.TokenCounter

// TokenCounterFunc adapts a function to TokenCounter.
type TokenCounterFunc = core.TokenCounterFunc

// Usage is how full an agent's context is in one session, as the guard left
// it after the agent's last guarded model call: what agent UIs show as
// "context: 63%". Counts are 0 until the guard has judged a request of the
// agent in the session.
type Usage = core.Usage

// AsContextOverflow reports whether err is a provider's context-overflow
// error, and what it says about the request's size and the model's limit.
// It recognises Gemini ("The input token count (N) exceeds the maximum
// number of tokens allowed (M)", HTTP 400 INVALID_ARGUMENT, also as a
// genai.APIError), Anthropic ("prompt is too long: N tokens > M maximum",
// "input length and max_tokens exceed context limit"), OpenAI-compatible
// servers (context_length_exceeded, "maximum context length is M tokens ...
// resulted in N tokens") and generic messages ("context length", "context
// window", "too many tokens", "token limit", ...). Rate limits and quotas
// (HTTP 429, "tokens per minute"), output-length errors, cancellation and
// deadlines are not overflows.
func AsContextOverflow(err error) (ContextOverflow, bool) { return core.AsContextOverflow(err) }

// NewCrushRegistry returns the default registry, backed by the model data
// embedded in charm.land/catwalk (no network). Model IDs are normalised:
// case, surrounding space, "models/" and provider prefixes such as
// "anthropic/", and date, version or release suffixes such as "-20250929",
// "-latest" and "-preview" are ignored; when several providers list a
// model, the first-party provider's entry wins. An unknown model gets DefaultContextWindow and one warning per
// model name.
func NewCrushRegistry(opts ...RegistryOption) ModelRegistry { return core.NewCrushRegistry(opts...) }

// WithDefaultWindow sets the window reported for unknown models (default
// DefaultContextWindow). Values of 0 or less keep the default.
func WithDefaultWindow(n int) RegistryOption { return core.WithDefaultWindow(n) }

// WithRegistryLogger sets where the registry warns about unknown models
// (default slog.Default()).
func WithRegistryLogger(l *slog.Logger) RegistryOption { return core.WithRegistryLogger(l) }

// WithLogger sets the logger the guard writes to. The default is
// slog.Default(). A nil logger is an error.
func WithLogger(l *slog.Logger) Option { return core.WithLogger(l) }

// WithOnCompaction registers a hook called after every compaction, on the
// goroutine of the model call, with what was done. It runs once the guard
// has released the session, so it may call back into the guard, also for
// the same session. A nil hook is an error.
func WithOnCompaction(fn func(context.Context, CompactionEvent)) Option {
	return core.WithOnCompaction(fn)
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
	return core.WithBeforeCompaction(fn)
}

// Clock is the guard's source of time (WithClock). SystemClock is the
// default; tests pass a clock they advance themselves
// (contextguardtest.FakeClock), so that a summary timeout fires when the
// test says so, never because the machine was slow. Its methods may be
// called from any goroutine.
type Clock = core.Clock

// SystemClock returns the clock of the operating system: time.Now and
// time.AfterFunc.
func SystemClock() Clock { return core.SystemClock() }

// WithClock sets the clock of the guard's timeouts (WithSummaryTimeout, the
// WithBeforeCompaction hook's bound) and of the durations it reports
// (CompactionEvent.Duration, the summarizer's latency); the time stamped on
// a compaction stays the host framework's when it gives one (ADK's
// platform.Now). The default is SystemClock(). A nil clock is an error.
func WithClock(c Clock) Option { return core.WithClock(c) }

// WithMaxSessions bounds how many sessions the guard keeps in memory (their
// count caches, summary messages and in-memory records); past it the least
// recently used idle session is dropped, and its next call counts from its
// prefix record in session state. Zero means DefaultMaxSessions; a negative
// value is an error.
func WithMaxSessions(n int) Option { return core.WithMaxSessions(n) }

// WithMaxSessionBytes bounds the bytes the sessions kept in memory retain
// (see WithMaxSessions), as the guard accounts them: the strings and media
// of the contents their caches pin, plus a fixed cost per content and per
// session. Past it the least recently used idle sessions are dropped; a
// session in use is never dropped, so one session larger than the bound is
// kept while it is served. Zero means DefaultMaxSessionBytes; a negative
// value is an error.
func WithMaxSessionBytes(n int) Option { return core.WithMaxSessionBytes(n) }

// WithTracerProvider sets the OpenTelemetry tracer provider for compaction
// spans. The default is the global provider (otel.GetTracerProvider), the one
// ADK itself uses.
func WithTracerProvider(tp trace.TracerProvider) Option { return core.WithTracerProvider(tp) }

// WithMeterProvider sets the OpenTelemetry meter provider for the guard's
// metrics. The default is the global provider (otel.GetMeterProvider).
func WithMeterProvider(mp metric.MeterProvider) Option { return core.WithMeterProvider(mp) }

// WithTriggerTokens compacts once the request reaches n tokens, whatever the
// window. n must be positive; a value at or above the window is lowered to
// the default trigger with a warning when the window is known.
func WithTriggerTokens(n int) AgentOption { return core.WithTriggerTokens(n) }

// WithTriggerFraction compacts once the request reaches f of the window; f
// must be in (0, 1), e.g. 0.8.
func WithTriggerFraction(f float64) AgentOption { return core.WithTriggerFraction(f) }

// WithReserve keeps n tokens free below the window (for the response and the
// estimate's error): the trigger is window - n. n must be positive.
func WithReserve(n int) AgentOption { return core.WithReserve(n) }

// WithInstructions appends text to the summary prompt, e.g. "Keep every
// ticket number." An empty string is an error.
func WithInstructions(text string) AgentOption { return core.WithInstructions(text) }

// WithSummaryTokens sets the length asked of a summary, in tokens (the
// default is half the room kept free under the window: 10,000 tokens for
// windows of 200k and more, 300 for a 3k window). A summary is still never
// asked to be longer than the room under the trigger allows, nor than half
// of what the contents it replaces free. n must be positive.
func WithSummaryTokens(n int) AgentOption { return core.WithSummaryTokens(n) }

// WithSummarizerWindow sets the context window of the summarizer's model,
// for a model the registry does not know (the guard otherwise assumes
// DefaultContextWindow for it, with a warning). A conversation larger than
// the summarizer's window is summarized in pieces. n must be positive.
func WithSummarizerWindow(n int) AgentOption { return core.WithSummarizerWindow(n) }

// WithSlidingWindow selects the sliding-window strategy. A turn is a user
// message with text (function responses are not turns). The guard compacts
// when more than maxTurns turns were added since the last compaction, or when
// the request reaches the token trigger, whichever comes first. It then keeps
// the newest turns verbatim (half of maxTurns, rounded up, fewer when they
// would take more than half the room under the trigger), summarizes the
// previous summary plus the turns before them, and never separates a
// function call from its response. When even the newest turn does not fit,
// it summarizes everything, as the threshold strategy does. A compaction
// triggered by turns waits until what it would summarize weighs at least the
// summary it asks for (half the buffer, between 512 and 2,048 tokens), so a
// few short turns never cost a summary longer than them. Zero means
// DefaultSlidingWindowTurns (as in the earlier guard); a negative value is an
// error.
func WithSlidingWindow(maxTurns int) AgentOption { return core.WithSlidingWindow(maxTurns) }

// WithToolResultPruning replaces the payloads of function responses older
// than the newest keepSteps tool steps (a tool step is one message of
// function responses; parallel calls answer in one) with a short placeholder
// naming the tool and the size removed, before the request is counted, so a
// request can shrink without a summarizer call; the summarizer runs only if
// the request is still over the trigger. It works with either strategy. The
// stored session is untouched: pruning is applied to every request
// deterministically, so the same history always gives the same request.
// Results under 200 tokens, user text and the newest keepSteps steps are
// never pruned, and pruning advances keepSteps steps at a time, so the
// request (and the provider's prompt cache) changes once every keepSteps
// steps; a compaction never brings pruned results back. Zero means
// DefaultPruneKeepSteps; a negative value is an error.
func WithToolResultPruning(keepSteps int) AgentOption {
	return core.WithToolResultPruning(keepSteps)
}

// WithMaxTokens overrides the context window the registry reports for the
// agent's model (both strategies). Zero keeps the registry's value; a
// negative value is an error.
func WithMaxTokens(n int) AgentOption { return core.WithMaxTokens(n) }

// WithMaxCompactionAttempts bounds how many summaries one model call may
// request when a summary comes back too long for the trigger. Zero means
// DefaultMaxCompactionAttempts; a negative value is an error.
func WithMaxCompactionAttempts(n int) AgentOption { return core.WithMaxCompactionAttempts(n) }

// WithSummarizer replaces the LLM summarizer built from the model given to
// Add (for example with one over a cheaper model, see NewLLMSummarizer).
// A nil summarizer is an error.
func WithSummarizer(s Summarizer) AgentOption { return core.WithSummarizer(s) }

// WithSummaryTimeout bounds each summarizer call, the default LLM
// summarizer's and a custom one's alike. When it expires the guard stops
// waiting, even for a summarizer or model that ignores its context (the
// abandoned call is left to return on its own), and the deterministic
// fallback summary is used. The summarizer's context is then cancelled,
// with a cause (context.Cause) that wraps context.DeadlineExceeded. The
// time is the guard's clock's (WithClock). It must be positive.
func WithSummaryTimeout(d time.Duration) AgentOption { return core.WithSummaryTimeout(d) }

// WithTokenCounter makes the guard count with tc instead of its built-in
// estimator. Texts, function names, call arguments and results (as their
// compact JSON) and tool declarations (as their compact JSON) go through
// tc; images and other inline data are still counted from their headers by
// the model family's published rules, and each message adds the estimator's
// fitted framing cost. Counts are cached per content, so tc runs once per
// new content, not once per call. Because tc is exact, the guard applies no
// default correction before the provider's first real count. A nil counter
// is an error.
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
