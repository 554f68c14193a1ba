package core

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Options: the guard's (Option) and each agent's (AgentOption), validated in
// the constructor.

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

// Defaults, named so the README and the code cannot drift apart.
const (
	// DefaultContextWindow is the window assumed for a model the registry does
	// not know (a warning is logged once per model).
	DefaultContextWindow = 128_000
	// DefaultMaxCompactionAttempts bounds summarizer calls per model call.
	DefaultMaxCompactionAttempts = 3
	// DefaultMaxSummarizerCalls bounds the summarizer calls of one
	// compaction, a rolling summary's pieces included: at the 5 s a
	// summarizer call commonly takes, a model call waits under a minute for
	// its compaction (a rolling summary over a huge span once made 65 calls
	// inside one model call). A span that needs more is summarized from its
	// newest part, the oldest listed mechanically (WithMaxSummarizerCalls).
	DefaultMaxSummarizerCalls = 10
	// DefaultSlidingWindowTurns is the turn budget used by WithSlidingWindow(0).
	DefaultSlidingWindowTurns = 20
	// DefaultPruneKeepSteps is how many of the newest tool steps
	// WithToolResultPruning(0) leaves intact: the result the model is acting
	// on and the two before it, enough for a read -> edit -> test chain to
	// see its own outputs; older results have usually been digested into the
	// model's own messages already.
	DefaultPruneKeepSteps = 3
	// DefaultSummaryTimeout bounds one summarizer call; on expiry the
	// deterministic fallback summary is used.
	DefaultSummaryTimeout = 2 * time.Minute

	// largeWindow is where the buffer switches from a fraction to a fixed size
	// (ARCHITECTURE.md, Origins: windows of 200k and more get a fixed 20k buffer).
	largeWindow = 200_000
	// largeWindowBuffer is the fixed buffer for windows >= largeWindow.
	largeWindowBuffer = 20_000
	// smallWindowBufferFraction is the buffer for windows < largeWindow.
	smallWindowBufferFraction = 0.20
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
	bounds           sessionBounds // session_memory_bound.go
	appender         SessionAppender
	// prepared is WithPreparedSummaries' bound, when preparedSet
	// (prepared_summary.go).
	prepared    int
	preparedSet bool
	errs        []error
}

// fail records an option's error, reported by Plugin.
func (o *guardOptions) fail(err error) { o.errs = append(o.errs, fmt.Errorf("contextguard: %w", err)) }

// WithLogger sets the logger the guard writes to. The default is
// slog.Default(). A nil logger is an error.
func WithLogger(l *slog.Logger) Option {
	return func(o *guardOptions) {
		if l == nil {
			o.fail(errors.New("WithLogger: logger is nil"))
			return
		}
		o.logger = l
	}
}

// WithOnCompaction registers a hook called after every compaction, on the
// goroutine of the model call, with what was done. It runs once the guard
// has released the session, so it may call back into the guard, also for
// the same session. A nil hook is an error.
func WithOnCompaction(fn func(context.Context, CompactionEvent)) Option {
	return func(o *guardOptions) {
		if fn == nil {
			o.fail(errors.New("WithOnCompaction: hook is nil"))
			return
		}
		o.onCompaction = fn
	}
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
	return func(o *guardOptions) {
		if fn == nil {
			o.fail(errors.New("WithBeforeCompaction: hook is nil"))
			return
		}
		o.beforeCompaction = fn
	}
}

// AgentOption configures one agent registered with Add.
type AgentOption func(*Agent)

// WithTriggerTokens compacts once the request reaches n tokens, whatever the
// window. n must be positive (0 is an error: leave the option out for the
// default trigger) and below the window: WithMaxTokens when given, else the
// registry's window for the model given to Add when the registry knows it
// (Plugin reports it otherwise). Only one of WithTriggerTokens,
// WithTriggerFraction and WithReserve may be given. A value at or above a
// window known only at run time (the request's model, when it differs) is
// lowered to the default trigger with a warning.
func WithTriggerTokens(n int) AgentOption {
	return positiveOption("WithTriggerTokens", n, func(c *Agent, name string) {
		c.setTrigger(triggerSpec{kind: triggerTokens, tokens: n, call: name})
	})
}

// WithTriggerFraction compacts once the request reaches f of the window; f
// must be in (0, 1), e.g. 0.8 (0 is an error). Only one of
// WithTriggerTokens, WithTriggerFraction and WithReserve may be given.
func WithTriggerFraction(f float64) AgentOption {
	return func(c *Agent) {
		call := fmt.Sprintf("WithTriggerFraction(%v)", f)
		if !(f > 0 && f < 1) {
			c.fail(fmt.Errorf("%s: must be in (0, 1)", call))
			return
		}
		c.setTrigger(triggerSpec{kind: triggerFraction, fraction: f, call: call})
	}
}

