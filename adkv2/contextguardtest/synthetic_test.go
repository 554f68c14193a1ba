package contextguardtest

import (
	"context"
	"testing"

	"github.com/adk-contextguard/contextguard/core/coretest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/agent/llmagent"
	"google.golang.org/adk/v2/plugin"
	"google.golang.org/adk/v2/runner"
	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"
)

// syntheticText is the message ADK v2 appends when the contents it built end
// with a model content (internal/llminternal/contents_processor.go of ADK v2).
const syntheticText = "Continue processing previous requests as instructed. Exit or provide a summary if no more outputs are needed."

// A run resumed without a user message (runner.Run with a nil message)
// ends its history with the model's answer, so ADK v2 appends its synthetic
// "Continue processing…" user message before any plugin runs. The driver's
// pieces (observer plugin, meter, scripted model) see the same request, count
// the message (the provider is sent it), and are not misled by it: the
// position stays in the turn, the user's latest request is still the one the
// user sent, no marker is lost, and the next request's effective input drops
// it (it is not in the session's log).
func TestRun_SyntheticContinueMessage(t *testing.T) {
	ctx := context.Background()
	counter := SeedCounter(1)
	sum := NewSummarizerModel(SummarizerConfig{})
	d := &driver{meter: coretest.NewMeter(toKit(counter), sum.kit())}
	m := NewScriptedModel(ScriptConfig{Counter: counter, Plan: func(int) TurnPlan { return TurnPlan{} }})
	m.observe = d.observe
	ag, err := llmagent.New(llmagent.Config{Name: "assistant", Model: m})
	require.NoError(t, err)
	observer, err := plugin.New(plugin.Config{Name: "observer", BeforeModelCallback: d.beforeModel})
	require.NoError(t, err)
	svc := session.InMemoryService()
	r, err := runner.New(runner.Config{AppName: "app", Agent: ag, SessionService: svc, PluginConfig: runner.PluginConfig{Plugins: []*plugin.Plugin{observer}}})
	require.NoError(t, err)
	_, err = svc.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "s"})
	require.NoError(t, err)

	sc := Scenario{Name: "synthetic", Turns: 2, Seed: 7}
	play := func(msg *genai.Content) {
		for _, err := range r.Run(ctx, "u", "s", msg, agent.RunConfig{}) {
			require.NoError(t, err)
		}
	}
	first, marker := coretest.UserContent(sc, 0, sc.TurnPlan(0))
	d.meter.SetLatestUser(marker)
	play(first)
	play(nil) // resumed: the history ends with the model's answer
	second, marker2 := coretest.UserContent(sc, 1, sc.TurnPlan(1))
	d.meter.SetLatestUser(marker2)
	play(second)

	recs := d.meter.Records()
	require.Len(t, recs, 3)
	resumed := recs[1]
	assert.Equal(t, 3, resumed.Contents, "user message, model answer, synthetic message")
	assert.Equal(t, resumed.Contents, resumed.RawContents, "added before the plugins: the observer sees it")
	assert.Equal(t, syntheticText, resumed.LastUserText, "the record shows the request as sent")
	assert.Equal(t, 0, resumed.Turn, "no turn tag: the position stays in turn 0")
	assert.True(t, resumed.HasLatestUser, "the user's latest request is still the user's message")
	assert.Empty(t, resumed.LostMarkers)
	got, err := svc.Get(ctx, &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s"})
	require.NoError(t, err)
	var logged []*genai.Content
	for ev := range got.Session.Events().All() {
		if ev.Content != nil {
			logged = append(logged, ev.Content)
		}
	}
	require.GreaterOrEqual(t, len(logged), 2)
	synthetic := CountContents(counter, []*genai.Content{genai.NewContentFromText(syntheticText, genai.RoleUser)})
	assert.Equal(t, resumed.RawTokens, resumed.Tokens, "no guard: sent as built")
	// Same instruction, one content more than the first request (the
	// model's answer), plus the synthetic message.
	assert.Equal(t, recs[0].Tokens+CountContents(counter, logged[1:2])+synthetic, resumed.Tokens, "the ground truth counts the synthetic message")

	next := recs[2]
	assert.Equal(t, 1, next.Turn)
	assert.Equal(t, 4, next.Contents, "the synthetic message is not in the log: it is not sent again")
	assert.Equal(t, next.RawTokens, next.EffectiveInput, "no guard: the effective input is the request as built, without the synthetic message")
}
