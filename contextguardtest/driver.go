package contextguardtest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/plugin"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool"
	"google.golang.org/genai"
)

// RunConfig wires a guard and its environment into [Run].
type RunConfig struct {
	// Counter is the ground truth. Default: SeedCounter(scenario.TokenRatio),
	// switching to LateTokenRatio from UsageFromTurn when set.
	Counter Counter
	// Plugins are the plugins under test (the guard), as the guard's
	// PluginConfig() returns them. The driver installs its own observer
	// plugin before them. Empty means no guard.
	Plugins runner.PluginConfig
	// Summarizer is the guard's summarizer, if it is a [SummarizerModel], so
	// the result can count its calls.
	Summarizer *SummarizerModel
	// SessionService stores the session (default: in-memory).
	SessionService session.Service
	// AgentName, AppName, UserID and SessionID name the agent and session
	// (defaults "assistant", "contextguardtest", "user" and
	// "session-<scenario>").
	AgentName, AppName, UserID, SessionID string
	// OnRequest, if set, is called with every request the model receives
	// (step is its index in Result.Requests). It must not modify req.
	OnRequest func(step int, req *model.LLMRequest)
	// MaxStepsPerTurn stops a turn that makes more model calls than this
	// (default: 4 x the plan's steps + 8), so a looping guard cannot hang a
	// run; the turn gets [ErrStepLimit].
	MaxStepsPerTurn int
	// ReportUsage, if set, replaces the prompt-token count the model reports
	// for a request (see [ScriptConfig.ReportUsage]), to play a provider or
	// adapter whose usage metadata is wrong.
	ReportUsage func(index, tokens int) int
}

// ErrStepLimit is recorded in Result.Errors when a turn exceeded
// RunConfig.MaxStepsPerTurn.
var ErrStepLimit = errors.New("contextguardtest: too many model calls in one turn")

// Result is what [Run] measured.
//
// Effective input: for the request of step k, effectiveInput(k) = tokens sent
// at step k-1 + ground-truth tokens of the contents ADK appended since step
// k-1 (raw(k)[len(raw(k-1)):], computed as raw(k) - raw(k-1) since counters
// are additive); for the first step it is the raw request. It
// is what the request would weigh had the guard done nothing new at step k.
// A compaction step is a step during whose BeforeModel phase the summarizer
// was called; it is non-shrinking if the request sent is not smaller than the
// effective input (a compaction loop). Utilization at trigger is
// effectiveInput/Window at compaction steps.
type Result struct {
	Scenario string // FullName of the scenario
	Window   int    // the model's window
	Turns    int    // user turns played
	Steps    int    // model requests received

	SummarizerCalls         int // total calls on RunConfig.Summarizer during the run
	CompactionSteps         int // steps with >= 1 summarizer call before the model call
	NonShrinkingCompactions int // compaction steps whose output >= effective input

	MaxRealTokens            int       // largest ground-truth request the model received
	MaxUtilization           float64   // MaxRealTokens / Window
	UtilizationAtTrigger     []float64 // effectiveInput/Window at each compaction step
	MeanUtilizationAtTrigger float64   // mean of UtilizationAtTrigger (0 if none)

	OverflowsRejected  int // requests the model rejected as too long
	OverflowsSurfaced  int // overflow errors that reached the caller of the runner
	OverflowsRecovered int // rejected but not surfaced (recovered by the guard)

	PairViolations    int // requests failing [CheckPairs]
	MissingLatestUser int // requests without the marker of the user's latest message
	// LostMarkers is the number of distinct markers of a raw request (as ADK
	// built it) found neither in the request the model received nor in the
	// input of any summarizer call made up to it: content dropped without
	// being summarized. Measured only when RunConfig.Summarizer is set.
	LostMarkers int

	Requests []RequestRecord // one per model request, in order
	Errors   []error         // errors surfaced by the runner, per turn
	Duration time.Duration
}

// String returns a one-line summary.
func (r *Result) String() string {
	return fmt.Sprintf("%s: turns=%d steps=%d summarizer=%d compactions=%d nonShrinking=%d maxReal=%d/%d (%.1f%%) trigger=%.1f%% overflows rejected=%d surfaced=%d recovered=%d pairViolations=%d missingUser=%d lostMarkers=%d errors=%d in %s",
		r.Scenario, r.Turns, r.Steps, r.SummarizerCalls, r.CompactionSteps, r.NonShrinkingCompactions,
		r.MaxRealTokens, r.Window, 100*r.MaxUtilization, 100*r.MeanUtilizationAtTrigger,
		r.OverflowsRejected, r.OverflowsSurfaced, r.OverflowsRecovered, r.PairViolations, r.MissingLatestUser,
		r.LostMarkers, len(r.Errors), r.Duration.Round(time.Millisecond))
}

