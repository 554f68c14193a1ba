package core

import (
	"log/slog"
	"sync"
	"sync/atomic"
)

// The agents the guard guards: those added by name, AddDefault's for the rest.

// defaultAgentName names AddDefault's configuration until it is derived for
// an agent (deriveDefault); no agent runs under it.
const defaultAgentName = "(default)"

// maxDerivedAgents bounds how many agent names AddDefault's configuration
// is kept derived for (about 2.5 KB each): an application naming its agents
// per session would otherwise keep one per name for good. Past it, names
// unused since the last eviction go first; a dropped one is derived again.
const maxDerivedAgents = 1_024

// derivedAgent is AddDefault's configuration under one agent's name, with
// whether a call used it since the last eviction (a clock's reference bit:
// marking it takes no lock beyond the lookup's read lock).
type derivedAgent struct {
	cfg  *Agent
	used atomic.Bool
}

// agentTable holds the agents' configurations, looked up on every call
// under a read lock, and the errors of those Add and AddDefault refused.
type agentTable struct {
	mu     sync.RWMutex
	agents map[string]*Agent
	// fallback is AddDefault's configuration; derived holds it under the
	// names of the agents it guarded lately (at most maxDerivedAgents).
	fallback        *Agent
	derived         map[string]*derivedAgent
	errs            []error
	unguardedLogged sync.Map // names of unguarded agents already logged
	host            Host     // stamped on each configuration added
	log             *slog.Logger
}

// add registers cfg under its name (Add), or as the default (AddDefault,
// asDefault); a cfg in error has its errors recorded and changes nothing.
func (t *agentTable) add(cfg *Agent, asDefault bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(cfg.errs) > 0 {
		t.errs = append(t.errs, cfg.errs...)
		return
	}
	cfg.host = t.host
	if asDefault {
		t.fallback = cfg
		clear(t.derived)
		return
	}
	t.agents[cfg.name] = cfg
}

// agent is the configuration guarding the agent named name: its own (Add),
// else the default's under its name (AddDefault), else nil.
func (t *agentTable) agent(name string) *Agent {
	t.mu.RLock()
	cfg, ok := t.agents[name]
	if !ok {
		var d *derivedAgent
		if d, ok = t.derived[name]; ok {
			cfg = d.cfg
			if !d.used.Load() {
				d.used.Store(true)
			}
		}
	}
	fallback := t.fallback
	t.mu.RUnlock()
	switch {
	case ok:
		return cfg
	case fallback != nil:
		return t.deriveDefault(name)
	}
	return nil
}

// agentForCall is agent for a model call: an unguarded agent is logged once
// per name.
func (t *agentTable) agentForCall(name string) *Agent {
	cfg := t.agent(name)
	if cfg == nil {
		if _, seen := t.unguardedLogged.LoadOrStore(name, true); !seen {
			t.log.Info("contextguard: this agent is not guarded; its requests are sent unchecked. Guard it with Add(name, model, ...) or every agent with AddDefault(model, ...)",
				"agent", name)
		}
	}
	return cfg
}

// deriveDefault is the default configuration (AddDefault) under the name of
// the agent it guards, made once per name while at most maxDerivedAgents
// names are kept (evictDerived).
func (t *agentTable) deriveDefault(name string) *Agent {
	t.mu.Lock()
	defer t.mu.Unlock()
	if cfg, ok := t.agents[name]; ok {
		return cfg
	}
	if d, ok := t.derived[name]; ok {
		return d.cfg
	}
	if len(t.derived) >= maxDerivedAgents {
		t.evictDerived()
	}
	cfg := *t.fallback
	cfg.name = name
	cfg.stateKeys = stateKeysFor(name)
	t.derived[name] = &derivedAgent{cfg: &cfg}
	return &cfg
}

// evictDerived drops a quarter of the derived configurations, those unused
// since the last eviction first (clearing the marks), so a full table costs
// one eviction per quarter of its size. t.mu is held.
func (t *agentTable) evictDerived() {
	drop := len(t.derived) / 4
	for name, d := range t.derived {
		if drop == 0 {
			break
		}
		if !d.used.Load() {
			delete(t.derived, name)
			drop--
		}
	}
	for name, d := range t.derived {
		if drop > 0 {
			delete(t.derived, name)
			drop--
			continue
		}
		d.used.Store(false)
	}
}
