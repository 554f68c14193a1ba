package core

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"
)

// countingEstimator counts how often contents are estimated.
type countingEstimator struct {
	tokenEstimator
	calls *int
}

func (c countingEstimator) content(x *genai.Content) int {
	*c.calls++
	return c.tokenEstimator.content(x)
}

func TestCountCache_ReusesUnchangedContents(t *testing.T) {
	calls := 0
	cache := newCountCache()
	ce := cachedEstimator{tokenEstimator: countingEstimator{tokenEstimator: testEst, calls: &calls}, cache: cache}
	cs := history(10, 500)
	cache.begin()
	first := contentsTokens(ce, cs)
	require.Equal(t, 20, calls)

	// ADK deep-copies every content each step; the strings are shared.
	copies := make([]*genai.Content, len(cs))
	for i, c := range cs {
		cp := *c
		cp.Parts = []*genai.Part{{Text: c.Parts[0].Text}}
		copies[i] = &cp
	}
	copies = append(copies, userMsg("new"))
	cache.begin()
	second := contentsTokens(ce, copies)
	assert.Equal(t, 21, calls, "only the new content is counted")
	assert.Equal(t, first+testEst.content(userMsg("new")), second)
}

func TestCountCache_ChangedContentIsRecounted(t *testing.T) {
	calls := 0
	cache := newCountCache()
	ce := cachedEstimator{tokenEstimator: countingEstimator{tokenEstimator: testEst, calls: &calls}, cache: cache}
	resp := respMsg("tool", map[string]any{"output": "short", "n": 1.0, "nested": map[string]any{"k": "v"}})
	cs := []*genai.Content{userMsg("question"), resp}
	cache.begin()
	before := contentsTokens(ce, cs)

	tests := []struct {
		name   string
		mutate func()
	}{
		{"text replaced in place at the same index", func() { cs[0].Parts[0].Text = strings.Repeat("much longer question ", 50) }},
		{"payload string replaced", func() { resp.Parts[0].FunctionResponse.Response["output"] = strings.Repeat("x", 4000) }},
		{"number changed", func() { resp.Parts[0].FunctionResponse.Response["n"] = 123456789.5 }},
		{"nested key added", func() {
			resp.Parts[0].FunctionResponse.Response["nested"].(map[string]any)["k2"] = strings.Repeat("y", 800)
		}},
		{"part appended", func() { cs[0].Parts = append(cs[0].Parts, &genai.Part{Text: strings.Repeat("z", 900)}) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.mutate()
			n := calls
			cache.begin()
			got := contentsTokens(ce, cs)
			assert.Greater(t, calls, n, "recounted")
			assert.Equal(t, contentsTokens(testEst, cs), got, "and the count is the fresh one")
			assert.NotEqual(t, before, got)
			before = got
		})
	}
}

func TestCountCache_UncacheableValuesAndBound(t *testing.T) {
	type custom struct{ A string }
	c := respMsg("tool", map[string]any{"v": custom{A: "x"}})
	_, ok := contentKey(c)
	assert.False(t, ok, "values the key cannot see into are never cached")
	img := &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{InlineData: &genai.Blob{MIMEType: "image/png", Data: []byte{1, 2}}}}}
	_, ok = contentKey(img)
	assert.True(t, ok, "inline data is keyed by the address and length of its bytes")

	cache := newCountCache()
	ce := cachedEstimator{tokenEstimator: testEst, cache: cache}
	for round := range 50 {
		cache.begin()
		for i := range 10 {
			ce.content(userMsg(strings.Repeat("a", round*10+i+1)))
		}
	}
	assert.LessOrEqual(t, len(cache.entries), 64+20, "entries of earlier requests are dropped")
}

// TestCountCache_PrefetchMatchesSequentialCounts: the parallel first count
// of a cold session gives exactly the counts of counting one by one, fills
// the cache, and does nothing in steady state.
func TestCountCache_PrefetchMatchesSequentialCounts(t *testing.T) {
	cs := history(40, 700)
	cs = append(cs, cs[3], nil, respMsg("tool", map[string]any{"output": filler(5000, 7)}))

	var calls atomic.Int64
	cold := newCountCache()
	ce := cachedEstimator{tokenEstimator: atomicCountingEstimator{tokenEstimator: testEst, calls: &calls}, cache: cold}
	cold.begin()
	ce.prefetch(cs)
	require.GreaterOrEqual(t, len(cold.entries), 80, "the misses were counted ahead")
	afterPrefetch := calls.Load()
	got := contentsTokens(ce, cs)
	assert.Equal(t, afterPrefetch, calls.Load(), "every content was served from the prefetched cache")
	assert.Equal(t, contentsTokens(testEst, cs), got, "parallel counts equal sequential ones")

	cold.begin()
	ce.prefetch(append(cs, userMsg("one more")))
	assert.Equal(t, afterPrefetch, calls.Load(), "a warm cache is not prefetched")
}

// atomicCountingEstimator counts content calls from any goroutine.
type atomicCountingEstimator struct {
	tokenEstimator
	calls *atomic.Int64
}

func (c atomicCountingEstimator) content(x *genai.Content) int {
	c.calls.Add(1)
	return c.tokenEstimator.content(x)
}