// phasedCounter is a seed counter whose ratio switches once.
type phasedCounter struct {
	early, late Counter
	switched    atomic.Bool
}

// CountRequest counts with the early ratio until the switch, then the late one.
func (p *phasedCounter) CountRequest(req *model.LLMRequest) int {
	if p.switched.Load() {
		return p.late.CountRequest(req)
	}
	return p.early.CountRequest(req)
}

type pendingStep struct {
	rawContents int
	rawTokens   int
	calls       int
	rawMarkers  []string
}

// driver holds the observation state of one run.
type driver struct {
	counter    Counter
	summarizer *SummarizerModel
	onRequest  func(int, *model.LLMRequest)

	mu            sync.Mutex
	pending       *pendingStep
	prevRaw       int // number of raw contents at the previous step, -1 before the first
	prevSent      int
	prevRawTokens int
	latestMarker  string
	records       []RequestRecord
}

func (d *driver) summarizerCalls() int {
	if d.summarizer == nil {
		return 0
	}
	return d.summarizer.Calls()
}

// beforeModel is the observer plugin's callback; it runs before the guard's.
func (d *driver) beforeModel(_ agent.CallbackContext, req *model.LLMRequest) (*model.LLMResponse, error) {
	if req == nil {
		return nil, nil
	}
	p := &pendingStep{rawContents: len(req.Contents), calls: d.summarizerCalls()}
	p.rawTokens = d.counter.CountRequest(req)
	if d.summarizer != nil {
		p.rawMarkers = requestMarkers(req.Contents)
	}
	d.mu.Lock()
	d.pending = p
	d.mu.Unlock()
	return nil, nil
}

// observe is called by the model with the record of each request.
func (d *driver) observe(rec *RequestRecord, req *model.LLMRequest) {
	d.mu.Lock()
	p := d.pending
	d.pending = nil
	prevRaw, prevSent, prevRawTokens := d.prevRaw, d.prevSent, d.prevRawTokens
	rec.LatestUser = d.latestMarker
	d.mu.Unlock()

	rec.RawTokens, rec.RawContents, rec.EffectiveInput = -1, -1, -1
	if p != nil {
		rec.RawTokens, rec.RawContents = p.rawTokens, p.rawContents
		rec.SummarizerCalls = d.summarizerCalls() - p.calls
		if prevRaw >= 0 {
			// Counters are additive over contents, so raw(k) - raw(k-1) is
			// the count of raw(k)[len(raw(k-1)):], without rounding drift.
			rec.EffectiveInput = prevSent + p.rawTokens - prevRawTokens
		} else {
			rec.EffectiveInput = p.rawTokens
		}
		rec.Compaction = rec.SummarizerCalls > 0
		rec.NonShrinking = rec.Compaction && rec.Tokens >= rec.EffectiveInput
	}
	rec.HasLatestUser = rec.LatestUser == "" || rec.HasMarker(rec.LatestUser)
	if p != nil && d.summarizer != nil {
		rec.RawMarkers = p.rawMarkers
		rec.LostMarkers = d.lostMarkers(rec)
	}

	d.mu.Lock()
	if p != nil {
		d.prevRaw, d.prevSent, d.prevRawTokens = p.rawContents, rec.Tokens, p.rawTokens
	}
	step := len(d.records)
	d.records = append(d.records, *rec)
	d.mu.Unlock()
	if d.onRequest != nil {
		d.onRequest(step, req)
	}
}

// lostMarkers returns the markers of rec's raw request that are neither in
// the request the model received nor in the input of any summarizer call
// made so far: content the guard dropped without summarizing.
func (d *driver) lostMarkers(rec *RequestRecord) []string {
	var lost []string
	for _, m := range rec.RawMarkers {
		if !rec.HasMarker(m) {
			lost = append(lost, m)
		}
	}
	if len(lost) == 0 {
		return nil
	}
	// A call still measuring its input has no markers yet; it is read
	// again at the next request.
	summarized := map[string]bool{}
	for _, c := range d.summarizer.Records() {
		for _, m := range c.Markers {
			summarized[m] = true
		}
	}
	lost = slices.DeleteFunc(lost, func(m string) bool { return summarized[m] })
	return lost
}

func (d *driver) steps() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.records)
}

