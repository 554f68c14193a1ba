package core

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/coretest"
	"github.com/adk-contextguard/contextguard/core/internal/estimate"
	"github.com/adk-contextguard/contextguard/core/internal/sat"
	"github.com/adk-contextguard/contextguard/core/internal/state"
	"github.com/adk-contextguard/contextguard/core/internal/textcut"
)

// TestAfterModel_OutputCountAtTheLimit: a response that stopped at the
// output limit (MAX_TOKENS) with a function call, in a 128k window. Its
// output count decides whether the request was near the window; a count no
// call could have produced (over the window, or more than twice the
// request's MaxOutputTokens) is treated as unknown, so a request at 4% of
// the window keeps its function call and forces no compaction.
func TestAfterModel_OutputCountAtTheLimit(t *testing.T) {
	const window, maxOut = 128_000, 4_096
	tests := []struct {
		name     string
		history  int // exchanges of about 1,400 tokens
		maxOut   int32
		output   int32
		dropped  bool
		compacts bool
	}{
		{"2^31-1 at 4% of the window", 3, maxOut, math.MaxInt32, false, false},
		{"twice the window at 4%", 3, maxOut, 2 * window, false, false},
		{"over the window by one at 4%, no MaxOutputTokens", 3, 0, window + 1, false, false},
		{"far over MaxOutputTokens, under the window, at 4%", 3, maxOut, 100_000, false, false},
		{"at MaxOutputTokens, at 4%: room was left", 3, maxOut, maxOut, false, false},
		{"at MaxOutputTokens near the window: cut for want of room", 65, maxOut, maxOut, true, true},
		{"2^31-1 near the window: unknown, the buffer decides", 65, maxOut, math.MaxInt32, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, _ := newTestGuard(t, fixedSummary("x"), WithMaxTokens(window))
			ctx := newFakeCtx("a").withUser("LATEST go on")
			req := request(append(coretest.History(tt.history, 900), userMsg("LATEST go on"))...)
			req.Config.MaxOutputTokens = tt.maxOut
			_, err := g.beforeModel(ctx, req)
			require.NoError(t, err)
			prompt := sat.Scale(ctx.getInt(state.KeyLastEstimate), estimate.DefaultCorrection)
			if tt.history < 10 {
				require.Less(t, prompt, window/20, "about 4% of the window")
			} else {
				require.Greater(t, prompt+maxOut, ctx.getInt(state.KeyThreshold), "near the window")
				require.Less(t, prompt, window, "under it")
			}

			resp := &Response{
				Content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{
					{Text: "Let me write the file."},
					{FunctionCall: &genai.FunctionCall{Name: "write_file", Args: map[string]any{"path": "a.go"}}},
				}},
				UsageMetadata: &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: int32(prompt), CandidatesTokenCount: tt.output},
				FinishReason:  genai.FinishReasonMaxTokens,
			}
			out, err := g.afterModel(ctx, resp, nil)
			require.NoError(t, err)
			if !tt.dropped {
				assert.Nil(t, out, "the response and its function call pass through")
			} else {
				require.NotNil(t, out)
				assert.Contains(t, textcut.ContentText(out.Content), cutCallNote)
			}
			assert.Equal(t, tt.compacts, ctx.getInt(state.KeyCompactNext) == 1, "the next call compacts first")
		})
	}
}

// TestPlausibleOutput: the output counts believed for a response cut at
// the output limit.
func TestPlausibleOutput(t *testing.T) {
	st := state.Agent{Window: 8_000, MaxOutput: 1_000}
	tests := []struct {
		name string
		n    int
		st   state.Agent
		want int
	}{
		{"at the limit", 1_000, st, 1_000},
		{"twice the limit", 2_000, st, 2_000},
		{"past twice the limit", 2_001, st, 0},
		{"no MaxOutputTokens: the window bounds it", 7_000, state.Agent{Window: 8_000}, 7_000},
		{"over the window", 8_001, state.Agent{Window: 8_000}, 0},
		{"zero", 0, st, 0},
		{"negative", -1, st, 0},
		{"2^31-1", math.MaxInt32, st, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, plausibleOutput(tt.n, tt.st))
		})
	}
}
