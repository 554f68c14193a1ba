package integration

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"google.golang.org/adk/agent"
)

// TestRestartResumesFromStoredSummary compacts a session on ADK's database
// session service, closes and rebuilds every process-level object (database
// handle, session service, guard, agent, runner, models) on the same
// database, and checks that the next call starts from the stored summary
// without summarizing again.
//
// Both processes compact only inline (replicaConfig.inlineOnly): the
// restart is of a summary a model call made; one made between turns is
// TestTwoReplicasCompactBetweenTurns's.
func TestRestartResumesFromStoredSummary(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open opener) {
		const (
			window          = 8_000
			stepsPerTurn    = 2
			outputBytes     = 3_000
			wantCompactions = 2
			maxTurns        = 20
			sessionID       = "restart"
		)
		ctx := t.Context()
		salt := t.Name()
		clog, logs := &compactionLog{}, &logRecorder{}

		// Process 1: play turns until the guard has compacted twice.
		db1 := open(t)
		createSession(t, db1.svc, sessionID)
		llm1, summ1 := newAgentModel(stepsPerTurn, window), &summarizerModel{}
		r1 := newReplica(t, replicaConfig{name: "before", svc: db1.svc, agentLLM: llm1, summarizer: summ1,
			window: window, outputBytes: outputBytes, log: clog, logs: logs, inlineOnly: true})
		turn := 0
		for turn < maxTurns && len(clog.Events()) < wantCompactions {
			turn++
			clog.setTurn(turn)
			require.NoError(t, r1.runTurn(ctx, sessionID, userMessage(salt, turn), agent.RunConfig{}))
		}
		compactions := len(clog.Events())
		require.GreaterOrEqual(t, compactions, wantCompactions, "the guard compacted within %d turns", maxTurns)
		require.Equal(t, compactions, summ1.Calls(), "one summarizer call per compaction")
		for _, c := range clog.Events() {
			assert.False(t, c.Event.Fallback, "compaction at turn %d used the fallback: %s", c.Turn, c.Event.FallbackReason)
		}

		// Restart: nothing of process 1 survives but the database.
		require.NoError(t, db1.Close())
		db2 := open(t)
		stored := getSession(t, db2.svc, sessionID)
		for _, name := range []string{"compactions", "contents_at_compaction", "summarized_at", "real_tokens", "last_heuristic"} {
			v := rawState(t, stored, stateKey(name))
			require.IsTypef(t, float64(0), v, "state %s after the restart", stateKey(name))
		}
		assert.Equal(t, compactions, stateInt(t, stored, "compactions"))
		watermark := stateInt(t, stored, "contents_at_compaction")
		assert.Positive(t, watermark)
		assert.Positive(t, stateInt(t, stored, "real_tokens"))
		summary, ok := rawState(t, stored, stateKey("summary")).(string)
		require.True(t, ok, "the summary is stored as a string")
		covered := summarizedRe.FindAllString(summary, -1)
		require.NotEmpty(t, covered, "the stored summary keeps the summarized user markers")

		llm2, summ2 := newAgentModel(stepsPerTurn, window), &summarizerModel{}
		r2 := newReplica(t, replicaConfig{name: "after", svc: db2.svc, agentLLM: llm2, summarizer: summ2,
			window: window, outputBytes: outputBytes, log: clog, logs: logs, inlineOnly: true})
		turn++
		clog.setTurn(turn)
		require.NoError(t, r2.runTurn(ctx, sessionID, userMessage(salt, turn), agent.RunConfig{}))

		recs := llm2.Records()
		require.NotEmpty(t, recs)
		first := recs[0]
		assert.True(t, strings.HasPrefix(first.FirstText, "[Conversation summary"),
			"the first request after the restart starts with the summary message, got %.120q", first.FirstText)
		assert.Contains(t, first.FirstText, strings.TrimSpace(summary), "the summary message carries the stored summary")
		// The guard quotes the user's request at compaction time in the
		// summary message; every other summarized user message is gone.
		quoted, _ := rawState(t, stored, stateKey("user_request")).(string)
		for _, tag := range covered {
			if m := markerOfTag(tag); !strings.Contains(quoted, m) {
				assert.NotContains(t, first.Text, m, "a summarized user message was sent again after the restart")
			}
		}
		assert.Contains(t, first.Text, marker(salt, turn), "the new user message is sent")

		assert.Zero(t, summ2.Calls(), "no summary after the restart")
		assert.Equal(t, compactions, summ1.Calls()+summ2.Calls(), "summarizer calls across the restart")
		assert.Equal(t, compactions, stateInt(t, getSession(t, db2.svc, sessionID), "compactions"))

		maxTokens := 0
		for _, r := range append(llm1.Records(), recs...) {
			maxTokens = max(maxTokens, r.Tokens)
		}
		assert.LessOrEqual(t, maxTokens, window, "every request fits the window by the ground truth")
		noSkippedSummary(t, logs)
		t.Logf("turns=%d compactions=%d summarizer calls=%d (before restart %d, after %d) watermark=%d max request=%d/%d tokens (o200k)",
			turn, compactions, summ1.Calls()+summ2.Calls(), summ1.Calls(), summ2.Calls(), watermark, maxTokens, window)
	})
}

