package core

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/adk-contextguard/contextguard/core/internal/estimate"
	"github.com/adk-contextguard/contextguard/core/internal/state"
	"github.com/adk-contextguard/contextguard/core/internal/tokens"
	"github.com/adk-contextguard/contextguard/core/internal/window"
)

// An agent's configuration: validated once by Add, immutable after.

// Defaults of an agent's options.
const (
	// DefaultMaxCompactionAttempts bounds summarizer calls per model call.
	DefaultMaxCompactionAttempts = 3
	// DefaultMaxSummarizerCalls bounds the summarizer calls of one
	// compaction, a rolling summary's pieces included, so that at about 5 s
	// a call a model call waits under a minute. A span that needs more is
	// summarized from its newest part, the oldest listed mechanically.
	DefaultMaxSummarizerCalls = 10
	// DefaultSlidingWindowTurns is the turn budget used by WithSlidingWindow(0).
	DefaultSlidingWindowTurns = 20
	// DefaultPruneKeepSteps is how many of the newest tool steps
	// WithToolResultPruning(0) leaves intact: enough for a read -> edit ->
	// test chain to see its own outputs; older results are usually digested
	// into the model's own messages already.
	DefaultPruneKeepSteps = 3
	// DefaultSummaryTimeout bounds one summarizer call; on expiry the
	// deterministic fallback summary is used.
	DefaultSummaryTimeout = 2 * time.Minute
	// DefaultContextWindow is the window assumed for a model the registry
	// does not know (a warning is logged once per model).
	DefaultContextWindow = window.Default
)

// Agent is the validated configuration of one agent, opaque to adapters
// (Name, RecoveryModel). It is immutable once Add returns.
type Agent struct {
	name string
	// Each field below is its option's value; 0 or "" means the default.
	policy             compactionStrategy
	policyCall         string // the option that chose policy, as written
	pruneKeep          int    // newest tool steps kept intact; 0: no pruning
	pruneMinFree       int
	maxTokens          int
	maxAttempts        int
	maxSummarizerCalls int
	summarizer         Summarizer
	summaryTimeout     time.Duration
	summaryTokens      int
	summarizerWindow   int
	summaryForm        SummaryForm
	instructions       string
	counter            TokenCounter
	counterSalt        uint64 // keeps counter's counts apart (counterSalt)
	trigger            triggerSpec
	recoveryLLM        HostModel
	betweenTurns       BetweenTurns
	early              float64 // WithEarlyCompaction's share of the trigger
	// stateKeys are the agent's full state key names (stateKeysFor).
	stateKeys map[string]string
	host      Host // the guard's, set when the guard adds the agent
	errs      []error
}

// AgentOption configures one agent registered with Add.
type AgentOption func(*Agent)

// BetweenTurns says whether an agent's sessions are compacted between two
// runs (WithBetweenTurns).
type BetweenTurns string

// The policies of WithBetweenTurns.
const (
	// BetweenTurnsWhenDue compacts, once a run has ended, a session whose
	// next turn would probably reach the trigger, or whose sliding-window
	// turn budget the next turn spends. It is the default.
	BetweenTurnsWhenDue BetweenTurns = "when_due"
	// BetweenTurnsOff never compacts between runs: every compaction runs in
	// the model call that needs it.
	BetweenTurnsOff BetweenTurns = "off"
)

// triggerKind names the option that set an agent's trigger.
type triggerKind string

const (
	triggerDefault  triggerKind = ""
	triggerTokens   triggerKind = "tokens"   // WithTriggerTokens
	triggerFraction triggerKind = "fraction" // WithTriggerFraction
	triggerReserve  triggerKind = "reserve"  // WithReserve
)

// triggerSpec is how an agent's trigger was configured.
type triggerSpec struct {
	kind     triggerKind
	tokens   int
	fraction float64
	// call is the option as written, e.g. "WithReserve(2000)", for errors.
	call string
}

// fail records an option's error, reported by Plugin.
func (c *Agent) fail(err error) { c.errs = append(c.errs, err) }

// setTrigger applies a trigger option: one of another kind is an error, as
// both cannot be met; the same option given again replaces the first.
func (c *Agent) setTrigger(t triggerSpec) {
	if c.trigger.kind != triggerDefault && c.trigger.kind != t.kind {
		c.fail(fmt.Errorf("%s: the trigger is already set by %s; use only one of WithTriggerTokens, WithTriggerFraction, WithReserve", t.call, c.trigger.call))
		return
	}
	c.trigger = t
}

