package contextguard

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/agent/llmagent"
	"google.golang.org/adk/v2/runner"
	"google.golang.org/adk/v2/session"

	"github.com/adk-contextguard/contextguard/adkv2/contextguardtest"
)

// TestBetweenTurns_AnchorsTheFinalResponse: on ADK v2, a compaction made
// once the run has ended anchors its summary to the event of the run's
// final response, which joined the log after the run's last model call:
// the coverage is rebuilt from the log as it is then (lazyCoverage.Refresh),
// also when the run's model calls built theirs (a summary was stored).
func TestBetweenTurns_AnchorsTheFinalResponse(t *testing.T) {
	ctx := t.Context()
	svc := session.InMemoryService()
	llm := &btModel{}
	sum := contextguardtest.NewSummarizerModel(contextguardtest.SummarizerConfig{})
	var mu sync.Mutex
	var events []CompactionEvent
	g := New(NewCrushRegistry(WithRegistryLogger(btQuiet)), WithLogger(btQuiet), WithSessionService(svc),
		WithOnCompaction(func(_ context.Context, ev CompactionEvent) {
			mu.Lock()
			defer mu.Unlock()
			events = append(events, ev)
		}))
	// A trigger that each turn's growth reaches: every run ends with a
	// compaction, so the run after one has counted its request whole and
	// built its coverage.
	g.Add(btAgent, sum, WithMaxTokens(btWindow), WithTriggerTokens(1_600))
	a, err := llmagent.New(llmagent.Config{Name: btAgent, Model: llm, Instruction: "Review what the user sends."})
	require.NoError(t, err)
	r, err := runner.New(runner.Config{AppName: btApp, Agent: a, SessionService: svc, PluginConfig: g.PluginConfig()})
	require.NoError(t, err)
	_, err = svc.Create(ctx, &session.CreateRequest{AppName: btApp, UserID: btUser, SessionID: btSession})
	require.NoError(t, err)

	for i := 0; i < btTurns; i++ {
		for _, err := range r.Run(ctx, btUser, btSession, genai.NewContentFromText(btMessage(i), genai.RoleUser), agent.RunConfig{}) {
			require.NoError(t, err)
		}
		mu.Lock()
		n := len(events)
		mu.Unlock()
		if n < 2 {
			// The second compaction is made while a summary is stored: the
			// run's model calls built their coverage before the final
			// response was in the log.
			continue
		}
		resp, err := svc.Get(ctx, &session.GetRequest{AppName: btApp, UserID: btUser, SessionID: btSession})
		require.NoError(t, err)
		final := ""
		for ev := range resp.Session.Events().All() {
			if ev.Author == btAgent && ev.Content != nil {
				final = ev.ID
			}
		}
		anchor, err := resp.Session.State().Get("__context_guard_anchor_" + btAgent)
		require.NoError(t, err)
		assert.Equal(t, final, anchor, "the summary is anchored to the final response's event")
		assert.Equal(t, RanBetweenTurns, events[1].Ran)
		return
	}
	t.Fatal("the conversation never reached the trigger")
}
