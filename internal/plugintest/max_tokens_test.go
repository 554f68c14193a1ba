package plugintest

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	. "github.com/adk-contextguard/contextguard"
	"github.com/adk-contextguard/contextguard/contextguardtest"
	"github.com/adk-contextguard/contextguard/contextguardtest/o200k"
	"github.com/adk-contextguard/contextguard/core/coretest"
)

// TestMaxTokens_CutResponse plays sessions through a real runner where the
// model stops one response, a function call, at the output limit (finish
// reason MAX_TOKENS). The window is 32k, the trigger 25.6k and the output
// limit 4k, so a request of over 21.6k tokens is near the window: the
// prompt plus the output limit reaches the trigger.
//
//   - Near the window, the cut call is not run: the turn ends with a short
//     model text saying the output was cut, and the next call compacts
//     first, although its request is under the trigger.
//   - With plenty of room left, the response passes through untouched: the
//     call is run and the turn goes on, and nothing is compacted.
//
// Before the guard watched the finish reason, the cut call was run near the
// window as anywhere else.
func TestMaxTokens_CutResponse(t *testing.T) {
	t.Parallel()
	const (
		window    = 32_000
		output    = 4_000
		threshold = 25_600 // the default trigger: 20% below the window
	)
	tests := []struct {
		name string
		// cut chooses the request whose response is cut: the first
		// answering a user message (step 0, a function call) in this range.
		minTokens, maxTokens int
		near                 bool
	}{
		{"near the window", threshold - output + 500, threshold, true},
		{"plenty of room", 3_000, 8_000, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			cutAt := -1
			m := contextguardtest.NewScriptedModel(contextguardtest.ScriptConfig{
				Name:    "gpt-4.1",
				Window:  window,
				Counter: o200k.Counter(1),
				Plan: func(int) contextguardtest.TurnPlan {
					return contextguardtest.TurnPlan{Steps: contextguardtest.Sequential(
						contextguardtest.Call("read_file", 2_400), contextguardtest.Call("grep", 2_400))}
				},
				CutAtOutputLimit: func(rec coretest.RequestRecord) bool {
					mu.Lock()
					defer mu.Unlock()
					if cutAt < 0 && rec.Step == 0 && rec.Tokens >= tt.minTokens && rec.Tokens < tt.maxTokens {
						cutAt = rec.Index
					}
					return rec.Index == cutAt
				},
			})
			sum := contextguardtest.NewSummarizerModel(contextguardtest.SummarizerConfig{SummarySize: 2_000})
			logs := &logBuffer{}
			var reasons []string
			g := New(NewCrushRegistry(WithRegistryLogger(quietLogger)), WithLogger(logs.logger()),
				WithOnCompaction(func(_ context.Context, e CompactionEvent) {
					mu.Lock()
					defer mu.Unlock()
					reasons = append(reasons, e.Reason)
				}))
			g.Add("assistant", sum, WithMaxTokens(window))
			a := newToolAgent(t, g, m, &genai.GenerateContentConfig{MaxOutputTokens: output}, "read_file", "grep")

			var cutTurn, callsBefore int
			var cutTexts []string
			for i := range 40 {
				calls := sum.Calls()
				texts, errs := a.turn("s", i)
				require.Empty(t, errs, "turn %d", i)
				mu.Lock()
				c := cutAt
				mu.Unlock()
				if c >= 0 {
					cutTurn, callsBefore, cutTexts = i, calls, texts
					break
				}
			}
			if cutAt < 0 {
				for _, r := range m.Requests() {
					t.Logf("request %d turn %d step %d: %d tokens", r.Index, r.Turn, r.Step, r.Tokens)
				}
			}
			require.GreaterOrEqual(t, cutAt, 0, "a response was cut")
			reqs := m.Requests()
			cut := reqs[cutAt]
			t.Logf("cut response to request %d (turn %d step %d, %d tokens)", cut.Index, cut.Turn, cut.Step, cut.Tokens)

			if !tt.near {
				require.Greater(t, len(reqs), cutAt+1, "the turn goes on")
				after := reqs[cutAt+1]
				assert.Equal(t, cut.Turn, after.Turn, "the cut call was run: the same turn continues")
				assert.Equal(t, cut.Step+1, after.Step)
				assert.NotContains(t, strings.Join(cutTexts, "\n"), cutCallNote)
				assert.Equal(t, callsBefore, sum.Calls(), "nothing compacted")
				assert.NotContains(t, logs.String(), "stopped at the output limit")
				return
			}

			assert.Equal(t, cutAt+1, len(reqs), "the cut call was not run: the turn ended with the cut response")
			assert.Contains(t, strings.Join(cutTexts, "\n"), cutCallNote, "the turn ends with the note")
			assert.Equal(t, callsBefore, sum.Calls(), "the cut turn itself compacted nothing")

			// The next turn compacts first, although its request is under
			// the trigger.
			_, errs := a.turn("s", cutTurn+1)
			require.Empty(t, errs)
			reqs = m.Requests()
			require.Greater(t, len(reqs), cutAt+1)
			next := reqs[cutAt+1]
			assert.Equal(t, cutTurn+1, next.Turn)
			assert.Greater(t, sum.Calls(), callsBefore, "the next call compacted first")
			assert.Less(t, next.Tokens, cut.Tokens/2, "the next request was compacted")
			assert.Contains(t, logs.String(), "reason=output_limit")
			mu.Lock()
			require.NotEmpty(t, reasons)
			assert.Equal(t, "output_limit", reasons[len(reasons)-1], "the event says why it compacted")
			mu.Unlock()
			calls := sum.Calls()
			_, errs = a.turn("s", cutTurn+2)
			require.Empty(t, errs)
			assert.Equal(t, calls, sum.Calls(), "compacting first happens once")
		})
	}
}
