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

// Usage reads an agent's Usage in a session with the session service, for
// an application that holds only the service and the IDs (an HTTP handler,
// a status line); from inside a tool, use UsageFromState. It returns an
// error for a nil service, empty IDs, an agent the guard does not guard, and
// when the session cannot be read.
//
// An unknown session's error wraps session.ErrNotFound.
func (g *ContextGuard) Usage(ctx context.Context, svc session.Service, appName, userID, sessionID, agentName string) (Usage, error) {
	if err := g.check(agentName); err != nil {
		return Usage{}, err
	}
	sess, err := getSession(ctx, svc, appName, userID, sessionID)
	if err != nil {
		return Usage{}, err
	}
	u, err := g.UsageFromState(sess.State(), agentName)
	if err == nil {
		u.Preparing = g.engine().Preparing(appName, userID, sessionID, agentName)
	}
	return u, err
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
// or written.
//
// An unknown session's error wraps session.ErrNotFound.
func (g *ContextGuard) RequestCompaction(ctx context.Context, svc session.Service, appName, userID, sessionID, agentName, focus string) error {
	if g == nil {
		return errors.New("contextguard: the guard is nil")
	}
	delta, err := g.engine().CompactionRequestDelta(agentName, focus)
	if err != nil {
		return err
	}
	return appendState(ctx, svc, appName, userID, sessionID, delta)
}

// DisableSession switches the guard off for the session (StateKeyDisabled),
// through an event appended with the session service, as RequestCompaction
// does; call it between runs of the session. Off, the guard stops
// compacting: no new compaction, summarizer call or overflow recovery. What
// it already compacted stays compacted (the stored summary still replaces
// the history it covers), and Usage still reports each request sent.
// EnableSession turns it back on.
func (g *ContextGuard) DisableSession(ctx context.Context, svc session.Service, appName, userID, sessionID string) error {
	return g.setSessionDisabled(ctx, svc, appName, userID, sessionID, true)
}

// EnableSession turns the guard back on for a session DisableSession
// switched off.
func (g *ContextGuard) EnableSession(ctx context.Context, svc session.Service, appName, userID, sessionID string) error {
	return g.setSessionDisabled(ctx, svc, appName, userID, sessionID, false)
}

func (g *ContextGuard) setSessionDisabled(ctx context.Context, svc session.Service, appName, userID, sessionID string, off bool) error {
	if g == nil {
		return errors.New("contextguard: the guard is nil")
	}
	return appendState(ctx, svc, appName, userID, sessionID, map[string]any{StateKeyDisabled: off})
}

// check says why the guard cannot answer for agentName, nil when it can.
func (g *ContextGuard) check(agentName string) error {
	if g == nil {
		return errors.New("contextguard: the guard is nil")
	}
	return g.engine().CheckAgent(agentName)
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

// serviceAppender writes the state of a compaction made between two runs
// with the session service (WithSessionService).
type serviceAppender struct {
	svc session.Service
}

// AppendState appends an event whose state delta is delta to the session.
func (a serviceAppender) AppendState(ctx context.Context, appName, userID, sessionID string, delta map[string]any) error {
	return appendState(ctx, a.svc, appName, userID, sessionID, delta)
}

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
