package core

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"

	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/state"
)

// The engine's entry points for adapters (ARCHITECTURE.md, The engine and
// the ADK adapter), called with the framework's values through seams.go.

// Logger is the guard's logger (WithLogger), for adapters' own messages.
func (g *Guard) Logger() *slog.Logger { return g.log }

// Add configures the agent named agentName with s, the summarizer of the
// model given to the adapter's Add (nil allowed with WithSummarizer). err
// is a configuration error of the adapter's argument (a typed-nil model),
// recorded like the options' errors. Adding a name again replaces its
// configuration. For adapters.
func (g *Guard) Add(agentName string, s Summarizer, err error, opts ...AgentOption) {
	caller := fmt.Sprintf("Add(%q)", agentName)
	g.add(g.checkModelWindow(newAgentConfig(agentName, caller, s, err, opts), caller, s), false)
}

// AddDefault configures every agent that was not added by name, with the
// same arguments as Add. For adapters.
func (g *Guard) AddDefault(s Summarizer, err error, opts ...AgentOption) {
	g.add(g.checkModelWindow(newAgentConfig(defaultAgentName, "AddDefault", s, err, opts), "AddDefault", s), true)
}

// Name is the name of the agent the configuration guards.
func (a *Agent) Name() string { return a.name }

// RecoveryModel is WithRecoveryModel's model, nil without one: the adapter
// calls it with the compacted request of a Recovery.
func (a *Agent) RecoveryModel() HostModel { return a.recoveryLLM }

// AgentForCall is the configuration guarding a model call of the agent
// named name: its own (Add), else the default's (AddDefault), else nil; an
// agent without one is logged once per name, at Info, with how to guard
// it. For adapters.
func (g *Guard) AgentForCall(name string) *Agent { return g.agentForCall(name) }

// CheckRun is told, when a run starts, the names of the agents it may call,
// the run's agent first. When the guard guards none of them, most often
// because the name given to Add is not the agent's, it warns once per run
// agent, naming the agents it does guard. For adapters.
func (g *Guard) CheckRun(names []string) {
	if g == nil || len(names) == 0 {
		return
	}
	g.mu.RLock()
	guarded := g.fallback != nil
	for _, n := range names {
		if _, ok := g.agents[n]; ok {
			guarded = true
			break
		}
	}
	var added []string
	if !guarded {
		added = slices.Sorted(maps.Keys(g.agents))
	}
	g.mu.RUnlock()
	if guarded {
		return
	}
	if _, seen := g.unguardedLogged.LoadOrStore("run\x00"+names[0], true); seen {
		return
	}
	g.log.Warn("contextguard: no agent of this run is guarded; its model calls are sent unchecked. Check the names given to Add, or guard every agent with AddDefault(model, ...)",
		"agent", names[0], "run_agents", names, "guarded", added)
}

// Agent is AgentForCall without the log. For adapters.
func (g *Guard) Agent(name string) *Agent { return g.agent(name) }

// BeforeModel guards one request of agent a: st is the state the call
// reads and writes, ro the session's state without the call's writes. In a
// session switched off (StateKeyDisabled) it only applies what earlier
// compactions stored and counts the request. It calls apply with the
// contents to send, the one place the request is rewritten, then fires the
// OnCompaction hook, and returns the callback's error (ErrIrreducible,
// ErrReentrant, ...). For adapters.
func (g *Guard) BeforeModel(c Call, st State, ro StateReader, a *Agent, req Request, apply func([]*genai.Content)) error {
	contents, ev, err := g.guardRequest(c, st, ro, a, req, modeFor(ro, g.log))
	if apply != nil {
		apply(contents)
	}
	g.fireHook(c, ev)
	return err
}

// AfterModel records the final response's prompt-token count, handles a
// response cut at the output limit near the window (not in a session
// switched off, StateKeyDisabled) and starts preparing the next summary
// while the response's tools run; it returns the content that replaces the
// response's, or nil. For adapters.
func (g *Guard) AfterModel(c Call, a *Agent, st State, resp Response) *genai.Content {
	sio := a.stateIO(g.log)
	if n := resp.promptTokens(); n != 0 {
		g.recordReport(c, sio, st, n)
		recordCached(sio, st, resp.cachedTokens(n))
	}
	if resp.cutAtOutputLimit() && !sessionDisabled(st, g.log) {
		return cutAtOutputLimit(g.log, c, a, sio, st, &resp)
	}
	if resp.asksForTools() {
		g.startPrepared(c, a, st)
	}
	return nil
}

