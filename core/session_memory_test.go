package core

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/coretest"
	"github.com/adk-contextguard/contextguard/core/internal/calib"
	"github.com/adk-contextguard/contextguard/core/internal/state"
)

// TestSessionMemory_PendingOverflowSurvivesEviction: a provider overflow,
// returned without a recovery model, is only in memory until the
// session's next call writes what it taught (ADK drops the failed call's
// state delta). An eviction in between keeps it: the next call compacts
// first and persists the ratio learned, as without eviction.
func TestSessionMemory_PendingOverflowSurvivesEviction(t *testing.T) {
	for _, evict := range []bool{false, true} {
		t.Run(fmt.Sprintf("evicted %v", evict), func(t *testing.T) {
			sum := fixedSummary("S")
			g := newGuard(NewCrushRegistry(WithRegistryLogger(quietLog)), WithLogger(quietLog), WithMaxSessions(1))
			g.addModel("a", sum, WithMaxTokens(20_000))
			require.NoError(t, g.Err())
			s1, s2 := newFakeCtx("a").withUser("LATEST"), newFakeCtx("a").withUser("hi")
			s2.sessionID = "s2"
			raw := append(coretest.History(20, 300), userMsg("LATEST"))
			req := requestOf(raw)
			_, err := g.beforeModel(s1, req)
			require.NoError(t, err)
			sent := requestTokens(testEst, engineReq(req))
			_, err = g.onModelError(s1, req, &coretest.OverflowError{Style: coretest.ErrorOpenAI, Tokens: 25_000, Limit: 20_000})
			require.NoError(t, err)

			if evict {
				_, err = g.beforeModel(s2, request(userMsg("hi")))
				require.NoError(t, err)
				require.Equal(t, []string{"s2"}, tableKeys(g), "s1 was evicted")
			}
			s1.state = newMapState() // the failed call's delta is lost
			s1.withUser("LATEST again")
			req2 := requestOf(append(append([]*genai.Content{}, raw...), userMsg("LATEST again")))
			_, err = g.beforeModel(s1, req2)
			require.NoError(t, err)
			assert.Equal(t, 1, sum.Calls(), "the next call compacts first")
			assert.Equal(t, calib.PerMille(25_000/float64(sent)), s1.getInt(state.KeyProviderRatio), "and persists the ratio learned")
		})
	}
}

// TestSessionMemory_KeptOverflowsAreBounded: the table keeps the pending
// overflows of at most as many evicted sessions as it holds sessions, the
// most recently evicted; a session without one keeps nothing.
func TestSessionMemory_KeptOverflowsAreBounded(t *testing.T) {
	const bound = 3
	tab := newSessionTable(sessionBounds{sessions: bound, bytes: 1 << 30}, quietLog)
	for i := range 10 {
		e := &sessionEntry{key: fmt.Sprint("s", i)}
		e.memory("a").overflow = &pendingOverflow{real: i + 1}
		tab.keepLocked(e)
		tab.keepLocked(&sessionEntry{key: fmt.Sprint("idle", i)})
	}
	require.Equal(t, bound, tab.keptOrder.Len())
	require.Len(t, tab.kept, bound)
	for i := range 10 {
		e := &sessionEntry{key: fmt.Sprint("s", i)}
		tab.restoreLocked(e)
		if i < 10-bound {
			assert.Empty(t, e.agents, "s%d: dropped, oldest first", i)
			continue
		}
		require.Len(t, e.agents, 1)
		assert.Equal(t, i+1, e.agents[0].overflow.real, "s%d: kept", i)
	}
	assert.Zero(t, tab.keptOrder.Len(), "a kept record is handed over once")
	assert.Empty(t, tab.kept)
}
