package plugintest

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/tool"
	"google.golang.org/adk/tool/functiontool"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/contextguardtest"

	. "github.com/adk-contextguard/contextguard"
)

// TestUsage_ThroughARunner follows one session's Usage, read with the
// session service as an HTTP handler would, turn after turn until the
// conversation compacts: before the first call nothing is known; after
// each call Usage holds the guard's count of the request it let through,
// the provider's count of that same request, the threshold and window,
// and the utilization; the compaction is counted, with its time and reason.
// The compaction runs once the run that reaches the trigger's neighbourhood
// ends (README, Compaction between turns): Usage then holds the compacted
// history's count, persisted with the session service.
func TestUsage_ThroughARunner(t *testing.T) {
	llm := contextguardtest.NewScriptedModel(contextguardtest.ScriptConfig{Name: "gemini-2.5-flash", Counter: contextguardtest.SeedCounter(1)})
	f := newFixture(t, fixtureConfig{llm: llm, sum: fixedSummary("SUMMARY: the user sent long messages.")})

	assert.Equal(t, Usage{Agent: fxAgent}, f.usage(), "nothing is known before the first model call")

	const maxTurns = 12
	for i := 0; i < maxTurns && len(f.compactions()) == 0; i++ {
		f.turn(i, 2_500)
		u := f.usage()
		reqs := llm.Requests()
		last := reqs[len(reqs)-1]
		require.Positive(t, u.Tokens, "turn %d", i)
		if evs := f.compactions(); len(evs) > 0 && evs[0].Ran == RanBetweenTurns {
			assert.Zero(t, u.ProviderTokens, "turn %d: compacted after the run, the provider has not counted the compacted history yet", i)
		} else {
			assert.Equal(t, last.UsageReported, u.ProviderTokens, "turn %d: the provider's count of the last request", i)
		}
		assert.Equal(t, fxThreshold, u.Threshold, "turn %d", i)
		assert.Equal(t, fxWindow, u.Window, "turn %d", i)
		assert.InDelta(t, float64(max(u.Tokens, u.ProviderTokens))/fxWindow, u.Utilization, 1e-9, "turn %d", i)
		assert.False(t, u.Disabled)
		assert.False(t, u.CompactionRequested)
		if evs := f.compactions(); len(evs) > 0 {
			assert.Equal(t, evs[0].TokensAfter, u.Tokens, "turn %d: the count of the compacted request", i)
			assert.Equal(t, 1, u.Compactions)
			assert.Equal(t, fxNow, u.LastCompaction)
			assert.Equal(t, "tokens", u.LastCompactionReason)
			assert.Less(t, u.Utilization, float64(fxThreshold)/fxWindow, "the compacted request is under the trigger")
			continue
		}
		assert.Equal(t, 0, u.Compactions, "turn %d", i)
		assert.True(t, u.LastCompaction.IsZero(), "turn %d", i)
		assert.Empty(t, u.LastCompactionReason, "turn %d", i)
	}
	require.Len(t, f.compactions(), 1, "the session reached the trigger within %d turns", maxTurns)
}

// usageArgs are the arguments of the test's context_usage tool.
type usageArgs struct{}

// TestUsage_FromATool: a tool reads Usage from its own context's state
// (UsageFromState), mid-run; it sees the count the guard stored for the
// model call that called the tool.
func TestUsage_FromATool(t *testing.T) {
	var seen Usage
	var toolErr error
	llm := &scriptedAgentLLM{name: "gemini-2.5-flash", script: func(call int) *genai.Content {
		if call == 0 {
			return &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{Name: "context_usage", Args: map[string]any{}}}}}
		}
		return genai.NewContentFromText("The context is fine.", genai.RoleModel)
	}}
	f := newFixture(t, fixtureConfig{llm: llm, sum: fixedSummary("unused"), tools: func(g *ContextGuard) []tool.Tool {
		usageTool, err := functiontool.New(functiontool.Config{Name: "context_usage", Description: "Says how full the context is."},
			func(ctx agent.ToolContext, _ usageArgs) (map[string]any, error) {
				seen, toolErr = g.UsageFromState(ctx.ReadonlyState(), ctx.AgentName())
				return map[string]any{"utilization": seen.Utilization}, toolErr
			})
		require.NoError(t, err)
		return []tool.Tool{usageTool}
	}})

	f.turn(0, 1_000)

	require.NoError(t, toolErr)
	require.Len(t, llm.recorded(), 2, "the model answered the tool's result")
	var stored any
	for ev := range f.session().Events().All() {
		if v, ok := ev.Actions.StateDelta[keyLastTokens+fxAgent]; ok && ev.Content != nil && len(ev.Content.Parts) > 0 && ev.Content.Parts[0].FunctionCall != nil {
			stored = v
		}
	}
	require.NotNil(t, stored, "the model call that called the tool stored its count")
	assert.Equal(t, stored, seen.Tokens)
	assert.Equal(t, fxWindow, seen.Window)
	assert.Equal(t, fxThreshold, seen.Threshold)
	assert.InDelta(t, float64(seen.Tokens)/fxWindow, seen.Utilization, 1e-9)
}

