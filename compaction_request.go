package contextguard

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool"
	"google.golang.org/adk/tool/functiontool"
)

// Compaction on request (ARCHITECTURE.md, One model call): RequestCompaction
// stores a request in the agent's session state (key
// __context_guard_compact_request_{agent}); the agent's next guarded model
// call in the session compacts whatever its count, with the request's focus
// appended to the summary prompt's instructions, and clears the request.

// ReasonRequested is CompactionEvent.Reason of a compaction that answered
// RequestCompaction.
const ReasonRequested = "requested"

// MaxFocusBytes bounds the focus instructions of RequestCompaction: they are
// appended to the summary prompt of one compaction.
const MaxFocusBytes = 2_000

// CompactToolName is the name of the tool CompactTool returns.
const CompactToolName = "compact_context"

// compactionRequest is a compaction asked for and not yet answered. In
// session state it is true (no focus) or the focus text; false, "" or no
// value mean none.
type compactionRequest struct {
	pending bool
	focus   string
}

// value is the request as stored in session state.
func (r compactionRequest) value() any {
	switch {
	case !r.pending:
		return false
	case r.focus != "":
		return r.focus
	}
	return true
}

// requestAt reads the request stored under the agent's full key name. A
// value of another type is logged and treated as absent. It allocates
// nothing when nothing is requested.
func (s stateIO) requestAt(st session.ReadonlyState, fullKey string) compactionRequest {
	if st == nil {
		return compactionRequest{}
	}
	v, err := st.Get(fullKey)
	if err != nil {
		if !errors.Is(err, session.ErrStateKeyNotExist) {
			s.log.Warn("contextguard: reading session state failed; treating key as absent",
				"agent", s.agent, "key", fullKey, "error", err)
		}
		return compactionRequest{}
	}
	switch r := v.(type) {
	case nil:
		return compactionRequest{}
	case bool:
		return compactionRequest{pending: r}
	case string:
		if len(r) > MaxFocusBytes {
			// Written by an application itself: cut, not refused.
			s.log.Warn("contextguard: the requested compaction's focus is too long; using its beginning",
				"agent", s.agent, "key", fullKey, "bytes", len(r), "max_bytes", MaxFocusBytes)
			r = strings.ToValidUTF8(r[:MaxFocusBytes], "")
		}
		return compactionRequest{pending: r != "", focus: r}
	}
	s.log.Warn("contextguard: session state has the wrong type; ignoring it",
		"agent", s.agent, "key", fullKey, "type", typeName(v))
	return compactionRequest{}
}

// cleanFocus trims focus and checks its length.
func cleanFocus(focus string) (string, error) {
	focus = strings.TrimSpace(focus)
	if len(focus) > MaxFocusBytes {
		return "", fmt.Errorf("contextguard: the focus is %d bytes, at most %d are accepted", len(focus), MaxFocusBytes)
	}
	return focus, nil
}

// RequestCompaction asks that the next model call of agentName in the
// session compact the conversation, even below the trigger, like a
// "/compact" command. focus, when not empty, is appended to the summary
// prompt's instructions for that one compaction (for example "focus on the
// failing test"); it is at most MaxFocusBytes long. The compaction's
// CompactionEvent has Reason ReasonRequested. One compaction answers the
// request whatever its outcome (a compaction that would not shrink the
// request is discarded as usual); a second request before it replaces the
// first.
//
// It works from outside the agent, with only the session service and IDs
// (an HTTP handler, a chat command): it appends an event with no content,
// authored "user", whose state delta holds the request, so the next run of
// the session reads it; the agent never sees the event. Call it between
// runs of the session: ADK's database session service rejects an event a
// running invocation appends after another writer changed the session. From
// inside a tool or callback, use RequestCompactionInState, or give the agent
// CompactTool.
//
// It returns an error for a nil service, empty IDs, an agent the guard does
// not guard, a focus that is too long, and when the session cannot be read
// or written (wrapping session.ErrNotFound for an unknown session).
func (g *ContextGuard) RequestCompaction(ctx context.Context, svc session.Service, appName, userID, sessionID, agentName, focus string) error {
	if err := g.checkAgent(agentName); err != nil {
		return err
	}
	focus, err := cleanFocus(focus)
	if err != nil {
		return err
	}
	r := compactionRequest{pending: true, focus: focus}
	return appendState(ctx, svc, appName, userID, sessionID, map[string]any{keyCompactRequest + agentName: r.value()})
}

// RequestCompactionInState is RequestCompaction from inside the agent: st is
// the state of a tool's or callback's context (agent.ToolContext.State), and
// agentName the agent whose next model call compacts (usually the context's
// AgentName). The request rides on the event of that context, so a tool's
// request is answered by the model call that reads the tool's result.
func (g *ContextGuard) RequestCompactionInState(st session.State, agentName, focus string) error {
	if err := g.checkAgent(agentName); err != nil {
		return err
	}
	if st == nil {
		return errors.New("contextguard: the session state is nil")
	}
	focus, err := cleanFocus(focus)
	if err != nil {
		return err
	}
	r := compactionRequest{pending: true, focus: focus}
	if err := st.Set(keyCompactRequest+agentName, r.value()); err != nil {
		return fmt.Errorf("contextguard: storing the compaction request of agent %q: %w", agentName, err)
	}
	return nil
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

// takeRequest answers a pending request: the turn compacts with its focus,
// and the request is cleared from the state the turn persists, whatever the
// compaction's outcome.
func (t *turn) takeRequest() {
	if t.prev.request.pending {
		t.focus = t.prev.request.focus
	}
	t.prev.request = compactionRequest{}
}

// summaryInstructions are the summary prompt's extra instructions, in
// order: the agent's (WithInstructions), the focus of a requested
// compaction, and the before-compaction hook's (compaction_hooks.go).
func (t *turn) summaryInstructions() string {
	var parts []string
	if t.cfg.instructions != "" {
		parts = append(parts, t.cfg.instructions)
	}
	if t.focus != "" {
		parts = append(parts, "Focus of this summary: "+t.focus)
	}
	if t.hookInstructions != "" {
		parts = append(parts, t.hookInstructions)
	}
	return strings.Join(parts, "\n\n")
}
