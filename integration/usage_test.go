package integration

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"google.golang.org/adk/agent"

	"github.com/adk-contextguard/contextguard"
)

// TestUsageCompactionRequestAndSwitch runs the guard's API for applications
// that hold only the session service (Usage, RequestCompaction,
// DisableSession, EnableSession) against ADK's database session service:
// its state comes back as JSON numbers, and it accepts the guard's
// state-only events between runs. Switched off, the session keeps its
// summary (nothing compacted comes back) and compacts no more.
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
		agentLLM, sum := newAgentModel(2, window), &summarizerModel{}
		r := newReplica(t, replicaConfig{name: "app", svc: db.svc, agentLLM: agentLLM, summarizer: sum,
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

		// Switched off, the guard compacts no more, but what it compacted
		// stays compacted: the summary still opens every request, the
		// summarized turn is not sent again, and Usage follows the request
		// actually sent.
		require.NoError(t, r.guard.DisableSession(ctx, db.svc, appName, userID, sessionID))
		before := usage()
		assert.True(t, before.Disabled)
		calls := sum.Calls()
		const lastOff = 5
		for turn := 3; turn <= lastOff; turn++ {
			clog.setTurn(turn)
			require.NoError(t, r.runTurn(ctx, sessionID, userMessage(t.Name(), turn), agent.RunConfig{}))
			recs := agentLLM.Records()
			last := recs[len(recs)-1]
			assert.True(t, strings.HasPrefix(last.FirstText, "[Conversation summary"), "turn %d: switched off, the summary stays applied, got %.100q", turn, last.FirstText)
			assert.NotContains(t, last.Text, marker(t.Name(), 1), "turn %d: the summarized turn came back", turn)
			assert.Contains(t, last.Text, marker(t.Name(), turn), "turn %d: the user's request is sent", turn)
		}
		after := usage()
		assert.True(t, after.Disabled)
		assert.Equal(t, 1, after.Compactions, "no compaction while off")
		assert.Equal(t, calls, sum.Calls(), "no summarizer call while off")
		assert.Len(t, clog.Events(), 1)
		assert.Greater(t, after.Tokens, before.Tokens, "Usage follows the request sent")
		recs := agentLLM.Records()
		assert.InEpsilon(t, recs[len(recs)-1].Tokens, after.ProviderTokens, 1e-9, "Usage reports the provider's count of the request sent")

		require.NoError(t, r.guard.EnableSession(ctx, db.svc, appName, userID, sessionID))
		assert.False(t, usage().Disabled)
		clog.setTurn(lastOff + 1)
		require.NoError(t, r.runTurn(ctx, sessionID, userMessage(t.Name(), lastOff+1), agent.RunConfig{}))
		assert.NotEqual(t, after.Tokens, usage().Tokens, "back on, the guard counts again")
	})
}
