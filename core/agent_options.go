package core

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// WithTriggerTokens compacts once the request reaches n tokens, whatever the
// window. n must be positive (0 is an error: leave the option out for the
// default trigger) and below the window known at Add (WithMaxTokens, else
// the registry's for the model given to Add; Plugin reports it). Only one of
// WithTriggerTokens, WithTriggerFraction and WithReserve may be given. At or
// above a window known only at run time, the default trigger is used with a
// warning.
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
// window, as for WithTriggerTokens; only one of the two and
// WithTriggerFraction may be given. A reserve that leaves nothing of a
// window known only at run time falls back to the default trigger with a
// warning.
func WithReserve(n int) AgentOption {
	return positiveOption("WithReserve", n, func(c *Agent, name string) {
		c.setTrigger(triggerSpec{kind: triggerReserve, tokens: n, call: name})
	})
}

func either[V ~string](option string, v, a, b V, set func(*Agent, V)) AgentOption {
	return func(c *Agent) {
		if v != a && v != b {
			c.fail(fmt.Errorf("%s(%q): must be %q or %q", option, v, a, b))
			return
		}
		set(c, v)
	}
}

// positiveOption is an option whose count must be positive; set gets the
// call as written (for example "WithReserve(2000)") for its messages.
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
// tokens from 200k windows, 300 for 3k); a negative value is an error, and
// so is one at or above the window known at Add. A summary is still never
// asked longer than the room under the trigger allows, nor than half of
// what the contents it replaces free.
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

// WithSlidingWindow selects the sliding-window strategy. A turn is a user
// message with text. The guard compacts when more than maxTurns turns were
// added since the last compaction, or at the token trigger. It keeps the
// newest half of maxTurns (rounded up, fewer past half the room under the
// trigger) verbatim, never separating a call from its response, and
// summarizes the previous summary plus the turns before; when even the
// newest turn does not fit, it summarizes everything. A compaction by turns
// waits until what it summarizes weighs at least the summary asked (half
// the buffer, 512 to 2,048 tokens). Zero means DefaultSlidingWindowTurns; a
// negative value is an error. Only one strategy option (WithSlidingWindow,
// WithTailRetention) may be given.
func WithSlidingWindow(maxTurns int) AgentOption {
	return countOption("WithSlidingWindow", maxTurns, fmt.Sprintf("means the default %d", DefaultSlidingWindowTurns), nil,
		func(c *Agent, n int) {
			c.setPolicy(slidingWindow{maxTurns: orDefault(n, DefaultSlidingWindowTurns)}, fmt.Sprintf("WithSlidingWindow(%d)", maxTurns))
		})
}

// WithToolResultPruning replaces the payloads of function responses older
// than the newest keepSteps tool steps (one message of function responses
// each) with a placeholder naming the tool and the size removed, before the
// request is counted, so it can shrink without a summarizer call; either
// strategy. The stored session is untouched: the same history always gives
// the same request. Results under 200 tokens and user text are never
// pruned; pruning advances keepSteps steps at a time, so the request (and
// the prompt cache) changes once every keepSteps steps, and a compaction
// never brings results back. Zero means DefaultPruneKeepSteps; a negative
// value is an error.
func WithToolResultPruning(keepSteps int) AgentOption {
	return countOption("WithToolResultPruning", keepSteps, fmt.Sprintf("means the default %d", DefaultPruneKeepSteps), nil,
		func(c *Agent, n int) { c.pruneKeep = orDefault(n, DefaultPruneKeepSteps) })
}

// WithPruningMinFree sets the least a tool-result pruning pass must free,
// in estimated tokens, to rewrite the history (WithToolResultPruning). A
// pass rewrites the request from its first pruned result, which a prompt
// cache then reads again at the full price, so the frontier advances only
// once that frees at least n tokens; between two passes each request
// extends the one before. Over the trigger, pruning frees all it can
// whatever n is, since a compaction would rewrite more.
//
// Zero, the default, prunes only at the trigger: under it a pass saves only
// what the cache already bills at a tenth, and rewrites at 1.25 times the
// input price (on recorded sessions at 32k, make cost, passes under the
// trigger cost more than none). A positive n suits a provider without a
// prompt cache: 1 advances on every pass. A negative value is an error, and
// so is a value at or above the window when the window is known at Add
// (WithMaxTokens, or the registry's for the model given to Add).
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

// WithMaxSummarizerCalls bounds the summarizer calls of one compaction,
// rolling pieces (a span larger than the summarizer's window) and retries
// included. A span needing more has its oldest messages listed by the
// deterministic fallback summary, which the summarizer reads as the summary
// so far; should the calls still run out, the pieces summarized are kept
// and the fallback lists the rest. Zero means DefaultMaxSummarizerCalls; a
// negative value is an error.
func WithMaxSummarizerCalls(n int) AgentOption {
	return countOption("WithMaxSummarizerCalls", n, fmt.Sprintf("means the default %d", DefaultMaxSummarizerCalls), nil,
		func(c *Agent, n int) { c.maxSummarizerCalls = orDefault(n, DefaultMaxSummarizerCalls) })
}

