package plugintest

import (
	"math"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestPoisonedCounts plays a 30-turn tool-heavy session through a real
// runner against an exact o200k ground truth while the model reports wrong
// prompt-token counts. Whatever it reports, the session keeps getting
// answers (no ErrIrreducible, no other error) and no request exceeds the
// window by the ground truth. Before counts were judged, one count of
// 2^31-1 made every later call of a session whose system prompt or tools
// fill a fifth of the window fail with ErrIrreducible (the calibration
// factor inflated the irreducible part).
func TestPoisonedCounts(t *testing.T) {
	t.Parallel()
	rows := []string{"Stress_8k_KubeAgent", "Stress_8k_LargeSystemPrompt", "Stress_8k_HeavyToolDefinitions"}
	cumulative := func() func(int, int) int {
		var mu sync.Mutex
		sum := 0
		return func(_, tokens int) int {
			mu.Lock()
			defer mu.Unlock()
			sum += tokens
			return sum
		}
	}
	tests := []struct {
		name   string
		report func(index, tokens int) int
	}{
		{"zero", func(int, int) int { return 0 }},
		{"negative", func(int, int) int { return -1 }},
		{"2^31-1 always", func(int, int) int { return math.MaxInt32 }},
		{"2^31-1 once", func(i, n int) int {
			if i == 3 {
				return math.MaxInt32
			}
			return n
		}},
		{"100x too low", func(_, n int) int { return n / 100 }},
		{"5x too high once", func(i, n int) int {
			if i == 5 {
				return 5 * n
			}
			return n
		}},
		{"5x too high always", func(_, n int) int { return 5 * n }},
		{"cumulative", cumulative()},
		{"huge and zero alternating", func(i, n int) int {
			if i%2 == 0 {
				return math.MaxInt32
			}
			return 0
		}},
	}
	for _, row := range rows {
		for _, tt := range tests {
			t.Run(row+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				sc := seedRow(t, row)
				out := runScenario(t, sc, scenarioRun{mode: modeTokenizerGPT, reportUsage: tt.report})
				res := out.res
				assert.Empty(t, res.Errors, "every turn is answered: %s", res)
				assert.Zero(t, res.OverflowsRejected, "no request over the window: %s", res)
				assert.Equal(t, sc.Turns, res.Turns)
				assert.LessOrEqual(t, res.MaxRealTokens, sc.Window)
			})
		}
	}
}
