package contextguardtest

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/adk-contextguard/contextguard/core/coretest"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/plugin"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool"
)

// The driver: Run plays a scenario through ADK v1's real runner and measures
// every request.

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
	// Tools are given to the agent besides the scenario's fake tools: the
	// guard's recall tool, or a test's own, which the plans call with
	// [CallWith]. A plan's call to one of them is answered by it, not by a
	// [DataTool].
	Tools []tool.Tool
}

// driver is the ADK v1 glue of one run's [coretest.Meter].
type driver struct {
	meter     *coretest.Meter
	onRequest func(int, *model.LLMRequest)
}

// beforeModel is the observer plugin's callback; it runs before the guard's.
func (d *driver) beforeModel(_ agent.CallbackContext, req *model.LLMRequest) (*model.LLMResponse, error) {
	if req != nil {
		d.meter.Raw(req.Contents, req.Config)
	}
	return nil, nil
}

// observe is called by the model with the record of each request.
func (d *driver) observe(rec *coretest.RequestRecord, req *model.LLMRequest) {
	step := d.meter.Observe(rec)
	if d.onRequest != nil {
		d.onRequest(step, req)
	}
}

// buildTools returns the agent's tools: the scenario's MCP-like
// declarations, the tools given (own), and a DataTool for every other tool
// its plans call.
func buildTools(sc Scenario, own []tool.Tool) ([]tool.Tool, error) {
	names, err := coretest.DataToolNames(sc)
	if err != nil {
		return nil, fmt.Errorf("build tools: %w", err)
	}
	given := map[string]bool{}
	for _, t := range own {
		given[t.Name()] = true
	}
	names = slices.DeleteFunc(names, func(n string) bool { return given[n] })
	tools := mcpTools(sc.ToolDefs, sc.ToolDefSchemaSize, sc.Seed)
	data, err := Tools(names...)
	if err != nil {
		return nil, err
	}
	return append(append(tools, own...), data...), nil
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
	counter := toKit(cfg.Counter)
	var phased *coretest.PhasedCounter
	if counter == nil {
		counter, phased = coretest.ScenarioCounter(sc)
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

	d := &driver{meter: coretest.NewMeter(counter, cfg.Summarizer.kit()), onRequest: cfg.OnRequest}
	m := NewScriptedModel(ScriptConfig{
		Window:          sc.Window,
		Counter:         fromKit(counter),
		Plan:            sc.TurnPlan,
		NoUsage:         sc.NoUsageMetadata,
		UsageFromTurn:   sc.UsageFromTurn,
		ErrorStyle:      sc.ErrorStyle,
		ProviderCallIDs: sc.ProviderCallIDs,
		Seed:            sc.Seed,
		ReportUsage:     cfg.ReportUsage,
	})
	m.observe = d.observe

	tools, err := buildTools(sc, cfg.Tools)
	if err != nil {
		return nil, err
	}
	instruction := coretest.Instruction(sc)
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
	summarizerStart := d.meter.SummarizerCalls()
	runCfg := agent.RunConfig{}
	if sc.Streaming {
		runCfg.StreamingMode = agent.StreamingModeSSE
	}
	for turn := range sc.Turns {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("contextguardtest: %s turn %d: %w", sc.FullName(), turn, err)
		}
		if phased != nil && turn >= sc.UsageFromTurn {
			phased.Switch()
		}
		plan := sc.TurnPlan(turn)
		msg, marker := coretest.UserContent(sc, turn, plan)
		d.meter.SetLatestUser(marker)
		limit := coretest.StepLimit(plan, cfg.MaxStepsPerTurn)
		first := d.meter.Steps()
		for _, err := range r.Run(ctx, cfg.UserID, cfg.SessionID, msg, runCfg) {
			if err != nil {
				res.Errors = append(res.Errors, fmt.Errorf("turn %d: %w", turn, err))
				if IsOverflowError(err) {
					res.OverflowsSurfaced++
				}
			}
			if d.meter.Steps()-first > limit {
				res.Errors = append(res.Errors, fmt.Errorf("turn %d: %w (%d)", turn, ErrStepLimit, limit))
				break
			}
		}
		res.Turns++
	}

	res.Requests = d.meter.Records()
	res.SummarizerCalls = d.meter.SummarizerCalls() - summarizerStart
	res.Finish()
	res.Duration = time.Since(start)
	return res, nil
}
