package contextguard

import (
	"errors"
	"fmt"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool"
	"google.golang.org/adk/tool/functiontool"

	"github.com/adk-contextguard/contextguard/core"
)

// The public API whose signatures take ADK types, beside the plugin
// (adapter_adk.go) and the session-service forms (session_service.go):
// configuration with ADK models, and the forms used inside an agent, on
// the state of a tool's or callback's context. Each passes ADK's values to
// the engine (module core) through its seams.

// Add guards the agent named agentName. llm is the model that writes the
// summaries (the agent's own model or a cheaper one); it may be nil when
// WithSummarizer is given. Adding a name again replaces its configuration.
// Invalid options are recorded and reported by Plugin and PluginConfig; the
// agent is then left unguarded. Without WithMaxTokens, the options that
// must fit inside the window (WithTriggerTokens, WithReserve,
// WithPruningMinFree, WithSummaryTokens) are checked against the
// registry's window for llm when the registry knows it, llm being taken as
// the agent's own model: give WithMaxTokens when the agent's model has
// another window.
func (g *ContextGuard) Add(agentName string, llm model.LLM, opts ...AgentOption) {
	s, err := summarizerFor(llm)
	g.engine().Add(agentName, s, err, opts...)
}

// AddDefault guards every agent that was not added by name, with the same
// arguments as Add: the sub-agents of a multi-agent app, or agents built
// at run time. Each such agent keeps its own session state under its own
// name, as if it had been added by name; an agent added by name keeps its
// own configuration. Calling AddDefault again replaces the default.
func (g *ContextGuard) AddDefault(llm model.LLM, opts ...AgentOption) {
	s, err := summarizerFor(llm)
	g.engine().AddDefault(s, err, opts...)
}

// summarizerFor is the summarizer of the model given to Add or AddDefault:
// an LLMSummarizer over it; none for no model (WithSummarizer must then be
// given), and an error for a typed nil.
func summarizerFor(llm model.LLM) (Summarizer, error) {
	switch {
	case llm == nil:
		return nil, nil
	case core.IsNil(llm):
		// A plain nil is allowed beside WithSummarizer; a typed nil is a
		// model variable that was never assigned.
		return nil, fmt.Errorf("model is a nil %T", llm)
	}
	return NewLLMSummarizer(llm), nil
}

// WithRecoveryModel sets the model that answers when the provider rejects a
// request as too long (a context-overflow error, see AsContextOverflow): the
// guard compacts the failed request to half the window, calibrated with the
// provider's real count, sends it to llm and returns that response instead
// of the error. Usually llm is the agent's own model. Without it, the
// provider's error reaches the caller once and the session's next call
// compacts first. A nil model is an error.
func WithRecoveryModel(llm model.LLM) AgentOption {
	return core.WithRecoveryModel(llm)
}

// WithSessionService gives the guard the session service the runner uses,
// so that a compaction made between two runs (WithBetweenTurns) is written
// to the session as a state delta on an appended event, the way
// RequestCompaction writes a request: the next run starts compacted in any
// process that serves the session. Without it, the compaction is kept in
// this guard's memory of the session for the session's next call here; a
// session evicted from that memory (WithMaxSessions, WithMaxSessionBytes),
// a restart or another replica then compacts inline in its next call. A
// nil service is an error.
func WithSessionService(svc session.Service) Option {
	if core.IsNil(svc) {
		return core.WithSessionService(nil)
	}
	return core.WithSessionService(serviceAppender{svc: svc})
}

// UsageFromState is Usage from a session state: inside a tool or callback,
// the state of its context (agent.ToolContext.ReadonlyState) and usually its
// AgentName. Values of the wrong type are logged and treated as absent.
func (g *ContextGuard) UsageFromState(st session.ReadonlyState, agentName string) (Usage, error) {
	return g.engine().UsageFromState(st, agentName)
}

// RequestCompactionInState is RequestCompaction from inside the agent: st is
// the state of a tool's or callback's context (agent.ToolContext.State), and
// agentName the agent whose next model call compacts (usually the context's
// AgentName). The request rides on the event of that context, so a tool's
// request is answered by the model call that reads the tool's result.
func (g *ContextGuard) RequestCompactionInState(st session.State, agentName, focus string) error {
	return g.engine().RequestCompactionInState(st, agentName, focus)
}