// toolNames returns the tools the scenario's plans call, in order.
func toolNames(sc Scenario) []string {
	var names []string
	seen := map[string]bool{}
	for t := range sc.Turns {
		for _, st := range sc.TurnPlan(t).Steps {
			for _, c := range st.Calls {
				if !seen[c.Name] {
					seen[c.Name] = true
					names = append(names, c.Name)
				}
			}
		}
	}
	return names
}

// buildTools returns the scenario's fake tools: its MCP-like declarations and
// a DataTool for every other tool its plans call.
func buildTools(sc Scenario) ([]tool.Tool, error) {
	tools := MCPTools(sc.ToolDefs, sc.ToolDefSchemaSize, sc.Seed)
	have := map[string]bool{}
	for _, t := range tools {
		have[t.Name()] = true
	}
	for _, n := range toolNames(sc) {
		if have[n] {
			continue
		}
		if strings.HasPrefix(n, "mcp_") {
			return nil, fmt.Errorf("contextguardtest: scenario %s calls %q but declares only %d MCP tools", sc.FullName(), n, sc.ToolDefs)
		}
		t, err := DataTool(n, "")
		if err != nil {
			return nil, err
		}
		have[n] = true
		tools = append(tools, t)
	}
	return tools, nil
}

// userContent builds the user message of a turn.
func userContent(sc Scenario, turn int, plan TurnPlan) (*genai.Content, string) {
	seed := mix(sc.Seed, int64(turn), 0x75736572)
	marker := Marker(seed)
	head := UserMessage(turn, marker, "")
	text := head + Generate(KindProseEnglish, max(plan.UserTextSize-len(head), 1), seed)
	c := &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: text}}}
	for i, size := range plan.Images {
		c.Parts = append(c.Parts, &genai.Part{InlineData: &genai.Blob{MIMEType: "image/png", Data: PNGOfSize(size, mix(seed, int64(i), 0x706e67))}})
	}
	for i, size := range plan.Documents {
		c.Parts = append(c.Parts, &genai.Part{InlineData: &genai.Blob{MIMEType: "application/pdf", Data: PDF(size, mix(seed, int64(i), 0x706466))}})
	}
	return c, marker
}

