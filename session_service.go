package contextguard

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/adk/platform"
	"google.golang.org/adk/session"
)

// The guard's API for applications that hold only the session service and
// IDs (Usage, RequestCompaction, DisableSession, EnableSession) reads the
// session with the service and writes through a state delta on an appended
// event, the way ADK's services apply state changes from outside an
// invocation.

// checkAgent says why the guard cannot answer for agentName.
func (g *ContextGuard) checkAgent(agentName string) error {
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

// getSession reads a session for the guard's out-of-band API.
func getSession(ctx context.Context, svc session.Service, appName, userID, sessionID string) (session.Session, error) {
	if svc == nil {
		return nil, errors.New("contextguard: the session service is nil")
	}
	if appName == "" || userID == "" || sessionID == "" {
		return nil, fmt.Errorf("contextguard: app name, user ID and session ID are all required, got %q, %q, %q", appName, userID, sessionID)
	}
	resp, err := svc.Get(ctx, &session.GetRequest{AppName: appName, UserID: userID, SessionID: sessionID, NumRecentEvents: 1})
	if err != nil {
		return nil, fmt.Errorf("contextguard: reading session %q: %w", sessionID, err)
	}
	if resp == nil || resp.Session == nil {
		return nil, fmt.Errorf("contextguard: reading session %q: the service returned no session", sessionID)
	}
	return resp.Session, nil
}

// stateEventAuthor is the author of the events the guard appends: runners
// skip user events when they look for the agent to run, and an event without
// content is never sent to a model.
const stateEventAuthor = "user"

// appendState applies delta to the session's state through an event that
// carries nothing else.
func appendState(ctx context.Context, svc session.Service, appName, userID, sessionID string, delta map[string]any) error {
	sess, err := getSession(ctx, svc, appName, userID, sessionID)
	if err != nil {
		return err
	}
	ev := session.NewEventWithContext(ctx, "contextguard-"+platform.NewUUID(ctx))
	ev.Author = stateEventAuthor
	ev.Actions.StateDelta = delta
	if err := svc.AppendEvent(ctx, sess, ev); err != nil {
		return fmt.Errorf("contextguard: writing the state of session %q: %w", sessionID, err)
	}
	return nil
}