// WithSummarizer replaces the LLM summarizer built from the model given to
// Add (for example with one over a cheaper model, see NewLLMSummarizer).
// A nil summarizer is an error.
func WithSummarizer(s Summarizer) AgentOption {
	return required("WithSummarizer", "summarizer", s, func(c *Agent, s Summarizer) { c.summarizer = s })
}

// WithSummaryForm sets how the summary is asked for: SummaryFormCached
// (the default) asks for it as the agent's own request plus one
// instruction when the summarizer calls the agent's model and that fits its
// window, which a provider's prompt cache serves at its cached price;
// SummaryFormTranscript always asks with the summary prompt and a
// transcript of the conversation. Any other value is an error.
func WithSummaryForm(f SummaryForm) AgentOption {
	return either("WithSummaryForm", f, SummaryFormCached, SummaryFormTranscript, func(c *Agent, v SummaryForm) { c.summaryForm = v })
}

// WithSummaryTimeout bounds each summarizer call, custom ones included. On
// expiry the guard stops waiting, even for a summarizer that ignores its
// context, uses the fallback summary, and cancels the summarizer's context
// with a cause (context.Cause) wrapping context.DeadlineExceeded. The time
// is WithClock's. It must be positive (0 is an error; leave the option out
// for DefaultSummaryTimeout).
func WithSummaryTimeout(d time.Duration) AgentOption {
	return func(c *Agent) {
		if d <= 0 {
			c.fail(fmt.Errorf("WithSummaryTimeout(%v): must be > 0", d))
			return
		}
		c.summaryTimeout = d
	}
}

// WithTokenCounter makes the guard count with tc instead of its estimator:
// texts, function names, and call arguments, results and tool declarations
// as compact JSON. Media are still counted by the model family's published
// rules, and each message adds the fitted framing cost. Counts are cached
// per content, and no default correction applies before the provider's
// first count. Give tc a stable name (NamedTokenCounter, NameTokenCounter)
// so another process trusts what this one counted; without one, a session's
// first call in each process counts its whole request. A nil counter is an
// error.
func WithTokenCounter(tc TokenCounter) AgentOption {
	return required("WithTokenCounter", "counter", tc, func(c *Agent, tc TokenCounter) {
		c.counter, c.counterSalt = tc, counterSalt(tc)
	})
}

// WithRecoveryModel sets the model that answers when the provider rejects a
// request as too long (a context-overflow error, see AsContextOverflow):
// the guard compacts the failed request to half the window, calibrated with
// the provider's real count, and the adapter sends it to m and returns that
// response instead of the error. A nil model, typed nil included, is an
// error.
func WithRecoveryModel(m HostModel) AgentOption {
	return required("WithRecoveryModel", "model", m, func(c *Agent, m HostModel) { c.recoveryLLM = m })
}

// WithBetweenTurns sets whether the agent's sessions are compacted between
// two runs (BetweenTurnsWhenDue, the default) or only inside the model call
// that needs it (BetweenTurnsOff). Between turns, the compaction runs once
// the run's last event was delivered; its state reaches the next run
// through WithSessionService's service, else the guard's memory of the
// session (lost on eviction or in another process: the next call then
// compacts inline). Any other value is an error.
func WithBetweenTurns(p BetweenTurns) AgentOption {
	return either("WithBetweenTurns", p, BetweenTurnsWhenDue, BetweenTurnsOff, func(c *Agent, v BetweenTurns) { c.betweenTurns = v })
}

// WithTailRetention selects the tail-retention strategy: at the token
// trigger the guard keeps the newest contents verbatim, as many as fit in
// fraction of the context window (and in the room the summary leaves under
// the trigger), never separating a function call from its response, and
// summarizes the previous summary plus everything before them. When the
// kept contents and the summary do not fit under the trigger, it summarizes
// everything, as the threshold strategy does. fraction must be in (0, 1)
// (0 is an error). Only one strategy option (WithSlidingWindow,
// WithTailRetention) may be given.
func WithTailRetention(fraction float64) AgentOption {
	return func(c *Agent) {
		call := fmt.Sprintf("WithTailRetention(%v)", fraction)
		if math.IsNaN(fraction) || fraction <= 0 || fraction >= 1 {
			c.fail(fmt.Errorf("%s: fraction must be > 0 and < 1", call))
			return
		}
		c.setPolicy(tailRetention{fraction: fraction}, call)
	}
}

// WithEarlyCompaction sets how early a summary is prepared while tools run
// (WithPreparedSummaries): once the next request is predicted (this count
// plus the recent growth per step, with a margin) to reach fraction f of
// the trigger. f must be in (0, 1] (0 is an error); the default is
// DefaultEarlyCompaction. A lower f suits tools faster than the summarizer,
// at the cost of a summary covering less: the rest is kept verbatim, and
// the compaction runs inline when that is over the trigger.
func WithEarlyCompaction(f float64) AgentOption {
	return func(c *Agent) {
		if !(f > 0 && f <= 1) {
			c.fail(fmt.Errorf("WithEarlyCompaction(%v): must be in (0, 1]", f))
			return
		}
		c.early = f
	}
}
