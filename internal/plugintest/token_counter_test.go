package plugintest

import (
	"context"
	"testing"

	. "github.com/adk-contextguard/contextguard"
	"github.com/adk-contextguard/contextguard/contextguardtest"
	"github.com/adk-contextguard/contextguard/contextguardtest/o200k"
	coreo200k "github.com/adk-contextguard/contextguard/core/coretest/o200k"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWithTokenCounter_TriggersAtTheThreshold: with an exact counter the guard
// compacts close to its trigger (80% of the window), not early.
func TestWithTokenCounter_TriggersAtTheThreshold(t *testing.T) {
	counter := o200k.Counter(1.0)
	sum := contextguardtest.NewSummarizerModel(contextguardtest.SummarizerConfig{Counter: counter})
	logs := &logBuffer{}
	g := New(NewCrushRegistry(WithRegistryLogger(logs.logger())), WithLogger(logs.logger()))
	g.Add("assistant", sum, WithMaxTokens(8_000), WithTokenCounter(TokenCounterFunc(coreo200k.Count)))
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