// compactArgs are the arguments of the compaction tool.
type compactArgs struct {
	Focus string `json:"focus,omitempty" jsonschema:"optional: what the summary should keep in most detail, for example the failing test and what was tried"`
}

// compactResult is the compaction tool's answer to the model.
type compactResult struct {
	Status string `json:"status"`
}

// CompactTool returns a tool, named CompactToolName, that the agent itself
// can call to compact its conversation (RequestCompactionInState), with an
// optional "focus" argument. The compaction happens before the agent's next
// model call, which then sees the summary in place of the conversation. Give
// it to an agent the guard guards, among its llmagent tools.
func (g *ContextGuard) CompactTool() (tool.Tool, error) {
	if g == nil {
		return nil, errors.New("contextguard: CompactTool: the guard is nil")
	}
	t, err := functiontool.New(functiontool.Config{
		Name: CompactToolName,
		Description: "Compacts this conversation: before your next step, the conversation so far is replaced by a summary of it. " +
			"Use it when the context is getting full or the earlier conversation no longer matters in detail. " +
			"Optionally say what the summary should focus on.",
	}, func(ctx agent.ToolContext, a compactArgs) (compactResult, error) {
		if err := g.RequestCompactionInState(ctx.State(), ctx.AgentName(), a.Focus); err != nil {
			return compactResult{}, err
		}
		return compactResult{Status: "The conversation will be compacted into a summary before your next step."}, nil
	})
	if err != nil {
		return nil, fmt.Errorf("contextguard: CompactTool: %w", err)
	}
	return t, nil
}

// recallAnswer is the recall tool's answer to the model.
type recallAnswer struct {
	Result string `json:"result"`
}

// recallDescription is the recall tool's description for the model.
const recallDescription = "Searches the earlier part of this conversation that was compacted into a summary or removed to save context " +
	"(tool results replaced by a placeholder), and returns the exact excerpts, best first, with the turn and tool they came from. " +
	"Give words or a phrase (an error message, a file name, a value the user gave); or the call_id a placeholder names to get that tool result whole, in pages. " +
	"Use it before asking the user to repeat something or redoing a step."

// RecallTool returns a tool, named RecallToolName, that lets the agent
// search what compactions and pruning removed from its requests in this
// session and get the exact excerpts back ("query"), or a pruned tool
// result whole by its "call_id", in pages ("page"). Give it to an agent the
// guard guards, among its llmagent tools; the summary message and the
// pruning placeholders then tell the model it is there. svc is the
// session service the runner uses: the tool reads the session's events
// from it, in place, and keeps only an index of them in memory (nothing in
// the session state).
func (g *ContextGuard) RecallTool(svc session.Service) (tool.Tool, error) {
	if g == nil {
		return nil, errors.New("contextguard: RecallTool: the guard is nil")
	}
	if core.IsNil(svc) {
		return nil, errors.New("contextguard: RecallTool: the session service is nil")
	}
	t, err := functiontool.New(functiontool.Config{Name: RecallToolName, Description: recallDescription},
		func(ctx agent.ToolContext, a core.RecallArgs) (recallAnswer, error) {
			history, scope, err := recallHistory(ctx, svc)
			if err != nil {
				return recallAnswer{}, err
			}
			out, err := g.engine().Recall(ctx, ctx.State(), ctx.AgentName(), scope, history, a)
			if err != nil {
				return recallAnswer{}, err
			}
			return recallAnswer{Result: out}, nil
		})
	if err != nil {
		return nil, fmt.Errorf("contextguard: RecallTool: %w", err)
	}
	return t, nil
}

// DisableInState is DisableSession from inside the agent: st is the state of
// a tool's or callback's context. The model calls that follow in the same
// run already compact no more (the stored summary stays applied).
func (g *ContextGuard) DisableInState(st session.State) error {
	return g.engine().SetDisabledInState(st, true)
}

// EnableInState is EnableSession from inside the agent.
func (g *ContextGuard) EnableInState(st session.State) error {
	return g.engine().SetDisabledInState(st, false)
}
