package core

import (
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/adk-contextguard/contextguard/core/coretest"
	"github.com/adk-contextguard/contextguard/core/internal/state"
)

// TestAgentLookup walks the configurations an agent's call can meet: its
// own (Add), the default's under its own name (AddDefault), or none, which
// is logged once per agent name at Info with how to guard it.
func TestAgentLookup(t *testing.T) {
	overTrigger := func() *Request { return request(append(coretest.History(30, 400), userMsg("go on"))...) }
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
			session := newMapState()
			for _, name := range tt.calls {
				ctx := newFakeCtx(name).withUser("go on")
				ctx.state = session
				_, err := g.beforeModel(ctx, overTrigger())
				require.NoError(t, err)
			}
			for _, name := range slices.Compact(slices.Sorted(slices.Values(tt.calls))) {
				v, _ := session.Get(state.KeySummary + name)
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

// TestAgentLookup_DefaultMemoryBounded: AddDefault's configuration derived
// for 20,000 distinct agent names, each in a session of its own under
// WithMaxSessions(10), keeps at most maxDerivedAgents of them: the memory
// the guard retains stays bounded however many names it has seen, and a
// name seen again gets the same configuration back. Before the bound, each
// name kept about 2.5 KB for good: 48 MB for 20,000 names.
func TestAgentLookup_DefaultMemoryBounded(t *testing.T) {
	const names = 20_000
	g := newGuard(NewCrushRegistry(WithRegistryLogger(quietLog)), WithLogger(quietLog), WithMaxSessions(10))
	g.addDefaultModel(fixedSummary("unused"), WithMaxTokens(100_000))
	require.NoError(t, g.Err())
	call := func(i int) {
		ctx := newFakeCtx("agent-" + strconv.Itoa(i)).withUser("go on")
		ctx.sessionID = "s" + strconv.Itoa(i)
		_, err := g.beforeModel(ctx, request(userMsg("go on")))
		require.NoError(t, err)
	}
	call(0)
	heap := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	for i := 1; i < names; i++ {
		call(i)
	}
	retained := int64(heap()) - int64(before)

	g.mu.RLock()
	derived := len(g.derived)
	g.mu.RUnlock()
	assert.LessOrEqual(t, derived, maxDerivedAgents, "configurations kept")
	// What maxDerivedAgents configurations weigh, with room for the heap's
	// noise; the unbounded map retained about 48 MB.
	assert.Less(t, retained, int64(8<<20), "bytes retained after %d agent names", names)
	t.Logf("%d agent names: %d configurations kept, %d bytes retained", names, derived, retained)

	// A name seen again, evicted or not, is guarded as before.
	for _, i := range []int{0, names - 1} {
		cfg := g.agent("agent-" + strconv.Itoa(i))
		require.NotNil(t, cfg)
		assert.Equal(t, "agent-"+strconv.Itoa(i), cfg.Name())
		assert.Equal(t, state.KeySummary+"agent-"+strconv.Itoa(i), cfg.stateKeys[state.KeySummary])
		assert.Same(t, cfg, g.agent("agent-"+strconv.Itoa(i)), "kept while in use")
	}
}

// TestAgentLookup_DefaultKeepsNamesInUse: past maxDerivedAgents names, the
// names no call used since the last eviction are dropped first: an agent
// called all along keeps its configuration while thousands of other names
// come and go.
func TestAgentLookup_DefaultKeepsNamesInUse(t *testing.T) {
	g := newGuard(NewCrushRegistry(WithRegistryLogger(quietLog)), WithLogger(quietLog))
	g.addDefaultModel(fixedSummary("unused"), WithMaxTokens(100_000))
	require.NoError(t, g.Err())
	hot := g.agent("hot")
	require.NotNil(t, hot)
	for i := range 3 * maxDerivedAgents {
		require.NotNil(t, g.agent("once-"+strconv.Itoa(i)))
		require.Same(t, hot, g.agent("hot"), "after %d other names", i+1)
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	assert.LessOrEqual(t, len(g.derived), maxDerivedAgents)
}
