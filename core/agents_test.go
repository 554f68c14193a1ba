package core

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAgentLookup walks the configurations an agent's call can meet: its
// own (Add), the default's under its own name (AddDefault), or none, which
// is logged once per agent name at Info with how to guard it.
func TestAgentLookup(t *testing.T) {
	overTrigger := func() *Request { return request(append(history(30, 400), userMsg("go on"))...) }
	tests := []struct {
		name  string
		setup func(g *Guard, sum *fakeLLM)
		// calls are the agents whose model is called, in order.
		calls []string
		// compacted are the agents whose state holds a summary after.
		compacted []string
		// unguardedLogs is how many "not guarded" lines are logged.
		unguardedLogs int
	}{
		{
			name:          "an agent added by name only",
			setup:         func(g *Guard, sum *fakeLLM) { g.addModel("a", sum, WithMaxTokens(8_000)) },
			calls:         []string{"a", "b", "b", "c"},
			compacted:     []string{"a"},
			unguardedLogs: 2, // b once, c once
		},
		{
			name:      "the default guards every other agent under its own name",
			setup:     func(g *Guard, sum *fakeLLM) { g.addDefaultModel(sum, WithMaxTokens(8_000)) },
			calls:     []string{"a", "b", "b"},
			compacted: []string{"a", "b"},
		},
		{
			name: "an agent added by name keeps its own configuration",
			setup: func(g *Guard, sum *fakeLLM) {
				g.addDefaultModel(sum, WithMaxTokens(8_000))
				g.addModel("big", sum, WithMaxTokens(1_000_000))
			},
			calls:     []string{"big", "small"},
			compacted: []string{"small"},
		},
		{
			name: "a later AddDefault replaces the default",
			setup: func(g *Guard, sum *fakeLLM) {
				g.addDefaultModel(sum, WithMaxTokens(8_000))
				g.addDefaultModel(sum, WithMaxTokens(1_000_000))
			},
			calls: []string{"a"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs := &logBuffer{}
			g := newGuard(NewCrushRegistry(WithRegistryLogger(quietLogger)), WithLogger(logs.logger()))
			sum := fixedSummary("SUMMARY")
			tt.setup(g, sum)
			require.NoError(t, g.Err())
			state := newMapState()
			for _, name := range tt.calls {
				ctx := newFakeCtx(name).withUser("go on")
				ctx.state = state
				_, err := g.beforeModel(ctx, overTrigger())
				require.NoError(t, err)
			}
			for _, name := range slices.Compact(slices.Sorted(slices.Values(tt.calls))) {
				v, _ := state.Get(keySummary + name)
				if slices.Contains(tt.compacted, name) {
					assert.NotEmpty(t, v, "%s compacted, its summary under its own name", name)
				} else {
					assert.Nil(t, v, "%s did not compact", name)
				}
			}
			assert.Equal(t, tt.unguardedLogs, strings.Count(logs.String(), "this agent is not guarded"))
			if tt.unguardedLogs > 0 {
				assert.Contains(t, logs.String(), "level=INFO")
				assert.Contains(t, logs.String(), "AddDefault(model")
			}
		})
	}
}

// TestAgentLookup_OnlyModelCallsAreLogged: asking about an agent the guard
// does not guard (Usage, RequestCompaction) is answered with an error, and
// does not log the "not guarded" line meant for an agent whose model calls
// go through unchecked.
func TestAgentLookup_OnlyModelCallsAreLogged(t *testing.T) {
	logs := &logBuffer{}
	g := newGuard(NewCrushRegistry(WithRegistryLogger(quietLogger)), WithLogger(logs.logger()))
	g.addModel("a", fixedSummary("SUMMARY"))
	require.NoError(t, g.Err())
	st := newMapState()
	assert.Error(t, g.RequestCompactionInState(st, "ghost", "focus"))
	_, err := g.UsageFromState(st, "ghost")
	assert.Error(t, err)
	assert.NotContains(t, logs.String(), "not guarded")

	_, err = g.beforeModel(newFakeCtx("ghost"), request(userMsg("hi")))
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(logs.String(), "not guarded"), "a model call of the agent is")
}