// Run plays sc through a real runner.Runner and llmagent with cfg.Plugins
// installed, and measures the run. The model is a [ScriptedModel] whose
// window is sc.Window; tools are the scenario's fake tools. Each user turn is
// sent with runner.Run; an error surfaced by the runner is recorded (counted
// as an overflow if [IsOverflowError]) and the next turn is played. Run
// returns an error only if the setup fails or ctx ends.
func Run(ctx context.Context, sc Scenario, cfg RunConfig) (*Result, error) {
	start := time.Now()
	if sc.Turns < 0 || sc.Window < 0 {
		return nil, fmt.Errorf("contextguardtest: scenario %s: negative turns or window", sc.FullName())
	}
	counter := cfg.Counter
	var phased *phasedCounter
	if counter == nil {
		counter = SeedCounter(sc.TokenRatio)
		if sc.LateTokenRatio > 0 {
			phased = &phasedCounter{early: counter, late: SeedCounter(sc.LateTokenRatio)}
			counter = phased
		}
	}
	if cfg.AgentName == "" {
		cfg.AgentName = "assistant"
	}
	if cfg.AppName == "" {
		cfg.AppName = "contextguardtest"
	}
	if cfg.UserID == "" {
		cfg.UserID = "user"
	}
	if cfg.SessionID == "" {
		cfg.SessionID = "session-" + sc.FullName()
	}
	if cfg.SessionService == nil {
		cfg.SessionService = session.InMemoryService()
	}

	d := &driver{counter: counter, summarizer: cfg.Summarizer, onRequest: cfg.OnRequest, prevRaw: -1}
	m := NewScriptedModel(ScriptConfig{
		Window:          sc.Window,
		Counter:         counter,
		Plan:            sc.TurnPlan,
		NoUsage:         sc.NoUsageMetadata,
		UsageFromTurn:   sc.UsageFromTurn,
		ErrorStyle:      sc.ErrorStyle,
		ProviderCallIDs: sc.ProviderCallIDs,
		Seed:            sc.Seed,
		ReportUsage:     cfg.ReportUsage,
	})
	m.observe = d.observe

	tools, err := buildTools(sc)
	if err != nil {
		return nil, err
	}
	instruction := "You are an operations assistant. Use the tools to investigate and answer precisely."
	if sc.SystemPromptSize > 0 {
		instruction = Generate(KindProseEnglish, sc.SystemPromptSize, mix(sc.Seed, 0x737973))
	}
	ag, err := llmagent.New(llmagent.Config{
		Name:        cfg.AgentName,
		Description: "scripted agent for " + sc.FullName(),
		Model:       m,
		InstructionProvider: func(agent.ReadonlyContext) (string, error) {
			return instruction, nil
		},
		Tools: tools,
	})
	if err != nil {
		return nil, fmt.Errorf("contextguardtest: agent: %w", err)
	}
	observer, err := plugin.New(plugin.Config{Name: "contextguardtest-observer", BeforeModelCallback: d.beforeModel})
	if err != nil {
		return nil, fmt.Errorf("contextguardtest: observer plugin: %w", err)
	}
	plugins := runner.PluginConfig{
		Plugins:      append([]*plugin.Plugin{observer}, cfg.Plugins.Plugins...),
		CloseTimeout: cfg.Plugins.CloseTimeout,
	}
	r, err := runner.New(runner.Config{
		AppName:        cfg.AppName,
		Agent:          ag,
		SessionService: cfg.SessionService,
		PluginConfig:   plugins,
	})
	if err != nil {
		return nil, fmt.Errorf("contextguardtest: runner: %w", err)
	}
	if _, err := cfg.SessionService.Create(ctx, &session.CreateRequest{AppName: cfg.AppName, UserID: cfg.UserID, SessionID: cfg.SessionID}); err != nil {
		return nil, fmt.Errorf("contextguardtest: create session: %w", err)
	}

	res := &Result{Scenario: sc.FullName(), Window: sc.Window}
	summarizerStart := d.summarizerCalls()
	runCfg := agent.RunConfig{}
	if sc.Streaming {
		runCfg.StreamingMode = agent.StreamingModeSSE
	}
	for turn := range sc.Turns {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("contextguardtest: %s turn %d: %w", sc.FullName(), turn, err)
		}
		if phased != nil && turn >= sc.UsageFromTurn {
			phased.switched.Store(true)
		}
		plan := sc.TurnPlan(turn)
		msg, marker := userContent(sc, turn, plan)
		d.mu.Lock()
		d.latestMarker = marker
		d.mu.Unlock()
		limit := cfg.MaxStepsPerTurn
		if limit <= 0 {
			limit = 4*len(plan.Steps) + 8
		}
		first := d.steps()
		for _, err := range r.Run(ctx, cfg.UserID, cfg.SessionID, msg, runCfg) {
			if err != nil {
				res.Errors = append(res.Errors, fmt.Errorf("turn %d: %w", turn, err))
				if IsOverflowError(err) {
					res.OverflowsSurfaced++
				}
			}
			if d.steps()-first > limit {
				res.Errors = append(res.Errors, fmt.Errorf("turn %d: %w (%d)", turn, ErrStepLimit, limit))
				break
			}
		}
		res.Turns++
	}

	d.mu.Lock()
	res.Requests = slices.Clone(d.records)
	d.mu.Unlock()
	res.SummarizerCalls = d.summarizerCalls() - summarizerStart
	res.finish()
	res.Duration = time.Since(start)
	return res, nil
}

// finish derives the aggregate fields from Requests.
func (r *Result) finish() {
	r.Steps = len(r.Requests)
	var sum float64
	lost := map[string]bool{}
	for _, rec := range r.Requests {
		r.MaxRealTokens = max(r.MaxRealTokens, rec.Tokens)
		if rec.Rejected {
			r.OverflowsRejected++
		}
		if rec.Compaction {
			r.CompactionSteps++
			if rec.NonShrinking {
				r.NonShrinkingCompactions++
			}
			if r.Window > 0 {
				u := float64(rec.EffectiveInput) / float64(r.Window)
				r.UtilizationAtTrigger = append(r.UtilizationAtTrigger, u)
				sum += u
			}
		}
		if rec.PairError != nil {
			r.PairViolations++
		}
		if !rec.HasLatestUser {
			r.MissingLatestUser++
		}
		for _, m := range rec.LostMarkers {
			if !lost[m] {
				lost[m] = true
				r.LostMarkers++
			}
		}
	}
	if r.Window > 0 {
		r.MaxUtilization = float64(r.MaxRealTokens) / float64(r.Window)
	}
	if n := len(r.UtilizationAtTrigger); n > 0 {
		r.MeanUtilizationAtTrigger = sum / float64(n)
	}
	r.OverflowsRecovered = max(r.OverflowsRejected-r.OverflowsSurfaced, 0)
}
