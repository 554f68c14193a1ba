package contextguard_test

import (
	"context"
	"errors"
	"iter"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/session"

	contextguard "github.com/adk-contextguard/contextguard/adkv2"
)

// silentModel is a summarizer's model that is never called.
type silentModel struct{}

func (silentModel) Name() string { return "silent" }

func (silentModel) GenerateContent(context.Context, *model.LLMRequest, bool) iter.Seq2[*model.LLMResponse, error] {
	return func(func(*model.LLMResponse, error) bool) {}
}

// TestOutOfBandAPI_UnknownSession: ADK v2's session services have no
// session.ErrNotFound, so, as the v2 doc comments say, an unknown session's
// error names the session and wraps the service's own error.
func TestOutOfBandAPI_UnknownSession(t *testing.T) {
	const app, user, agentName = "app", "user", "assistant"
	ctx := t.Context()
	svc := session.InMemoryService()
	_, err := svc.Create(ctx, &session.CreateRequest{AppName: app, UserID: user, SessionID: "known"})
	require.NoError(t, err)
	_, svcErr := svc.Get(ctx, &session.GetRequest{AppName: app, UserID: user, SessionID: "nope"})
	require.Error(t, svcErr, "the in-memory service reports an unknown session")

	g := contextguard.New(nil)
	g.Add(agentName, silentModel{})
	calls := []struct {
		name string
		call func() error
	}{
		{"Usage", func() error { _, err := g.Usage(ctx, svc, app, user, "nope", agentName); return err }},
		{"RequestCompaction", func() error { return g.RequestCompaction(ctx, svc, app, user, "nope", agentName, "") }},
		{"DisableSession", func() error { return g.DisableSession(ctx, svc, app, user, "nope") }},
		{"EnableSession", func() error { return g.EnableSession(ctx, svc, app, user, "nope") }},
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			err := c.call()
			require.ErrorContains(t, err, `reading session "nope"`)
			inner := errors.Unwrap(err)
			require.Error(t, inner, "the service's error is wrapped")
			require.Equal(t, svcErr.Error(), inner.Error())
		})
	}
}
