package core

import (
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// An agent's configuration: validated once by Add, immutable after, with its
// trigger and limits for a window.

// Agent is the validated configuration of one agent, opaque to adapters
// (Name, RecoveryModel). It is immutable once Add returns.
type Agent struct {
	name string
	// policy is the agent's compaction strategy (compactionStrategy).
	policy    compactionStrategy
	pruneKeep int // newest tool steps kept intact; 0: no pruning
	// pruneMinFree is WithPruningMinFree's minimum, 0 for the default
	// (pruningMinFree).
	pruneMinFree   int
	maxTokens      int
	maxAttempts    int
	summarizer     Summarizer
	summaryTimeout time.Duration
	instructions   string
	// stateKeys are the agent's full state key names (stateKeysFor).
	stateKeys map[string]string
	// summaryTokens is WithSummaryTokens' length, 0 for the default.
	summaryTokens int
	// summarizerWindow is WithSummarizerWindow's window, 0 for the
	// registry's.
	summarizerWindow int
	counter          TokenCounter
	// counterSalt separates counter's counts and prefix records from
	// other counters' (token_counter.go counterSalt).
	counterSalt uint64
	trigger     triggerSpec
	// host is the guard's Host, set when the guard adds the agent.
	host Host
	// recoveryLLM is WithRecoveryModel's model, nil without one.
	recoveryLLM HostModel
	errs        []error

	// maxSummarizerCalls bounds the summarizer calls of one compaction
	// (WithMaxSummarizerCalls).
	maxSummarizerCalls int
	// summaryForm is WithSummaryForm's form (SummaryFormCached by default).
	summaryForm SummaryForm
	// betweenTurns is WithBetweenTurns' policy, "" for the default
	// (between_turns.go).
	betweenTurns BetweenTurns
	// early is WithEarlyCompaction's fraction of the trigger, 0 for the
	// default (prepared_summary.go).
	early float64
}

// triggerKind names the option that set an agent's trigger, as its errors
// say it.
type triggerKind string

// The kinds of trigger: the default buffer rule, and one per option.
const (
	triggerDefault  triggerKind = ""
	triggerTokens   triggerKind = "tokens"   // WithTriggerTokens
	triggerFraction triggerKind = "fraction" // WithTriggerFraction
	triggerReserve  triggerKind = "reserve"  // WithReserve
)

// triggerSpec is how an agent's trigger was configured: the seeds' buffer
// rule by default, or one of WithTriggerTokens, WithTriggerFraction,
// WithReserve.
type triggerSpec struct {
	kind     triggerKind
	tokens   int
	fraction float64
}

func (c *Agent) setTrigger(t triggerSpec, name string) {
	if c.trigger.kind != triggerDefault && c.trigger.kind != t.kind {
		c.errs = append(c.errs, fmt.Errorf("%s: the trigger is already set by a %s option; use only one of WithTriggerTokens, WithTriggerFraction, WithReserve", name, c.trigger.kind))
		return
	}
	c.trigger = t
}

// newAgentConfig applies opts over the defaults and validates the result;
// its errors name the call that configured it (caller, e.g. `Add("a")`).
// def is the summarizer of the model given to the call, used when no
// WithSummarizer is given (nil: no model), and defErr what is wrong with
// that model.
func newAgentConfig(name, caller string, def Summarizer, defErr error, opts []AgentOption) *Agent {
	c := &Agent{
		name:           name,
		policy:         thresholdStrategy{},
		maxAttempts:    DefaultMaxCompactionAttempts,
		summaryTimeout: DefaultSummaryTimeout,
		host:           Host{}.withDefaults(SystemClock()),

		maxSummarizerCalls: DefaultMaxSummarizerCalls,
		summaryForm:        SummaryFormCached,
	}
	if name == "" {
		c.errs = append(c.errs, errors.New("agent name is empty"))
	}
	c.stateKeys = stateKeysFor(name)
	for _, opt := range opts {
		if opt == nil {
			c.errs = append(c.errs, errors.New("nil AgentOption"))
			continue
		}
		opt(c)
	}
	if err := c.triggerFitsMaxTokens(); err != nil {
		c.errs = append(c.errs, err)
	}
	switch {
	case defErr != nil:
		c.errs = append(c.errs, defErr)
	case c.summarizer != nil:
	case def == nil:
		c.errs = append(c.errs, errors.New("model is nil and no WithSummarizer was given"))
	default:
		c.summarizer = def
	}
	for i, err := range c.errs {
		c.errs[i] = fmt.Errorf("contextguard: %s: %w", caller, err)
	}
	return c
}

// stateIO reads and writes the agent's keys, logging to log.
func (c *Agent) stateIO(log *slog.Logger) stateIO {
	return stateIO{agent: c.name, log: log, keys: c.stateKeys, missing: c.host.MissingKey}
}

// limitsFor returns the window, buffer and threshold of an agent for a
// window, applying its trigger option. A trigger that leaves no room is
// replaced by the default one and reported through ok=false.
func (c *Agent) limitsFor(window int) (l limits, ok bool) {
	def := newLimits(window)
	var threshold int
	switch c.trigger.kind {
	case triggerTokens:
		threshold = c.trigger.tokens
	case triggerFraction:
		threshold = int(float64(window) * c.trigger.fraction)
	case triggerReserve:
		threshold = window - c.trigger.tokens
	default:
		return def, true
	}
	if threshold <= 0 || threshold >= window {
		return def, false
	}
	return limits{window: window, buffer: window - threshold, threshold: threshold}, true
}

// triggerFitsMaxTokens rejects a trigger that cannot fit the window
// WithMaxTokens set: WithTriggerTokens at or above it, or WithReserve
// leaving nothing of it. Without WithMaxTokens the window is known only per
// model at run time, where limits falls back to the default trigger with a
// warning.
func (c *Agent) triggerFitsMaxTokens() error {
	if c.maxTokens <= 0 {
		return nil
	}
	if _, ok := c.limitsFor(c.maxTokens); ok {
		return nil
	}
	switch c.trigger.kind {
	case triggerTokens:
		return fmt.Errorf("WithTriggerTokens(%d) is not below WithMaxTokens(%d): the trigger must be inside the window", c.trigger.tokens, c.maxTokens)
	case triggerReserve:
		return fmt.Errorf("WithReserve(%d) is not below WithMaxTokens(%d): the reserve must leave part of the window", c.trigger.tokens, c.maxTokens)
	}
	return nil
}

// bufferFor returns the room kept free below the window: a fixed 20k for
// windows of 200k and more, 20% below that (ARCHITECTURE.md, Origins; boundary inclusive).
func bufferFor(window int) int {
	if window >= largeWindow {
		return largeWindowBuffer
	}
	return int(float64(window) * smallWindowBufferFraction)
}
