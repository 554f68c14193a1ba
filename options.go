package contextguard

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"google.golang.org/adk/model"
)

// Strategy names how an agent's conversation is compacted.
type Strategy string

const (
	// StrategyThreshold summarizes the whole conversation once the request
	// reaches the trigger (window minus buffer). It is the default.
	StrategyThreshold Strategy = "threshold"
	// StrategySlidingWindow keeps the newest turns verbatim and summarizes the
	// rest, triggered by turn count or by the token trigger.
	StrategySlidingWindow Strategy = "sliding_window"
)

// Defaults, named so the README and the code cannot drift apart.
const (
	// DefaultContextWindow is the window assumed for a model the registry does
	// not know (a warning is logged once per model).
	DefaultContextWindow = 128_000
	// DefaultMaxCompactionAttempts bounds summarizer calls per model call.
	DefaultMaxCompactionAttempts = 3
	// DefaultSlidingWindowTurns is the turn budget used by WithSlidingWindow(0).
	DefaultSlidingWindowTurns = 20
	// DefaultSummaryTimeout bounds one summarizer call; on expiry the
	// deterministic fallback summary is used.
	DefaultSummaryTimeout = 2 * time.Minute

	// largeWindow is where the buffer switches from a fraction to a fixed size
	// (seed 001: windows of 200k and more get a fixed 20k buffer).
	largeWindow = 200_000
	// largeWindowBuffer is the fixed buffer for windows >= largeWindow.
	largeWindowBuffer = 20_000
	// smallWindowBufferFraction is the buffer for windows < largeWindow.
	smallWindowBufferFraction = 0.20
)

// Option configures a ContextGuard.
type Option func(*guardOptions)

type guardOptions struct {
	logger       *slog.Logger
	onCompaction func(context.Context, CompactionEvent)
	errs         []error
}

// WithLogger sets the logger the guard writes to. The default is
// slog.Default(). A nil logger is an error.
func WithLogger(l *slog.Logger) Option {
	return func(o *guardOptions) {
		if l == nil {
			o.errs = append(o.errs, errors.New("contextguard: WithLogger: logger is nil"))
			return
		}
		o.logger = l
	}
}

// WithOnCompaction registers a hook called after every compaction, on the
// goroutine of the model call, with what was done. A nil hook is an error.
func WithOnCompaction(fn func(context.Context, CompactionEvent)) Option {
	return func(o *guardOptions) {
		if fn == nil {
			o.errs = append(o.errs, errors.New("contextguard: WithOnCompaction: hook is nil"))
			return
		}
		o.onCompaction = fn
	}
}

// AgentOption configures one agent registered with Add.
type AgentOption func(*agentConfig)

// agentConfig is the validated configuration of one agent. It is immutable
// once Add returns.
type agentConfig struct {
	name           string
	strategy       Strategy
	maxTurns       int
	maxTokens      int
	maxAttempts    int
	summarizer     Summarizer
	summarizerLLM  model.LLM
	summaryTimeout time.Duration
	errs           []error
}

// WithSlidingWindow selects the sliding-window strategy, keeping at most
// maxTurns turns since the last compaction. Zero means
// DefaultSlidingWindowTurns (as in the earlier guard); a negative value is an
// error.
func WithSlidingWindow(maxTurns int) AgentOption {
	return func(c *agentConfig) {
		switch {
		case maxTurns < 0:
			c.errs = append(c.errs, fmt.Errorf("WithSlidingWindow(%d): maxTurns must be >= 0 (0 means the default %d)", maxTurns, DefaultSlidingWindowTurns))
		case maxTurns == 0:
			c.strategy, c.maxTurns = StrategySlidingWindow, DefaultSlidingWindowTurns
		default:
			c.strategy, c.maxTurns = StrategySlidingWindow, maxTurns
		}
	}
}

// WithMaxTokens overrides the context window the registry reports for the
// agent's model (both strategies). Zero keeps the registry's value; a
// negative value is an error.
func WithMaxTokens(n int) AgentOption {
	return func(c *agentConfig) {
		if n < 0 {
			c.errs = append(c.errs, fmt.Errorf("WithMaxTokens(%d): must be >= 0 (0 means the registry's window)", n))
			return
		}
		c.maxTokens = n
	}
}

// WithMaxCompactionAttempts bounds how many summaries one model call may
// request when a summary comes back too long for the trigger. Zero means
// DefaultMaxCompactionAttempts; a negative value is an error.
func WithMaxCompactionAttempts(n int) AgentOption {
	return func(c *agentConfig) {
		switch {
		case n < 0:
			c.errs = append(c.errs, fmt.Errorf("WithMaxCompactionAttempts(%d): must be >= 0 (0 means the default %d)", n, DefaultMaxCompactionAttempts))
		case n == 0:
			c.maxAttempts = DefaultMaxCompactionAttempts
		default:
			c.maxAttempts = n
		}
	}
}

// WithSummarizer replaces the LLM summarizer built from the model given to
// Add (for example with one over a cheaper model, see NewLLMSummarizer).
// A nil summarizer is an error.
func WithSummarizer(s Summarizer) AgentOption {
	return func(c *agentConfig) {
		if s == nil {
			c.errs = append(c.errs, errors.New("WithSummarizer: summarizer is nil"))
			return
		}
		c.summarizer = s
	}
}

// WithSummaryTimeout bounds each summarizer call. When it expires the
// deterministic fallback summary is used. It must be positive.
func WithSummaryTimeout(d time.Duration) AgentOption {
	return func(c *agentConfig) {
		if d <= 0 {
			c.errs = append(c.errs, fmt.Errorf("WithSummaryTimeout(%v): must be > 0", d))
			return
		}
		c.summaryTimeout = d
	}
}

// newAgentConfig applies opts over the defaults and validates the result.
func newAgentConfig(name string, llm model.LLM, opts []AgentOption) *agentConfig {
	c := &agentConfig{
		name:           name,
		strategy:       StrategyThreshold,
		maxAttempts:    DefaultMaxCompactionAttempts,
		summaryTimeout: DefaultSummaryTimeout,
		summarizerLLM:  llm,
	}
	if name == "" {
		c.errs = append(c.errs, errors.New("agent name is empty"))
	}
	for _, opt := range opts {
		if opt == nil {
			c.errs = append(c.errs, errors.New("nil AgentOption"))
			continue
		}
		opt(c)
	}
	if c.summarizer == nil {
		if llm == nil {
			c.errs = append(c.errs, errors.New("model is nil and no WithSummarizer was given"))
		} else {
			c.summarizer = NewLLMSummarizer(llm)
		}
	}
	for i, err := range c.errs {
		c.errs[i] = fmt.Errorf("contextguard: Add(%q): %w", name, err)
	}
	return c
}

// bufferFor returns the room kept free below the window: a fixed 20k for
// windows of 200k and more, 20% below that (seed 001, boundary inclusive).
func bufferFor(window int) int {
	if window >= largeWindow {
		return largeWindowBuffer
	}
	return int(float64(window) * smallWindowBufferFraction)
}
