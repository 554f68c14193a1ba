package core

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/genai"
)

// The engine's seams (ARCHITECTURE.md, The engine and the ADK adapter): the
// types the engine works on, never a host framework's (adapters pass their
// values through them or build them at a callback's entry), and, below,
// what a compaction reports to the user.

// Call is what the engine needs of the model call it serves. ADK v1's
// agent.CallbackContext and ADK v2's agent.Context satisfy it as they are;
// the call's session state is passed beside it (StateReader, State).
type Call interface {
	context.Context
	AppName() string
	UserID() string
	SessionID() string
	// UserContent is the content that started the invocation.
	UserContent() *genai.Content
}

// StateReader reads a session's state; ADK's session.ReadonlyState and
// session.State satisfy it. A key that does not exist is reported by an
// error for which Host.MissingKey holds.
type StateReader interface {
	Get(key string) (any, error)
}

// State reads and writes a session's state; ADK's session.State satisfies
// it.
type State interface {
	StateReader
	Set(key string, value any) error
}

// HostModel is a model of the host framework (ADK's model.LLM) that the
// engine stores for the adapter, which calls it (WithRecoveryModel), and
// knows only by name.
type HostModel interface {
	Name() string
}

// ModelNamer is a Summarizer that names the model it calls (each adapter's
// LLMSummarizer): the engine logs the name and looks up the model's window
// (summarizerWindow). ok is false when it has no model.
type ModelNamer interface {
	ModelName() (name string, ok bool)
}

// Host is what the engine asks of the host framework.
type Host struct {
	// MissingKey reports whether err, from a state read, says the key does
	// not exist (ADK: errors.Is(err, session.ErrStateKeyNotExist)): the
	// engine then treats the key as absent without a warning.
	MissingKey func(err error) bool
	// Now is the time of the call whose context is ctx (ADK: platform.Now).
	Now func(ctx context.Context) time.Time
}

func (h Host) withDefaults(clock Clock) Host {
	if h.MissingKey == nil {
		h.MissingKey = func(error) bool { return false }
	}
	if h.Now == nil {
		h.Now = func(context.Context) time.Time { return clock.Now() }
	}
	return h
}

// Clock is the guard's source of time. SystemClock is the default; tests
// pass a clock they advance themselves (core/coretest's FakeClock), so that
// a summary timeout fires when the test says so, never because the machine
// was slow. Its methods may be called from any goroutine.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// AfterFunc calls f, on a goroutine of the clock's choosing, once d
	// has elapsed, and returns a function that cancels the call: it
	// reports whether it stopped the call before it began, as
	// time.Timer.Stop does.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

// SystemClock returns the clock of the operating system: time.Now and
// time.AfterFunc.
func SystemClock() Clock { return systemClock{} }

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}

// timeoutError is the cause of a context the summary timeout ended; it
// wraps context.DeadlineExceeded, so user code can tell it from a
// cancellation.
type timeoutError struct{ timeout time.Duration }

func (e *timeoutError) Error() string {
	return fmt.Sprintf("the summary timeout of %v passed: %v", e.timeout, context.DeadlineExceeded)
}

func (e *timeoutError) Unwrap() error { return context.DeadlineExceeded }

// withTimeout is context.WithTimeout on clock c, with a *timeoutError cause;
// the returned function stops c's timer and cancels with context.Canceled.
func withTimeout(parent context.Context, c Clock, d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	stop := c.AfterFunc(d, func() { cancel(&timeoutError{timeout: d}) })
	return ctx, func() {
		stop()
		cancel(context.Canceled)
	}
}

func timedOut(ctx context.Context) bool {
	var te *timeoutError
	return errors.As(context.Cause(ctx), &te)
}

// Request is the engine's view of a model request: the fields of ADK's
// model.LLMRequest it reads, and rewrites. The adapter builds it at a
// callback's entry, and writes the contents the engine returns into its own
// request in one place.
type Request struct {
	Model    string
	Contents []*genai.Content
	Config   *genai.GenerateContentConfig
	// Origin is the adapter's own request this one was built from,
	// compared by identity only: the in-memory record (recovery.go)
	// recognises the request it let through when the provider rejects it.
	Origin any
	// Coverage, when set, anchors the summary's coverage to the host's log
	// (ADK v2: event IDs) instead of a count of contents. nil: the count
	// and fingerprint of the last covered content (ADK v1).
	Coverage Coverage
}

