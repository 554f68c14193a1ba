package core

import (
	"errors"
	"fmt"
)

// The agents the guard guards: those added by name, AddDefault's for the
// rest, and the lookup of each call's agent.

// defaultAgentName names AddDefault's configuration until it is derived for
// an agent (deriveDefault); no agent runs under it.
const defaultAgentName = "(default)"

// add registers cfg under its name (Add), or records its errors and leaves
// the agent as it was.
func (g *Guard) add(cfg *Agent) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(cfg.errs) > 0 {
		g.errs = append(g.errs, cfg.errs...)
		return
	}
	cfg.host = g.host
	g.agents[cfg.name] = cfg
}

// setDefault makes cfg the default configuration (AddDefault), or records
// its errors and leaves the default as it was.
func (g *Guard) setDefault(cfg *Agent) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(cfg.errs) > 0 {
		g.errs = append(g.errs, cfg.errs...)
		return
	}
	cfg.host = g.host
	g.fallback = cfg
	clear(g.derived)
}

// agent is the configuration guarding the agent named name: its own (Add),
// else the default's under its name (AddDefault), else nil.
func (g *Guard) agent(name string) *Agent {
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
func (g *Guard) agentForCall(name string) *Agent {
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
func (g *Guard) deriveDefault(name string) *Agent {
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

// checkAgent says why the guard cannot answer for agentName.
func (g *Guard) checkAgent(agentName string) error {
	switch {
	case g == nil:
		return errors.New("contextguard: the guard is nil")
	case agentName == "":
		return errors.New("contextguard: the agent name is empty")
	case g.agent(agentName) == nil:
		return fmt.Errorf("contextguard: agent %q is not guarded; add it with Add", agentName)
	}
	return nil
}