// WithReserve keeps n tokens free below the window (for the response and the
// estimate's error): the trigger is window - n. n must be positive (0 is an
// error: leave the option out for the default trigger) and below the
// window: WithMaxTokens when given, else the registry's window for the model
// given to Add when the registry knows it (Plugin reports it otherwise).
// Only one of WithTriggerTokens, WithTriggerFraction and WithReserve may be
// given. A reserve that leaves nothing of a window known only at run time
// falls back to the default trigger with a warning.
func WithReserve(n int) AgentOption {
	return positiveOption("WithReserve", n, func(c *Agent, name string) {
		c.setTrigger(triggerSpec{kind: triggerReserve, tokens: n, call: name})
	})
}

// WithInstructions appends text to the summary prompt, e.g. "Keep every
// ticket number." An empty string is an error.
func WithInstructions(text string) AgentOption {
	return func(c *Agent) {
		if text == "" {
			c.fail(errors.New("WithInstructions: text is empty"))
			return
		}
		c.instructions = text
	}
}

// WithSummaryTokens sets the length asked of a summary, in tokens. Zero
// means the default, half the room kept free under the window (10,000
// tokens for windows of 200k and more, 300 for a 3k window); a negative
// value is an error, and so is a value at or above the window when the
// window is known at Add (WithMaxTokens, or the registry's for the model
// given to Add). A summary is still never asked to be longer than the room
// under the trigger allows, nor than half of what the contents it replaces
// free.
func WithSummaryTokens(n int) AgentOption {
	return countOption("WithSummaryTokens", n, "means the default, half the buffer", nil,
		func(c *Agent, n int) { c.summaryTokens = n })
}

// WithSummarizerWindow sets the context window of the model that writes the
// summaries. Leave it out (or give 0) when the summarizer runs on the
// agent's own model: a summarizer whose model is the one the request names
// uses the agent's window (WithMaxTokens, else the registry's), and so does
// a custom Summarizer that names no model. A summarizer on another model
// gets the registry's window for that model or, for a model the registry
// does not know, DefaultContextWindow with a warning that names this
// option: set it then. A conversation larger than the summarizer's window
// is summarized in pieces. A negative value is an error, and so is a window
// below 1,024 or above 100,000,000 tokens.
func WithSummarizerWindow(n int) AgentOption {
	return countOption("WithSummarizerWindow", n, "means the agent's window for its own model, else the registry's", checkWindow,
		func(c *Agent, n int) { c.summarizerWindow = n })
}

// positiveOption is an AgentOption named option taking a count that must be
// positive: set applies it, with the option's call as written (for example
// "WithReserve(2000)") for its own messages; anything else is recorded as
// an error.
func positiveOption(option string, n int, set func(c *Agent, call string)) AgentOption {
	call := fmt.Sprintf("%s(%d)", option, n)
	return func(c *Agent) {
		if n <= 0 {
			c.fail(fmt.Errorf("%s: must be > 0", call))
			return
		}
		set(c, call)
	}
}

// optionTarget is what an option configures: an agent (AgentOption), the
// guard (Option) or the default registry (RegistryOption), each recording
// the option's errors for Plugin.
type optionTarget interface {
	*Agent | *guardOptions | *crushRegistry
	fail(err error)
}

// countOption is an option named option taking a count whose 0 has a
// meaning of its own (zero, as its error says it: "means the default 20"):
// a negative n is an error naming what 0 means, check (when not nil)
// rejects a positive n the option cannot take, and set applies n, 0
// included. Every count option goes through it, so they all read and fail
// alike.
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

// orDefault is n, or def when n is 0: the value of a count option whose 0
// means its default.
func orDefault(n, def int) int {
	if n == 0 {
		return def
	}
	return n
}

// The windows an option may declare (WithMaxTokens, WithSummarizerWindow,
// WithDefaultWindow). Below minWindow the guard's own fixed costs (a
// summary, the summary prompt, a system instruction) leave no room for a
// conversation, and every call would end in ErrIrreducible; above
// maxWindow, ten times the largest window a model offers today (10M
// tokens), the number is a unit mistake (bytes for tokens) or a typo.
const (
	minWindow = 1_024
	maxWindow = 100_000_000
)

// checkWindow rejects a window outside [minWindow, maxWindow].
func checkWindow(n int) error {
	if n < minWindow || n > maxWindow {
		return fmt.Errorf("a window must be between %d and %d tokens", minWindow, maxWindow)
	}
	return nil
}

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
// error. Only one strategy option (WithSlidingWindow, WithTailRetention) may
// be given.
func WithSlidingWindow(maxTurns int) AgentOption {
	return countOption("WithSlidingWindow", maxTurns, fmt.Sprintf("means the default %d", DefaultSlidingWindowTurns), nil,
		func(c *Agent, n int) {
			c.setPolicy(slidingWindow{maxTurns: orDefault(n, DefaultSlidingWindowTurns)}, fmt.Sprintf("WithSlidingWindow(%d)", maxTurns))
		})
}

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
	return countOption("WithToolResultPruning", keepSteps, fmt.Sprintf("means the default %d", DefaultPruneKeepSteps), nil,
		func(c *Agent, n int) { c.pruneKeep = orDefault(n, DefaultPruneKeepSteps) })
}