// Coverage maps between a count of leading contents of a request and a
// position in the host's log of the session. A Coverage whose log grows
// after its call (by the run's final response) may also have a method
// Refresh() Coverage, the coverage of the same call built from the log as
// it is now: the engine asks for it when it compacts the call's request
// once the run has ended (Guard.AfterRun).
type Coverage interface {
	// Anchor names the log position of the last content among the first n
	// contents of contents (ADK v2: the ID of the event it was built
	// from); "" when it cannot be named (the engine then keeps the count).
	Anchor(contents []*genai.Content, n int) string
	// Covered returns how many leading contents of contents were built
	// from the log up to and including anchor; ok is false when anchor is
	// not in the log (the engine then locates the summary by its stored
	// position and fingerprint, as without a host).
	Covered(contents []*genai.Content, anchor string) (n int, ok bool)
}

// Response is the engine's view of a final model response: the fields of
// ADK's model.LLMResponse it reads.
type Response struct {
	Content       *genai.Content
	UsageMetadata *genai.GenerateContentResponseUsageMetadata
	FinishReason  genai.FinishReason
}

// What a compaction reports: the OnCompaction hook's event, the log, the
// spans.

// Strategy names how an agent's conversation is compacted.
type Strategy string

const (
	// StrategyThreshold summarizes the whole conversation once the request
	// reaches the trigger (window minus buffer). It is the default.
	StrategyThreshold Strategy = "threshold"
	// StrategySlidingWindow keeps the newest turns verbatim and summarizes the
	// rest, triggered by turn count or by the token trigger.
	StrategySlidingWindow Strategy = "sliding_window"
	// StrategyToolResultPruning names, in a CompactionEvent only, a
	// compaction that tool-result pruning made alone (WithToolResultPruning):
	// the request reached the trigger and pruning its old tool results took
	// it back under, with no summarizer call. It is not an agent's strategy.
	StrategyToolResultPruning Strategy = "tool_result_pruning"
)

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
	// RollingCalls is how many of those calls summarized an earlier piece of
	// a conversation too large for one summarizer input (a rolling summary).
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
	// Prepared reports that the summary was written in the background while
	// an earlier step's tools ran (WithPreparedSummaries); Ran says when the
	// compaction was made (RanPrepared or RanBetweenTurns).
	Prepared bool
	// Waited is how long the model call waited for the compaction: all of
	// Duration when it ran inline, what was left of a prepared summary, 0
	// between turns.
	Waited time.Duration
	// InlineReason says why a compaction for tokens ran inline (Ran is
	// RanInline) instead of from a prepared summary; empty otherwise (a
	// compaction for another Reason always runs in the call that needs it).
	InlineReason InlineReason
	// PrefixKeptTokens is how much of the agent's previous request (the
	// guard's calibrated count) the compacted request keeps as its leading
	// part, which a provider's prompt cache reads again at its cached price.
	// InvalidatedTokens is the rest, read at the full price again. Both are 0
	// when the session has no previous request.
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
	// InlineStepFillsWindow: the step's results, beside the system
	// instruction, the tools, the user's request and the shortest summary,
	// are past what a prepared summary's request may take, so only a summary
	// that covers them makes the request fit. Cap such results where the
	// tool returns them, or prune them (WithToolResultPruning).
	InlineStepFillsWindow InlineReason = "step_fills_window"
	// InlinePreparedUnusable: a summary was prepared but could not serve
	// the call: the history it covers changed, the request it makes was
	// over the trigger (a step larger than predicted), or it was not
	// written within the summary timeout (the log line "prepared summary
	// dropped" or "not used" says which).
	InlinePreparedUnusable InlineReason = "prepared_unusable"
)

// SummaryForm is how the guard asks for a summary (WithSummaryForm,
// CompactionEvent.SummaryForm). The values are stable: they are written to
// logs.
type SummaryForm string

// The forms of a summary request.
const (
	// SummaryFormCached asks for the summary as the agent's own request plus
	// one user message carrying the summary instruction, with tool calling
	// disabled (SummaryRequest.Cached), so a provider that caches prompt
	// prefixes bills all but the instruction at its cached price. It is used
	// when the summarizer calls the agent's model (CachedSummarizer) and the
	// request fits the summarizer's window with the summary's room;
	// otherwise the transcript form is used. The default.
	SummaryFormCached SummaryForm = "cached"
	// SummaryFormTranscript asks for the summary with the summary prompt
	// and a transcript of the conversation (RenderSummaryPrompt), in
	// rolling pieces when the conversation does not fit the summarizer's
	// window.
	SummaryFormTranscript SummaryForm = "transcript"
)