// recordCached keeps the cached-token count in state for Usage.
func recordCached(sio state.IO, st State, n int) {
	if st == nil {
		return
	}
	sio.Set(st, state.KeyCachedTokens, sio.Num(st, state.KeyCachedTokens), n)
}

// RecoverOverflow handles the provider's context-overflow error modelErr
// (ov) for req, nil when the host gave none: it returns a compacted request
// for Agent.RecoveryModel, or nil to return the provider's error; a non-nil
// error is the callback's. For adapters.
func (g *Guard) RecoverOverflow(c Call, st State, ro StateReader, a *Agent, req *Request, ov ContextOverflow, modelErr error) (*Recovery, error) {
	return g.recoverOverflow(c, st, ro, a, req, ov, modelErr)
}

// Contents are the contents of the compacted request to send to the
// recovery model.
func (r *Recovery) Contents() []*genai.Content { return r.req.Contents }

// Recovered logs that the recovery model answered the compacted request.
func (r *Recovery) Recovered() {
	r.log.Info("contextguard: recovered from a context overflow", "kept_contents", len(r.req.Contents))
}

// RecoveryFailed handles the recovery model's error err for r; it returns
// the callback's error, nil to return the provider's. For adapters.
func (g *Guard) RecoveryFailed(c Call, st State, a *Agent, r *Recovery, err error) error {
	return g.recoveryFailed(c, st, a, r, err)
}

// UsageFromState is the agent's Usage read from a session state. Values
// of the wrong type are logged and treated as absent.
func (g *Guard) UsageFromState(st StateReader, agentName string) (Usage, error) {
	if err := g.CheckAgent(agentName); err != nil {
		return Usage{}, err
	}
	return usageFromState(g.agent(agentName).stateIO(g.log), st), nil
}

// RequestCompactionInState asks, in the session state st, that the next
// model call of agentName compact, with focus for the summary prompt.
func (g *Guard) RequestCompactionInState(st State, agentName, focus string) error {
	delta, err := g.CompactionRequestDelta(agentName, focus)
	if err != nil {
		return err
	}
	if st == nil {
		return errors.New("contextguard: the session state is nil")
	}
	for k, v := range delta {
		if err := st.Set(k, v); err != nil {
			return fmt.Errorf("contextguard: storing the compaction request of agent %q: %w", agentName, err)
		}
	}
	return nil
}

// SwitchedOff reports whether the session whose state is st is switched
// off (StateKeyDisabled). For adapters.
func (g *Guard) SwitchedOff(st StateReader) bool { return sessionDisabled(st, g.log) }

// SetDisabledInState switches the guard off (off) or back on for the
// session whose state is st.
func (g *Guard) SetDisabledInState(st State, off bool) error {
	switch {
	case g == nil:
		return errors.New("contextguard: the guard is nil")
	case st == nil:
		return errors.New("contextguard: the session state is nil")
	}
	if err := st.Set(StateKeyDisabled, off); err != nil {
		return fmt.Errorf("contextguard: writing %s: %w", StateKeyDisabled, err)
	}
	return nil
}

// CompactionRequestDelta is the state delta that asks the next model call
// of agentName to compact with focus, for an adapter that writes state
// through its session service. It returns an error for an agent not
// guarded and a focus too long. For adapters.
func (g *Guard) CompactionRequestDelta(agentName, focus string) (map[string]any, error) {
	if err := g.CheckAgent(agentName); err != nil {
		return nil, err
	}
	focus, err := cleanFocus(focus)
	if err != nil {
		return nil, err
	}
	r := state.Request{Pending: true, Focus: focus}
	return map[string]any{state.KeyCompactRequest + agentName: r.Value()}, nil
}

// NeedsGuard reports whether AfterModel has anything to do with r: it
// reports a prompt-token count, stopped at the output limit, or asks for
// tool calls (a summary may be prepared while they run). It is cheap.
func (r *Response) NeedsGuard() bool {
	return r != nil && (r.promptTokens() != 0 || r.cutAtOutputLimit() || r.asksForTools())
}