// WithPruningMinFree sets the least a tool-result pruning pass must free,
// in estimated tokens, to rewrite the history the request keeps
// (WithToolResultPruning). A pass that prunes more results rewrites the
// request from the first result it prunes on, and a provider's prompt
// cache then reads that part again at the full input price; so the pruning
// frontier is kept in session state and advances only once advancing it
// frees at least n tokens, and between two such passes each request
// extends the one before it. When a request is over the trigger, pruning
// frees all it can whatever n is, since a compaction would rewrite more.
//
// Zero, the default, prunes only when the request reaches the trigger: a
// pass there takes the place of a compaction, and a pass under the trigger
// saves only what the provider's cache already bills at a tenth, on the
// requests left before the next compaction, while it rewrites the request
// from its first pruned result at 1.25 times the input price. Replayed on
// recorded agent sessions at 32k (make cost), passes under the trigger at a
// minimum of a quarter of the window cost more than none. A positive n
// suits a provider without a prompt cache: WithPruningMinFree(1) advances on
// every pass, as versions before it did. A negative value is an error, and
// so is a value at or above the window when the window is known at Add
// (WithMaxTokens, or the registry's for the model given to Add): no pass can
// free that much.
func WithPruningMinFree(n int) AgentOption {
	return countOption("WithPruningMinFree", n, "is the default, pruning only at the trigger", nil,
		func(c *Agent, n int) { c.pruneMinFree = n })
}

// WithMaxTokens overrides the context window the registry reports for the
// agent's model (every strategy). Zero keeps the registry's value; a
// negative value is an error, and so is a window below 1,024 or above
// 100,000,000 tokens.
func WithMaxTokens(n int) AgentOption {
	return countOption("WithMaxTokens", n, "means the registry's window", checkWindow,
		func(c *Agent, n int) { c.maxTokens = n })
}

// WithMaxCompactionAttempts bounds how many summaries one model call may
// request when a summary comes back too long for the trigger. Zero means
// DefaultMaxCompactionAttempts; a negative value is an error.
func WithMaxCompactionAttempts(n int) AgentOption {
	return countOption("WithMaxCompactionAttempts", n, fmt.Sprintf("means the default %d", DefaultMaxCompactionAttempts), nil,
		func(c *Agent, n int) { c.maxAttempts = orDefault(n, DefaultMaxCompactionAttempts) })
}

// WithMaxSummarizerCalls bounds the summarizer calls one compaction, and so
// one model call, may make, the pieces of a rolling summary (a span larger
// than the summarizer's window) and the retries of a summary too long
// included. A span that needs more calls has its oldest messages listed by
// the deterministic fallback summary (the user's requests, the tools
// called, the last model message), which the summarizer then reads as the
// summary so far beside the newest messages; should the calls still run
// out, the pieces already summarized are kept and the fallback lists the
// rest. Zero means DefaultMaxSummarizerCalls; a negative value is an error.
func WithMaxSummarizerCalls(n int) AgentOption {
	return countOption("WithMaxSummarizerCalls", n, fmt.Sprintf("means the default %d", DefaultMaxSummarizerCalls), nil,
		func(c *Agent, n int) { c.maxSummarizerCalls = orDefault(n, DefaultMaxSummarizerCalls) })
}

// WithSummarizer replaces the LLM summarizer built from the model given to
// Add (for example with one over a cheaper model, see NewLLMSummarizer).
// A nil summarizer is an error.
func WithSummarizer(s Summarizer) AgentOption {
	return func(c *Agent) {
		if IsNil(s) {
			c.fail(errors.New("WithSummarizer: summarizer is nil"))
			return
		}
		c.summarizer = s
	}
}

// WithSummaryForm sets how the summary is asked for: SummaryFormCached
// (the default) asks for it as the agent's own request plus one
// instruction when the summarizer calls the agent's model and that fits its
// window, which a provider's prompt cache serves at its cached price;
// SummaryFormTranscript always asks with the summary prompt and a
// transcript of the conversation. Any other value is an error.
func WithSummaryForm(f SummaryForm) AgentOption {
	return func(c *Agent) {
		switch f {
		case SummaryFormCached, SummaryFormTranscript:
			c.summaryForm = f
		default:
			c.fail(fmt.Errorf("WithSummaryForm(%q): must be %q or %q", f, SummaryFormCached, SummaryFormTranscript))
		}
	}
}

// WithSummaryTimeout bounds each summarizer call, the default LLM
// summarizer's and a custom one's alike. When it expires the guard stops
// waiting, even for a summarizer or model that ignores its context (the
// abandoned call is left to return on its own), and the deterministic
// fallback summary is used. The summarizer's context is then cancelled,
// with a cause (context.Cause) that wraps context.DeadlineExceeded. The
// time is the guard's clock's (WithClock). It must be positive (0 is an
// error; leave the option out for DefaultSummaryTimeout).
func WithSummaryTimeout(d time.Duration) AgentOption {
	return func(c *Agent) {
		if d <= 0 {
			c.fail(fmt.Errorf("WithSummaryTimeout(%v): must be > 0", d))
			return
		}
		c.summaryTimeout = d
	}
}
