package plugintest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/adk/model"
	"google.golang.org/genai"

	. "github.com/adk-contextguard/contextguard"
	"github.com/adk-contextguard/contextguard/contextguardtest"
	"github.com/adk-contextguard/contextguard/contextguardtest/o200k"
	"github.com/adk-contextguard/contextguard/core/coretest"
)

// toolHeavyPlan alternates parallel and sequential tool calls whose outputs
// are pretty JSON, markdown tables and log lines, scaled to the window.
func toolHeavyPlan(window int) func(turn int) contextguardtest.TurnPlan {
	unit := max(window/20, 300) // bytes per tool result
	return func(turn int) contextguardtest.TurnPlan {
		calls := []contextguardtest.ToolCall{
			{Name: "http_get", Size: unit + (turn*131)%unit, Kind: coretest.KindPrettyJSON},
			{Name: "sql_query", Size: unit/2 + (turn*71)%unit, Kind: coretest.KindMarkdownTable},
			{Name: "kubectl_logs", Size: unit + (turn*37)%unit, Kind: coretest.KindLogLines},
		}
		if turn%2 == 0 {
			return contextguardtest.TurnPlan{Steps: contextguardtest.Parallel(calls...)}
		}
		return contextguardtest.TurnPlan{Steps: contextguardtest.Sequential(calls...)}
	}
}

// TestThreshold_ThroughRunner drives a real runner.Runner (llmagent,
// functiontool tools, in-memory sessions) with a scripted model whose
// PromptTokenCount and window come from exact o200k counts of the request it
// receives, for 30 tool-heavy turns in an 8k and a 200k window.
func TestThreshold_ThroughRunner(t *testing.T) {
	for _, window := range []int{8_000, 200_000} {
		t.Run(fmt.Sprintf("%dk", window/1000), func(t *testing.T) {
			counter := o200k.Counter(1.0)
			sum := contextguardtest.NewSummarizerModel(contextguardtest.SummarizerConfig{Counter: counter, KeepText: true})
			logs := &logBuffer{}
			g := New(NewCrushRegistry(WithRegistryLogger(logs.logger())), WithLogger(logs.logger()))
			g.Add("assistant", sum, WithMaxTokens(window))

			var mu sync.Mutex
			var requests []*model.LLMRequest
			var toolMarkers []string
			res, err := contextguardtest.Run(context.Background(), contextguardtest.Scenario{
				Name:   fmt.Sprintf("ToolHeavy_%dk", window/1000),
				Window: window,
				Turns:  30,
				Plan:   toolHeavyPlan(window),
				Seed:   int64(window),
			}, contextguardtest.RunConfig{
				Counter:    counter,
				Plugins:    g.PluginConfig(),
				Summarizer: sum,
				OnRequest: func(_ int, req *model.LLMRequest) {
					mu.Lock()
					defer mu.Unlock()
					cp := *req
					cp.Contents = append([]*genai.Content(nil), req.Contents...)
					requests = append(requests, &cp)
					for _, c := range req.Contents {
						for _, p := range c.Parts {
							if p.FunctionResponse != nil {
								toolMarkers = append(toolMarkers, contextguardtest.MarkerPattern.FindAllString(compactJSON(p.FunctionResponse.Response), -1)...)
							}
						}
					}
				},
			})
			require.NoError(t, err)
			t.Log(res)

			// Compaction happened, counted on the summarizer itself.
			require.Positive(t, sum.Calls(), "the guard never summarized")
			assert.Equal(t, sum.Calls(), res.SummarizerCalls)
			assert.Zero(t, res.NonShrinkingCompactions)

			// No request exceeds the window by the ground truth.
			assert.Zero(t, res.OverflowsRejected)
			assert.Zero(t, res.OverflowsSurfaced)
			assert.LessOrEqual(t, res.MaxRealTokens, window)
			assert.Empty(t, res.Errors)

			// The latest user message is in every request; pairs are intact.
			assert.Zero(t, res.MissingLatestUser)
			assert.Zero(t, res.PairViolations)

			// After a compaction every request starts with the summary message
			// and holds none of the summarized raw contents.
			summarized := map[string]bool{}
			recs := res.Requests
			require.Len(t, requests, len(recs))
			calls := sum.Records()
			seenCalls := 0
			for i, rec := range recs {
				// The calls made up to a compaction step are what its
				// summary covers (a summary prepared in the background is
				// called steps before the request that uses it).
				for rec.Compaction && seenCalls < len(calls) && seenCalls < rec.CallsSoFar {
					for _, m := range calls[seenCalls].Markers {
						summarized[m] = true
					}
					seenCalls++
				}
				if seenCalls == 0 {
					continue
				}
				req := requests[i]
				require.NotEmpty(t, req.Contents)
				first := contentText(req.Contents[0])
				require.True(t, strings.HasPrefix(first, summaryHeader), "request %d does not start with the summary", i)
				rest := contextguardtest.FlattenText(req.Contents[1:])
				for m := range summarized {
					if m == rec.LatestUser {
						continue // the current request is quoted by the continuation
					}
					assert.NotContains(t, rest, m, "request %d carries summarized raw content %s", i, m)
				}
			}

			// A planted string from a tool result reached the summarizer.
			inputs := map[string]bool{}
			for _, c := range calls {
				for _, m := range c.Markers {
					inputs[m] = true
				}
			}
			reached := 0
			for _, m := range toolMarkers {
				if inputs[m] {
					reached++
				}
			}
			assert.Positive(t, reached, "no tool-result marker reached the summarizer")
		})
	}
}

// sumCallsBefore is the number of summarizer calls made before request i
// reached the model.
func sumCallsBefore(recs []coretest.RequestRecord, i int) int {
	n := 0
	for _, r := range recs[:i+1] {
		n += r.SummarizerCalls
	}
	return n
}
