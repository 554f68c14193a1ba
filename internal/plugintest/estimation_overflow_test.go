package plugintest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	. "github.com/adk-contextguard/contextguard"
	"github.com/adk-contextguard/contextguard/contextguardtest"
	"github.com/adk-contextguard/contextguard/contextguardtest/o200k"
	"github.com/adk-contextguard/contextguard/core/coretest"
)

// TestEarlierGuardOverflowShapes replays the three request shapes on which
// the earlier guard's len/4 estimate let a request overflow: a history that
// tokenizes lighter than len/4, so calibration settles at its 1.0 floor,
// followed by content that tokenizes much denser. The ground truth is exact
// o200k times a provider factor.
func TestEarlierGuardOverflowShapes(t *testing.T) {
	tests := []struct {
		name   string
		sc     contextguardtest.Scenario
		factor float64
	}{
		{
			// Prose and indented JSON, then one base64 burst of 40% of the
			// window (80k tokens); usage metadata on.
			name:   "200k_ProseAndJSON_ThenBase64Burst",
			factor: 1.0,
			sc: contextguardtest.Scenario{
				Window: 200_000, Turns: 12,
				Plan: func(turn int) contextguardtest.TurnPlan {
					if turn == 11 {
						return contextguardtest.TurnPlan{Steps: contextguardtest.Parallel(
							contextguardtest.ToolCall{Name: "fetch", Size: 80_000 * 1.35, Kind: coretest.KindBase64})}
					}
					return contextguardtest.TurnPlan{UserTextSize: 3_000, ResponseSize: 4_000, Steps: contextguardtest.Parallel(
						contextguardtest.ToolCall{Name: "http_get", Size: 40_000, Kind: coretest.KindPrettyJSON})}
				},
			},
		},
		{
			// A prose history, then one 12k-character markdown table.
			name:   "8k_Prose_ThenMarkdownTable",
			factor: 1.2,
			sc: contextguardtest.Scenario{
				Window: 8_000, Turns: 6,
				Plan: func(turn int) contextguardtest.TurnPlan {
					if turn == 5 {
						return contextguardtest.TurnPlan{Steps: contextguardtest.Parallel(
							contextguardtest.ToolCall{Name: "sql_query", Size: 12_000, Kind: coretest.KindMarkdownTable})}
					}
					return contextguardtest.TurnPlan{UserTextSize: 1_200, ResponseSize: 1_500}
				},
			},
		},
		{
			// 25 turns of 20k-character base64 tool results, no usage metadata.
			name:   "200k_Base64Results_NoUsageMetadata",
			factor: 1.2,
			sc: contextguardtest.Scenario{
				Window: 200_000, Turns: 25, NoUsageMetadata: true,
				Plan: func(int) contextguardtest.TurnPlan {
					return contextguardtest.TurnPlan{Steps: contextguardtest.Parallel(
						contextguardtest.ToolCall{Name: "fetch", Size: 20_000, Kind: coretest.KindBase64})}
				},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			counter := o200k.Counter(tt.factor)
			sum := contextguardtest.NewSummarizerModel(contextguardtest.SummarizerConfig{Counter: counter})
			logs := &logBuffer{}
			g := New(NewCrushRegistry(WithRegistryLogger(logs.logger())), WithLogger(logs.logger()))
			g.Add("assistant", sum, WithMaxTokens(tt.sc.Window))
			tt.sc.Name, tt.sc.Seed = tt.name, 42
			res, err := contextguardtest.Run(context.Background(), tt.sc, contextguardtest.RunConfig{
				Counter: counter, Plugins: g.PluginConfig(), Summarizer: sum,
			})
			require.NoError(t, err)
			t.Log(res)
			assert.Zero(t, res.OverflowsRejected, "a request exceeded the window by the ground truth")
			assert.Zero(t, res.OverflowsSurfaced)
			assert.LessOrEqual(t, res.MaxRealTokens, tt.sc.Window)
			assert.Positive(t, res.SummarizerCalls, "the dense content must trigger a compaction")
			assert.Zero(t, res.MissingLatestUser)
			assert.Empty(t, res.Errors)
		})
	}
}
