package contextguard

import (
	"context"
	"testing"

	"github.com/adk-contextguard/contextguard/contextguardtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWithTokenCounter_CountsWithTheUsersTokenizer(t *testing.T) {
	calls := 0
	tc := TokenCounterFunc(func(s string) int { calls++; return contextguardtest.O200kCount(s) })
	cfg := agentConfigFor("a", `Add("a")`, fixedSummary("x"), []AgentOption{WithTokenCounter(tc)})
	require.Empty(t, cfg.errs)
	est, _ := cfg.estimator("gpt-4o")
	text := contextguardtest.Generate(contextguardtest.KindLogLines, 4000, 1)
	assert.Equal(t, contextguardtest.O200kCount(text), est.text(text))
	assert.InDelta(t, 1.0, est.defaultFactor(), 1e-9, "an exact counter needs no default correction")

	c := respMsg("kubectl_logs", map[string]any{"output": text})
	n := est.content(c)
	assert.Greater(t, n, contextguardtest.O200kCount(text), "payload plus name, overhead and framing")
	assert.Less(t, n, contextguardtest.O200kCount(text)+40)

	// Counts are cached per content: the counter runs once per new content.
	sess := &sessionEntry{cache: newCountCache()}
	ce := cachedEstimator{tokenEstimator: est, cache: sess.cache}
	sess.cache.begin()
	before := calls
	ce.content(c)
	first := calls - before
	assert.Equal(t, 2, first, "the tool name and the payload")
	sess.cache.begin()
	ce.content(c)
	assert.Equal(t, before+first, calls, "a content seen before is not counted again")

	_, err := func() (any, error) {
		g := New(nil)
		g.Add("a", fixedSummary("x"), WithTokenCounter(nil))
		return g.Plugin()
	}()
	require.ErrorContains(t, err, "WithTokenCounter: counter is nil")
}

// TestWithTokenCounter_TriggersAtTheThreshold: with an exact counter the guard
// compacts close to its trigger (80% of the window), not early.
func TestWithTokenCounter_TriggersAtTheThreshold(t *testing.T) {
	counter := contextguardtest.TokenizerCounter(1.0)
	sum := contextguardtest.NewSummarizerModel(contextguardtest.SummarizerConfig{Counter: counter})
	logs := &logBuffer{}
	g := New(NewCrushRegistry(WithRegistryLogger(logs.logger())), WithLogger(logs.logger()))
	g.Add("assistant", sum, WithMaxTokens(8_000), WithTokenCounter(TokenCounterFunc(contextguardtest.O200kCount)))
	res, err := contextguardtest.Run(context.Background(), contextguardtest.Scenario{
		Name: "ExactCounter_8k", Window: 8_000, Turns: 30, Plan: toolHeavyPlan(8_000), Seed: 8,
	}, contextguardtest.RunConfig{Counter: counter, Plugins: g.PluginConfig(), Summarizer: sum})
	require.NoError(t, err)
	t.Log(res)
	require.Positive(t, res.CompactionSteps)
	assert.Zero(t, res.OverflowsRejected)
	assert.Zero(t, res.OverflowsSurfaced)
	assert.Greater(t, res.MeanUtilizationAtTrigger, 0.70, "compacts near the 80%% trigger, not early")
	assert.LessOrEqual(t, res.MaxRealTokens, 8_000)
}
