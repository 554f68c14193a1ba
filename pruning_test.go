package contextguard

import (
	"context"
	"fmt"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/adk-contextguard/contextguard/contextguardtest"
	"github.com/adk-contextguard/contextguard/core/coretest"
)

// TestPruning_StressScenarios plays the tool-heavy rows of the seed matrix
// with the threshold strategy, without and with pruning, and with the
// sliding window and pruning: pruning must cut the summarizer calls, and no
// run may overflow or break a pair.
func TestPruning_StressScenarios(t *testing.T) {
	rows := map[string]contextguardtest.Scenario{}
	for _, sc := range coretest.SeedMatrix() {
		rows[sc.FullName()] = sc
	}
	for _, name := range []string{"Stress_200k_ToolHeavy", "Stress_200k_KubeAgent", "Stress_200k_CodingAgent"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			sc, ok := rows[name]
			require.True(t, ok, "%s is not in the seed matrix", name)
			play := func(opts ...AgentOption) *contextguardtest.Result {
				sum := contextguardtest.NewSummarizerModel(contextguardtest.SummarizerConfig{})
				g := New(nil, WithLogger(slog.New(slog.DiscardHandler)))
				g.Add("assistant", sum, append([]AgentOption{WithMaxTokens(sc.Window)}, opts...)...)
				res, err := contextguardtest.Run(context.Background(), sc, contextguardtest.RunConfig{Plugins: g.PluginConfig(), Summarizer: sum})
				require.NoError(t, err)
				assert.Zero(t, res.OverflowsRejected, res.String())
				assert.Zero(t, res.OverflowsSurfaced)
				assert.Empty(t, res.Errors)
				assert.Zero(t, res.PairViolations)
				assert.Zero(t, res.MissingLatestUser)
				assert.LessOrEqual(t, res.MaxRealTokens, sc.Window)
				return res
			}
			without := play()
			with := play(WithToolResultPruning(0))
			sliding := play(WithToolResultPruning(0), WithSlidingWindow(0))
			fmt.Printf("%-26s summarizer calls: %d without pruning, %d with pruning (threshold), %d with pruning (sliding window, 20 turns); max real tokens %d / %d / %d of %d\n",
				name, without.SummarizerCalls, with.SummarizerCalls, sliding.SummarizerCalls,
				without.MaxRealTokens, with.MaxRealTokens, sliding.MaxRealTokens, sc.Window)
			assert.Positive(t, without.SummarizerCalls, "the row must need compaction without pruning")
			assert.Less(t, with.SummarizerCalls, without.SummarizerCalls, "pruning must cut summarizer calls")
		})
	}
}
