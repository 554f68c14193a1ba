package plugintest

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	. "github.com/adk-contextguard/contextguard"
	"github.com/adk-contextguard/contextguard/contextguardtest"
	"github.com/adk-contextguard/contextguard/contextguardtest/o200k"
)

// TestSlidingWindow_FillBudget_ThroughRunner plays 40 turns through a real
// runner with a summarizer that writes summaries as long as it is asked
// for, in its own tokens: no compaction makes the request bigger, by the
// ground truth. Short text turns make the turn trigger fire on the smallest
// spans it allows (2,048 tokens); before, half the buffer was asked for
// them and every compaction made the request grow. With a provider that
// charges twice what the summarizer's tokenizer counts, the length asked
// was the calibrated one, so summaries came out twice as heavy as the room
// set aside for them and compactions were discarded (summarizer calls paid
// for nothing); the summarizer is now told the length in its own measure.
func TestSlidingWindow_FillBudget_ThroughRunner(t *testing.T) {
	chat := func(int) contextguardtest.TurnPlan {
		return contextguardtest.TurnPlan{UserTextSize: 400, ResponseSize: 400}
	}
	for _, tc := range []struct {
		window   int
		provider float64 // the provider's tokens per summarizer token
	}{{32_000, 1}, {128_000, 1}, {32_000, 2}, {128_000, 2}} {
		t.Run(fmt.Sprintf("%dk_provider_x%g", tc.window/1000, tc.provider), func(t *testing.T) {
			t.Parallel()
			window := tc.window
			sum := contextguardtest.NewSummarizerModel(contextguardtest.SummarizerConfig{
				Name: "gemini-2.5-flash", FillBudget: true, Counter: o200k.Counter(1.0),
			})
			run := runSlidingAgainst(t, contextguardtest.Scenario{
				Name: fmt.Sprintf("SlidingFillBudget_%dk", window/1000), Window: window, Turns: 40, Plan: chat, Seed: 11,
			}, o200k.Counter(tc.provider), sum, WithSlidingWindow(6))
			run.assertHealthy(t)
			assert.Zero(t, run.res.NonShrinkingCompactions, "no non-shrinking compaction")
			require.NotEmpty(t, run.events)
			calls, filled := 0, 0
			for _, e := range run.events {
				calls += e.SummarizerCalls
				assert.False(t, e.Discarded)
			}
			for _, r := range sum.Records() {
				if r.Asked > 0 {
					filled++
				}
			}
			assert.Equal(t, sum.Calls(), filled, "every call was asked a length, and filled it")
			t.Logf("%d compactions, %.2f summarizer calls per compaction", len(run.events), float64(calls)/float64(len(run.events)))
			assert.LessOrEqual(t, float64(calls)/float64(len(run.events)), 1.1)
		})
	}
}
