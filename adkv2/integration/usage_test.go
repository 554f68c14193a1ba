package integration

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"google.golang.org/adk/v2/agent"

	contextguard "github.com/adk-contextguard/contextguard/adkv2"
)

// TestUsageCompactionRequestAndSwitch runs the guard's API for applications
// that hold only the session service (Usage, RequestCompaction,
// DisableSession, EnableSession) against ADK's database session service:
// its state comes back as JSON numbers, and it accepts the guard's
// state-only events between runs.
func TestUsageCompactionRequestAndSwitch(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open opener) {
		const (
			window    = 8_000
			sessionID = "usage"
		)
		ctx := t.Context()
		clog, logs := &compactionLog{}, &logRecorder{}
		db := open(t)
		createSession(t, db.svc, sessionID)
		r := newReplica(t, replicaConfig{name: "app", svc: db.svc, agentLLM: newAgentModel(2, window), summarizer: &summarizerModel{},
			window: window, outputBytes: 1_500, log: clog, logs: logs})
		usage := func() contextguard.Usage {
			t.Helper()
			u, err := r.guard.Usage(ctx, db.svc, appName, userID, sessionID, agentName)
			require.NoError(t, err)
			return u
		}

		clog.setTurn(1)
		require.NoError(t, r.runTurn(ctx, sessionID, userMessage(t.Name(), 1), agent.RunConfig{}))
		require.Empty(t, clog.Events(), "below the trigger")
		u := usage()
		assert.Positive(t, u.Tokens)
		assert.Positive(t, u.ProviderTokens)
		assert.Equal(t, window, u.Window)
		assert.Equal(t, window*8/10, u.Threshold)
		assert.InDelta(t, float64(max(u.Tokens, u.ProviderTokens))/window, u.Utilization, 1e-9)

		require.NoError(t, r.guard.RequestCompaction(ctx, db.svc, appName, userID, sessionID, agentName, "focus on the failing services"))
		assert.True(t, usage().CompactionRequested)
		clog.setTurn(2)
		require.NoError(t, r.runTurn(ctx, sessionID, userMessage(t.Name(), 2), agent.RunConfig{}))
		evs := clog.Events()
		require.Len(t, evs, 1)
		assert.Equal(t, contextguard.ReasonRequested, evs[0].Event.Reason)
		assert.False(t, evs[0].Event.Discarded)
		assert.Equal(t, false, rawState(t, getSession(t, db.svc, sessionID), stateKey("compact_request")))
		u = usage()
		assert.False(t, u.CompactionRequested)
		assert.Equal(t, 1, u.Compactions)
		assert.Equal(t, contextguard.ReasonRequested, u.LastCompactionReason)
		assert.False(t, u.LastCompaction.IsZero())

		require.NoError(t, r.guard.DisableSession(ctx, db.svc, appName, userID, sessionID))
		before := usage()
		assert.True(t, before.Disabled)
		clog.setTurn(3)
		require.NoError(t, r.runTurn(ctx, sessionID, userMessage(t.Name(), 3), agent.RunConfig{}))
		after := usage()
		assert.Equal(t, before, after, "switched off, the guard wrote nothing")

		require.NoError(t, r.guard.EnableSession(ctx, db.svc, appName, userID, sessionID))
		assert.False(t, usage().Disabled)
		clog.setTurn(4)
		require.NoError(t, r.runTurn(ctx, sessionID, userMessage(t.Name(), 4), agent.RunConfig{}))
		assert.NotEqual(t, after.Tokens, usage().Tokens, "back on, the guard counts again")
	})
}