// byteCounter is an exact TokenCounter (a token per 4 bytes) that records
// how many bytes it was asked to count.
type byteCounter struct {
	mu    sync.Mutex
	bytes int
}

// CounterName gives the counter a stable identity, so the restarted
// process trusts the prefix record the first one stored under it
// (the engine's NamedTokenCounter).
func (c *byteCounter) CounterName() string { return "bytes-per-4/v1" }

func (c *byteCounter) CountTokens(s string) int {
	c.mu.Lock()
	c.bytes += len(s)
	c.mu.Unlock()
	return len(s)/4 + 1
}

func (c *byteCounter) take() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.bytes
	c.bytes = 0
	return n
}

// TestRestartCountsOnlyWhatIsNew plays turns on ADK's database session
// service, then rebuilds every process-level object on the same database:
// the new process's guard finds the prefix record the last call stored (its
// numbers come back from the database as float64, its contents rebuilt from
// the events), and counts only what its turn adds, not the history.
func TestRestartCountsOnlyWhatIsNew(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open opener) {
		const (
			window       = 200_000 // no compaction
			stepsPerTurn = 2
			outputBytes  = 3_000
			turns        = 6
			sessionID    = "restart-count"
		)
		ctx := t.Context()
		salt := t.Name()
		clog, logs := &compactionLog{}, &logRecorder{}

		db1 := open(t)
		createSession(t, db1.svc, sessionID)
		before := &byteCounter{}
		r1 := newReplica(t, replicaConfig{name: "before", svc: db1.svc, agentLLM: newAgentModel(stepsPerTurn, window), summarizer: &summarizerModel{},
			window: window, outputBytes: outputBytes, log: clog, logs: logs, counter: before})
		for turn := 1; turn <= turns; turn++ {
			require.NoError(t, r1.runTurn(ctx, sessionID, userMessage(salt, turn), agent.RunConfig{}))
		}
		require.Empty(t, clog.Events(), "no compaction")
		require.NoError(t, db1.Close())

		db2 := open(t)
		stored := getSession(t, db2.svc, sessionID)
		record, ok := rawState(t, stored, stateKey("prefix")).(string)
		require.True(t, ok, "the prefix record is stored as a string")
		require.NotEmpty(t, record)
		history := 0
		for ev := range stored.Events().All() {
			if ev.Content != nil {
				for _, p := range ev.Content.Parts {
					history += len(p.Text)
					if p.FunctionResponse != nil {
						history += len(fmt.Sprint(p.FunctionResponse.Response))
					}
				}
			}
		}

		after := &byteCounter{}
		r2 := newReplica(t, replicaConfig{name: "after", svc: db2.svc, agentLLM: newAgentModel(stepsPerTurn, window), summarizer: &summarizerModel{},
			window: window, outputBytes: outputBytes, log: clog, logs: logs, counter: after})
		require.NoError(t, r2.runTurn(ctx, sessionID, userMessage(salt, turns+1), agent.RunConfig{}))
		counted := after.take()
		assert.Less(t, counted, history/3,
			"the restarted guard counts its turn's new contents (%d bytes counted, the history holds %d)", counted, history)
		noSkippedSummary(t, logs)
		t.Logf("history %d bytes; counted after the restart %d bytes", history, counted)
	})
}