// TestUsage_WrongTypedState: a value of the wrong type, or an impossible
// one, under one of Usage's keys is logged and read as absent; the agent
// keeps running, guarded.
func TestUsage_WrongTypedState(t *testing.T) {
	tests := []struct {
		name  string
		key   string
		value any
		// want is what Usage reads for the key: its zero.
		want func(t *testing.T, u Usage)
	}{
		{"tokens as text", keyLastTokens + fxAgent, "many", func(t *testing.T, u Usage) { assert.Zero(t, u.Tokens) }},
		{"negative threshold", keyThreshold + fxAgent, -1, func(t *testing.T, u Usage) { assert.Zero(t, u.Threshold) }},
		{"compaction time not a time", keyCompactedAt + fxAgent, "yesterday", func(t *testing.T, u Usage) { assert.True(t, u.LastCompaction.IsZero()) }},
		{"compaction time as a number", keyCompactedAt + fxAgent, 1_700_000_000, func(t *testing.T, u Usage) { assert.True(t, u.LastCompaction.IsZero()) }},
		{"reason as a number", keyCompactReason + fxAgent, 7, func(t *testing.T, u Usage) { assert.Empty(t, u.LastCompactionReason) }},
		{"request as a number", keyCompactRequest + fxAgent, 3.5, func(t *testing.T, u Usage) { assert.False(t, u.CompactionRequested) }},
		{"switch as text", StateKeyDisabled, "yes", func(t *testing.T, u Usage) { assert.False(t, u.Disabled) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			llm := &scriptedAgentLLM{name: "gemini-2.5-flash", script: func(int) *genai.Content { return genai.NewContentFromText("ok", genai.RoleModel) }}
			f := newFixture(t, fixtureConfig{llm: llm, sum: fixedSummary("unused"), state: map[string]any{tt.key: tt.value}})

			u, err := f.g.Usage(f.ctx, f.svc, fxApp, fxUser, fxSession, fxAgent)
			require.NoError(t, err)
			tt.want(t, u)
			assert.Contains(t, f.logs.String(), tt.key, "the bad value is logged with its key")

			f.turn(0, 500)
			require.Len(t, llm.recorded(), 1)
			assert.Positive(t, f.usage().Tokens, "the guard still counts the session's requests")
			assert.Empty(t, f.compactions(), "a bad request value does not compact")
		})
	}
}

// TestUsageFromState_DatabaseTypes: a session service backed by JSON
// returns numbers as float64 or json.Number; Usage reads them as the
// in-memory service's ints.
func TestUsageFromState_DatabaseTypes(t *testing.T) {
	g, _ := newTestGuard(t, fixedSummary("unused"))
	tests := []struct {
		name                       string
		tokens, real, thr, win, nc any
	}{
		{"ints", 5_040, 4_800, 6_400, 8_000, 2},
		{"float64", 5_040.0, 4_800.0, 6_400.0, 8_000.0, 2.0},
		{"json.Number", json.Number("5040"), json.Number("4800"), json.Number("6400"), json.Number("8000"), json.Number("2")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newMapState()
			for k, v := range map[string]any{
				keyLastTokens: tt.tokens, keyRealTokens: tt.real, keyThreshold: tt.thr, keyWindow: tt.win, keyCompactions: tt.nc,
				keyCompactedAt: "2026-03-14T15:09:26.535Z", keyCompactReason: "tokens", keyCompactRequest: "keep the ticket numbers",
			} {
				require.NoError(t, st.Set(k+"a", v))
			}
			require.NoError(t, st.Set(StateKeyDisabled, true))
			u, err := g.UsageFromState(st, "a")
			require.NoError(t, err)
			assert.Equal(t, Usage{
				Agent: "a", Tokens: 5_040, ProviderTokens: 4_800, Threshold: 6_400, Window: 8_000, Utilization: 0.63,
				Compactions: 2, LastCompaction: fxNow, LastCompactionReason: "tokens", CompactionRequested: true, Disabled: true,
			}, u)
		})
	}
}