// setPolicy applies a strategy option (call, as written), with setTrigger's
// rule for a second one.
func (c *Agent) setPolicy(p compactionStrategy, call string) {
	if c.policyCall != "" && c.policy.name() != p.name() {
		c.fail(fmt.Errorf("%s: the strategy is already set by %s; use only one of WithSlidingWindow, WithTailRetention", call, c.policyCall))
		return
	}
	c.policy, c.policyCall = p, call
}

// newAgentConfig applies opts over the defaults and validates the result;
// its errors name caller, e.g. `Add("a")`. def is the model's summarizer,
// used without WithSummarizer (nil: no model), defErr what is wrong with it.
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
		c.fail(errors.New("agent name is empty"))
	}
	c.stateKeys = stateKeysFor(name)
	for _, opt := range opts {
		if opt == nil {
			c.fail(errors.New("nil AgentOption"))
			continue
		}
		opt(c)
	}
	if c.maxTokens > 0 {
		if err := c.fitsWindow(c.maxTokens, fmt.Sprintf("WithMaxTokens(%d)", c.maxTokens)); err != nil {
			c.fail(err)
		}
	}
	switch {
	case defErr != nil:
		c.fail(defErr)
	case c.summarizer != nil:
	case def == nil:
		c.fail(errors.New("model is nil and no WithSummarizer was given"))
	default:
		c.summarizer = def
	}
	for i, err := range c.errs {
		c.errs[i] = fmt.Errorf("contextguard: %s: %w", caller, err)
	}
	return c
}

// stateIO reads and writes the agent's keys, logging to log.
func (c *Agent) stateIO(log *slog.Logger) state.IO {
	return state.IO{Agent: c.name, Log: log, Keys: c.stateKeys, Missing: c.host.MissingKey}
}

// limitsFor returns the window, buffer and threshold of an agent for a
// window, applying its trigger option. A trigger that leaves no room is
// replaced by the default one and reported through ok=false.
func (c *Agent) limitsFor(win int) (l window.Limits, ok bool) {
	def := window.New(win)
	var threshold int
	switch c.trigger.kind {
	case triggerTokens:
		threshold = c.trigger.tokens
	case triggerFraction:
		threshold = int(float64(win) * c.trigger.fraction)
	case triggerReserve:
		threshold = win - c.trigger.tokens
	default:
		return def, true
	}
	if threshold <= 0 || threshold >= win {
		return def, false
	}
	return window.Limits{Window: win, Buffer: win - threshold, Threshold: threshold}, true
}

// fitsWindow checks the options that must fit inside window (named as name
// says, "WithMaxTokens(8000)"), which run time would otherwise replace.
func (c *Agent) fitsWindow(window int, name string) error {
	var errs []error
	if _, ok := c.limitsFor(window); !ok {
		switch c.trigger.kind {
		case triggerTokens:
			errs = append(errs, fmt.Errorf("%s is not below %s: the trigger must be inside the window", c.trigger.call, name))
		case triggerReserve:
			errs = append(errs, fmt.Errorf("%s is not below %s: the reserve must leave part of the window", c.trigger.call, name))
		}
	}
	if c.pruneMinFree >= window {
		errs = append(errs, fmt.Errorf("WithPruningMinFree(%d) is not below %s: no pruning pass can free a whole window", c.pruneMinFree, name))
	}
	if c.summaryTokens >= window {
		errs = append(errs, fmt.Errorf("WithSummaryTokens(%d) is not below %s: the summary must fit inside the window", c.summaryTokens, name))
	}
	return errors.Join(errs...)
}

// agentKeyNames are the per-agent keys, suffixed with the agent's name.
var agentKeyNames = []string{
	state.KeySummary, state.KeyWatermark, state.KeySummarizedAt, state.KeyRealTokens, state.KeyLastEstimate, state.KeyFingerprint,
	state.KeyUserRequest, state.KeyCompactions, state.KeyIrreducibleFloor, state.KeyProviderRatio, state.KeySuspectRatio, state.KeyWindow,
	state.KeyCompactNext, state.KeyMaxOutput, state.KeyLastTokens, state.KeyThreshold, state.KeyCompactedAt, state.KeyCompactReason, state.KeyCompactRequest, keyPrefix,
	state.KeyAnchor, state.KeyPruneFrontier, state.KeyPrefixKept, state.KeyInvalidated, state.KeyCachedTokens,
}

// stateKeysFor maps each per-agent key to its full name for agent, once per
// configuration so that no call builds key strings.
func stateKeysFor(agent string) map[string]string {
	m := make(map[string]string, len(agentKeyNames))
	for _, k := range agentKeyNames {
		m[k] = k + agent
	}
	return m
}

// windows finds an agent's window and limits for a model from the registry,
// warning once per unknown model and once per trigger that does not fit.
type windows struct {
	registry      ModelRegistry
	log           *slog.Logger
	unknownModels sync.Map
	triggerWarned sync.Map // agent+window -> bool
}

