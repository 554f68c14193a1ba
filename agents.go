package contextguard

import (
	"fmt"

	"google.golang.org/adk/model"
)

// defaultAgentName names AddDefault's configuration until it is derived for
// an agent (deriveDefault); no agent runs under it.
const defaultAgentName = "(default)"

// Add guards the agent named agentName. llm is the model that writes the
// summaries (the agent's own model or a cheaper one); it may be nil when
// WithSummarizer is given. Adding a name again replaces its configuration.
// Invalid options are recorded and reported by Plugin and PluginConfig; the
// agent is then left unguarded.
func (g *ContextGuard) Add(agentName string, llm model.LLM, opts ...AgentOption) {
	cfg := newAgentConfig(agentName, fmt.Sprintf("Add(%q)", agentName), llm, opts)
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(cfg.errs) > 0 {
		g.errs = append(g.errs, cfg.errs...)
		return
	}
	g.agents[agentName] = cfg
}

// AddDefault guards every agent that was not added by name, with the same
// arguments as Add: the sub-agents of a multi-agent app, or agents built
// at run time. Each such agent keeps its own session state under its own
// name, as if it had been added by name; an agent added by name keeps its
// own configuration. Calling AddDefault again replaces the default.
func (g *ContextGuard) AddDefault(llm model.LLM, opts ...AgentOption) {
	cfg := newAgentConfig(defaultAgentName, "AddDefault", llm, opts)
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(cfg.errs) > 0 {
		g.errs = append(g.errs, cfg.errs...)
		return
	}
	g.fallback = cfg
	clear(g.derived)
}

// agent is the configuration guarding the agent named name: its own (Add),
// else the default's under its name (AddDefault), else nil.
func (g *ContextGuard) agent(name string) *agentConfig {
	g.mu.RLock()
	cfg, ok := g.agents[name]
	if !ok {
		cfg, ok = g.derived[name]
	}
	fallback := g.fallback
	g.mu.RUnlock()
	switch {
	case ok:
		return cfg
	case fallback != nil:
		return g.deriveDefault(name)
	}
	return nil
}

// agentForCall is agent for a model call of the agent named name: an agent
// without a configuration is logged once per name, at Info, with how to
// guard it.
func (g *ContextGuard) agentForCall(name string) *agentConfig {
	cfg := g.agent(name)
	if cfg == nil {
		if _, seen := g.unguardedLogged.LoadOrStore(name, true); !seen {
			g.log.Info("contextguard: this agent is not guarded; its requests are sent unchecked. Guard it with Add(name, model, ...) or every agent with AddDefault(model, ...)",
				"agent", name)
		}
	}
	return cfg
}

// deriveDefault is the default configuration (AddDefault) under the name of
// the agent it guards, made once per name.
func (g *ContextGuard) deriveDefault(name string) *agentConfig {
	g.mu.Lock()
	defer g.mu.Unlock()
	if cfg, ok := g.agents[name]; ok {
		return cfg
	}
	if cfg, ok := g.derived[name]; ok {
		return cfg
	}
	cfg := *g.fallback
	cfg.name = name
	cfg.stateKeys = stateKeysFor(name)
	g.derived[name] = &cfg
	return &cfg
}
