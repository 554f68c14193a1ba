package core

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/adk-contextguard/contextguard/core/coretest"
	"github.com/adk-contextguard/contextguard/core/internal/countcache"
)

func TestWithTokenCounter_CountsWithTheUsersTokenizer(t *testing.T) {
	calls := 0
	// The user's tokenizer here counts a token per 4 bytes: any count the
	// estimator does not make itself shows that the guard uses it.
	tc := TokenCounterFunc(func(s string) int { calls++; return coretest.TextTokens(s) })
	cfg := agentConfigFor("a", `Add("a")`, fixedSummary("x"), []AgentOption{WithTokenCounter(tc)})
	require.Empty(t, cfg.errs)
	est, _ := cfg.estimator("gpt-4o")
	text := coretest.Generate(coretest.KindLogLines, 4000, 1)
	assert.Equal(t, coretest.TextTokens(text), est.Text(text))
	assert.InDelta(t, 1.0, est.DefaultFactor(), 1e-9, "an exact counter needs no default correction")

	c := respMsg("kubectl_logs", map[string]any{"output": text})
	n := est.Content(c)
	assert.Greater(t, n, coretest.TextTokens(text), "payload plus name, overhead and framing")
	assert.Less(t, n, coretest.TextTokens(text)+40)

	// Counts are cached per content: the counter runs once per new content.
	sess := newSessionEntry("", quietLog)
	ce := countcache.Counter{Base: est, Cache: sess.cache}
	sess.cache.Begin()
	before := calls
	ce.Content(c)
	first := calls - before
	assert.Equal(t, 2, first, "the tool name and the payload")
	sess.cache.Begin()
	ce.Content(c)
	assert.Equal(t, before+first, calls, "a content seen before is not counted again")

	_, err := func() (any, error) {
		g := newGuard(nil)
		g.addModel("a", fixedSummary("x"), WithTokenCounter(nil))
		return nil, g.Err()
	}()
	require.ErrorContains(t, err, "WithTokenCounter: counter is nil")
}
