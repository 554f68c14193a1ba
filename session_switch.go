package contextguard

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/session"
)

// StateKeyDisabled is the session-state key that switches the guard off for
// one session: while it holds true, the guard passes every request of the
// session untouched, for every agent (no counting, no compaction, no
// calibration from the provider's counts, no recovery from overflow
// errors). Any other value, or none, leaves the guard on; a value that is
// not a bool is logged and ignored. DisableSession and EnableSession set it
// from outside the agent, DisableInState and EnableInState from inside; an
// application may also set it itself, for example in the session's initial
// state. Turned back on, the guard resumes from the state it had: a
// conversation that grew past the trigger meanwhile is compacted by its
// next model call.
const StateKeyDisabled = stateKeyPrefix + "disabled"

// DisableSession switches the guard off for the session (StateKeyDisabled),
// through an event appended with the session service, as RequestCompaction
// does; call it between runs of the session. EnableSession turns it back
// on.
func (g *ContextGuard) DisableSession(ctx context.Context, svc session.Service, appName, userID, sessionID string) error {
	return g.setSessionDisabled(ctx, svc, appName, userID, sessionID, true)
}

// EnableSession turns the guard back on for a session DisableSession
// switched off.
func (g *ContextGuard) EnableSession(ctx context.Context, svc session.Service, appName, userID, sessionID string) error {
	return g.setSessionDisabled(ctx, svc, appName, userID, sessionID, false)
}

// DisableInState is DisableSession from inside the agent: st is the state of
// a tool's or callback's context. The model calls that follow in the same
// run are already passed untouched.
func (g *ContextGuard) DisableInState(st session.State) error {
	return g.setDisabledInState(st, true)
}

// EnableInState is EnableSession from inside the agent.
func (g *ContextGuard) EnableInState(st session.State) error {
	return g.setDisabledInState(st, false)
}

func (g *ContextGuard) setSessionDisabled(ctx context.Context, svc session.Service, appName, userID, sessionID string, off bool) error {
	if g == nil {
		return errors.New("contextguard: the guard is nil")
	}
	return appendState(ctx, svc, appName, userID, sessionID, map[string]any{StateKeyDisabled: off})
}

func (g *ContextGuard) setDisabledInState(st session.State, off bool) error {
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

// switchedOff reports whether the guard is switched off for the call's
// session. It reads one key and allocates nothing.
func (g *ContextGuard) switchedOff(c agent.ReadonlyContext) bool {
	return sessionDisabled(c.ReadonlyState(), g.log)
}

// sessionDisabled reads StateKeyDisabled; a value that is not a bool is
// logged and treated as absent.
func sessionDisabled(st session.ReadonlyState, log *slog.Logger) bool {
	if st == nil {
		return false
	}
	v, err := st.Get(StateKeyDisabled)
	if err != nil || v == nil {
		return false
	}
	off, ok := v.(bool)
	if !ok {
		log.Warn("contextguard: session state has the wrong type; ignoring it",
			"key", StateKeyDisabled, "type", typeName(v))
	}
	return off
}