// checkModelWindow checks cfg's options against the registry's window for
// the model given to Add (caller) when WithMaxTokens is not given, so that
// Plugin reports them rather than a warning at run time.
func (w *windows) checkModelWindow(cfg *Agent, caller string, model Summarizer) *Agent {
	if cfg.maxTokens > 0 || len(cfg.errs) > 0 {
		return cfg
	}
	namer, ok := model.(ModelNamer)
	if !ok {
		return cfg
	}
	name, ok := namer.ModelName()
	if !ok {
		return cfg
	}
	n := w.registry.ContextWindow(name)
	if n <= 0 {
		return cfg
	}
	if err := cfg.fitsWindow(n, fmt.Sprintf("the registry's window of %d tokens for model %q (set WithMaxTokens when the agent's model is another)", n, name)); err != nil {
		cfg.errs = append(cfg.errs, fmt.Errorf("contextguard: %s: %w", caller, err))
	}
	return cfg
}

// window is the agent's context window: WithMaxTokens, else the
// registry's; a model the registry does not know gets
// DefaultContextWindow, with a warning once per model name.
func (w *windows) window(cfg *Agent, modelName string) int {
	if cfg.maxTokens > 0 {
		return cfg.maxTokens
	}
	if n := w.registry.ContextWindow(modelName); n > 0 {
		return n
	}
	if _, seen := w.unknownModels.LoadOrStore(modelName, struct{}{}); !seen {
		w.log.Warn("contextguard: unknown model; assuming the default context window (set WithMaxTokens to override)",
			"model", modelName, "window", DefaultContextWindow)
	}
	return DefaultContextWindow
}

// summarizerWindow is the window of the model that writes cfg's summaries:
// WithSummarizerWindow's, else win (the agent's) for the same model or a custom
// Summarizer, else the registry's, else DefaultContextWindow with a warning
// once per agent and model.
func (w *windows) summarizerWindow(cfg *Agent, model string, win int, log *slog.Logger) int {
	if cfg.summarizerWindow > 0 {
		return cfg.summarizerWindow
	}
	s, ok := cfg.summarizer.(ModelNamer)
	if !ok {
		return win
	}
	name, ok := s.ModelName()
	if !ok || name == model {
		return win
	}
	if n := w.registry.ContextWindow(name); n > 0 {
		return n
	}
	if _, seen := w.triggerWarned.LoadOrStore("summarizer\x00"+cfg.name+"\x00"+name, true); !seen {
		log.Warn("contextguard: the summarizer's model is unknown; assuming the default context window for it (set WithSummarizerWindow to override)",
			"summarizer_model", name, "window", DefaultContextWindow)
	}
	return DefaultContextWindow
}

// limits applies the agent's trigger to its window, warning once per agent and
// window when the configured trigger does not fit.
func (w *windows) limits(cfg *Agent, modelName string) window.Limits {
	win := w.window(cfg, modelName)
	l, ok := cfg.limitsFor(win)
	if !ok {
		if _, seen := w.triggerWarned.LoadOrStore(cfg.name+"\x00"+strconv.Itoa(win), true); !seen {
			w.log.Warn("contextguard: the configured trigger does not fit the window; using the default trigger",
				"agent", cfg.name, "window", win, "threshold", l.Threshold)
		}
	}
	return l
}

// requestLimits is limits for one request, keeping room for its
// MaxOutputTokens (window.Limits.WithOutput) unless that leaves the prompt too
// little, which is warned once per agent, window and output limit.
func (w *windows) requestLimits(cfg *Agent, req *Request) window.Limits {
	l := w.limits(cfg, req.Model)
	out := window.MaxOutput(req.Config)
	if out == 0 {
		return l
	}
	lo, ok := l.WithOutput(out)
	if !ok {
		if _, seen := w.triggerWarned.LoadOrStore("output\x00"+cfg.name+"\x00"+strconv.Itoa(l.Window)+"\x00"+strconv.Itoa(out), true); !seen {
			w.log.Warn("contextguard: the request's MaxOutputTokens leaves too little of the window for the prompt; not keeping room for the output",
				"agent", cfg.name, "window", l.Window, "max_output_tokens", out, "threshold", l.Threshold)
		}
	}
	return lo
}

// estimator returns the agent's token estimator for a model and the salt
// that keeps its cached counts apart from other estimators'.
func (c *Agent) estimator(model string) (estimate.Estimator, uint64) {
	if c.counter != nil {
		return counterEstimator{tc: c.counter, media: tokens.ForModel(model)}, c.counterSalt ^ estimatorSalt(model)
	}
	return estimatorFor(model), estimatorSalt(model)
}
