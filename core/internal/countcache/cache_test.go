package countcache

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/coretest"
	"github.com/adk-contextguard/contextguard/core/internal/contentid"
	"github.com/adk-contextguard/contextguard/core/internal/estimate"
)

// countingEstimator counts how often contents are estimated.
type countingEstimator struct {
	estimate.Estimator
	calls *int
}

func (c countingEstimator) Content(x *genai.Content) int {
	*c.calls++
	return c.Estimator.Content(x)
}

func TestCountCache_ReusesUnchangedContents(t *testing.T) {
	calls := 0
	cache := New()
	ce := Counter{Base: countingEstimator{Estimator: testEst, calls: &calls}, Cache: cache}
	cs := coretest.History(10, 500)
	cache.Begin()
	first := estimate.Contents(ce, cs)
	require.Equal(t, 20, calls)

	// ADK deep-copies every content each step; the strings are shared.
	copies := make([]*genai.Content, len(cs))
	for i, c := range cs {
		cp := *c
		cp.Parts = []*genai.Part{{Text: c.Parts[0].Text}}
		copies[i] = &cp
	}
	copies = append(copies, userMsg("new"))
	cache.Begin()
	second := estimate.Contents(ce, copies)
	assert.Equal(t, 21, calls, "only the new content is counted")
	assert.Equal(t, first+testEst.Content(userMsg("new")), second)
}

func TestCountCache_ChangedContentIsRecounted(t *testing.T) {
	calls := 0
	cache := New()
	ce := Counter{Base: countingEstimator{Estimator: testEst, calls: &calls}, Cache: cache}
	resp := respMsg("tool", map[string]any{"output": "short", "n": 1.0, "nested": map[string]any{"k": "v"}})
	cs := []*genai.Content{userMsg("question"), resp}
	cache.Begin()
	before := estimate.Contents(ce, cs)

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
			cache.Begin()
			got := estimate.Contents(ce, cs)
			assert.Greater(t, calls, n, "recounted")
			assert.Equal(t, estimate.Contents(testEst, cs), got, "and the count is the fresh one")
			assert.NotEqual(t, before, got)
			before = got
		})
	}
}

func TestCountCache_UncacheableValuesAndBound(t *testing.T) {
	type custom struct{ A string }
	c := respMsg("tool", map[string]any{"v": custom{A: "x"}})
	_, ok := contentid.Key(c)
	assert.False(t, ok, "values the key cannot see into are never cached")
	img := &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{InlineData: &genai.Blob{MIMEType: "image/png", Data: []byte{1, 2}}}}}
	_, ok = contentid.Key(img)
	assert.True(t, ok, "inline data is keyed by the address and length of its bytes")

	cache := New()
	ce := Counter{Base: testEst, Cache: cache}
	for round := range 50 {
		cache.Begin()
		for i := range 10 {
			ce.Content(userMsg(strings.Repeat("a", round*10+i+1)))
		}
	}
	assert.LessOrEqual(t, len(cache.entries), 64+20, "entries of earlier requests are dropped")
}

// TestCountCache_PrefetchMatchesSequentialCounts: the parallel first count
// of a cold session gives exactly the counts of counting one by one, fills
// the cache, and does nothing in steady state.
func TestCountCache_PrefetchMatchesSequentialCounts(t *testing.T) {
	cs := coretest.History(40, 700)
	cs = append(cs, cs[3], nil, respMsg("tool", map[string]any{"output": coretest.Filler(5000, 7)}))

	var calls atomic.Int64
	cold := New()
	ce := Counter{Base: atomicCountingEstimator{Estimator: testEst, calls: &calls}, Cache: cold}
	cold.Begin()
	ce.Prefetch(cs)
	require.GreaterOrEqual(t, len(cold.entries), 80, "the misses were counted ahead")
	afterPrefetch := calls.Load()
	got := estimate.Contents(ce, cs)
	assert.Equal(t, afterPrefetch, calls.Load(), "every content was served from the prefetched cache")
	assert.Equal(t, estimate.Contents(testEst, cs), got, "parallel counts equal sequential ones")

	cold.Begin()
	ce.Prefetch(append(cs, userMsg("one more")))
	assert.Equal(t, afterPrefetch, calls.Load(), "a warm cache is not prefetched")
}

// atomicCountingEstimator counts content calls from any goroutine.
type atomicCountingEstimator struct {
	estimate.Estimator
	calls *atomic.Int64
}

func (c atomicCountingEstimator) Content(x *genai.Content) int {
	c.calls.Add(1)
	return c.Estimator.Content(x)
}

// pngOf is a PNG header of the given size: enough for the estimator.
func pngOf(w, h uint32) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := make([]byte, 17)
	copy(ihdr, "IHDR")
	binary.BigEndian.PutUint32(ihdr[4:], w)
	binary.BigEndian.PutUint32(ihdr[8:], h)
	ihdr[12], ihdr[13] = 8, 6
	_ = binary.Write(&b, binary.BigEndian, uint32(13))
	b.Write(ihdr)
	_ = binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(ihdr))
	return b.Bytes()
}

// TestCountCache_ResponseImagesAreInTheKey: a screenshot tool answers once
// with 40 images and once with one, the response maps alike. The two
// contents share no cache entry: the 40-image one is counted as 40 images.
func TestCountCache_ResponseImagesAreInTheKey(t *testing.T) {
	img := pngOf(1920, 1080)
	response := func(n int) *genai.Content {
		fr := &genai.FunctionResponse{Name: "screenshot", Response: map[string]any{"status": "ok"}}
		for range n {
			fr.Parts = append(fr.Parts, &genai.FunctionResponsePart{InlineData: &genai.FunctionResponseBlob{MIMEType: "image/png", Data: img}})
		}
		return &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: fr}}}
	}
	one, forty := response(1), response(40)
	// The same strings and the same image bytes: only the parts differ.
	forty.Parts[0].FunctionResponse.Name = one.Parts[0].FunctionResponse.Name
	forty.Parts[0].FunctionResponse.Response = one.Parts[0].FunctionResponse.Response

	cache := New()
	ce := Counter{Base: testEst, Cache: cache}
	cache.Begin()
	nOne := ce.Content(one)
	nForty := ce.Content(forty)
	assert.Equal(t, testEst.Content(forty), nForty, "counted, not served from the 1-image entry")
	assert.Greater(t, nForty, 30*(nOne-testEst.Content(respMsg("screenshot", map[string]any{"status": "ok"}))))
	assert.NotEqual(t, contentid.Fingerprint(one), contentid.Fingerprint(forty))

	// In steady state the rebuilt copy (new structs, same bytes) is a hit.
	copyOf := func(c *genai.Content) *genai.Content { return coretest.ADKCopy([]*genai.Content{c})[0] }
	calls := 0
	counting := Counter{Base: countingEstimator{Estimator: testEst, calls: &calls}, Cache: cache}
	cache.Begin()
	assert.Equal(t, nForty, counting.Content(copyOf(forty)))
	assert.Zero(t, calls, "served from the cache")
}

// selfReferencing is an argument map that holds itself twice and a slice
// that holds itself, as a buggy tool can return.
func selfReferencing() map[string]any {
	m := map[string]any{"output": strings.Repeat("result line\n", 100)}
	m["self"] = m
	m["again"] = m
	list := []any{"head", nil}
	list[1] = list
	m["list"] = list
	return m
}

// identityWalkEnds runs f, a walk over a hostile value. A walk that does
// not end is caught by go test's -timeout, not by a wall clock here: the
// time such a walk takes depends on the machine, not on the code.
func identityWalkEnds(t *testing.T, f func()) {
	t.Helper()
	f()
}

// TestCountCache_SelfReferencingValues: call arguments, responses and
// metadata that refer to themselves are keyed, fingerprinted and counted
// without overflowing the stack or hanging, and the fingerprint is the same
// for two equal cyclic values built apart (it is stable across processes).
func TestCountCache_SelfReferencingValues(t *testing.T) {
	places := []struct {
		name  string
		build func(v map[string]any) *genai.Content
		// counted: the estimator counts the value (part metadata is
		// identity only: it is not part of the prompt).
		counted bool
	}{
		{"call args", func(v map[string]any) *genai.Content { return callMsg("loop", v) }, true},
		{"response", func(v map[string]any) *genai.Content { return respMsg("loop", v) }, true},
		{"tool response", func(v map[string]any) *genai.Content {
			return &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{ToolResponse: &genai.ToolResponse{ToolType: "search", Response: v}}}}
		}, true},
		{"part metadata", func(v map[string]any) *genai.Content {
			return &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: "x", PartMetadata: v}}}
		}, false},
	}
	for _, pl := range places {
		t.Run(pl.name, func(t *testing.T) {
			a, b := pl.build(selfReferencing()), pl.build(selfReferencing())
			var fa, fb string
			identityWalkEnds(t, func() { fa, fb = contentid.Fingerprint(a), contentid.Fingerprint(b) })
			assert.Equal(t, fa, fb, "stable")
			assert.NotEqual(t, fa, contentid.Fingerprint(pl.build(map[string]any{"output": "other"})))
			identityWalkEnds(t, func() { _, _ = contentid.Key(a) })

			cache := New()
			ce := Counter{Base: testEst, Cache: cache}
			cache.Begin()
			var n int
			identityWalkEnds(t, func() { n = ce.Content(a) })
			if pl.counted {
				// Counted, not dropped: the payload's text (as escaped JSON,
				// which the estimator may weigh a little differently from
				// the raw text) is in the count.
				assert.GreaterOrEqual(t, n, testEst.Text(strings.Repeat("result line\n", 100))*3/4, "the content is counted")
			}
			assert.Equal(t, fa, ce.Fingerprint(a))
		})
	}
}

// deepNestingO200kTokens is the exact o200k_base count of a response nested
// 10,000 deep ({"node":{"node":...:"leaf"}}, 90,006 bytes of JSON), by
// github.com/tiktoken-go/tokenizer v0.7.0; core/internal/tokenfit/accuracy's
// TestDeepNestingCount checks it. The tokenizer itself is not imported here:
// a module importing the plugin would download it for this package's tests.
const deepNestingO200kTokens = 25_002

// TestCountCache_DeepAndSharedValues: a response nested 10,000 deep is
// counted in full through the cache (within 15% of its o200k count, where
// the estimate used to stop at depth 256), and one whose shared sub-values
// expand to 2^60 nodes is keyed and fingerprinted in bounded time.
func TestCountCache_DeepAndSharedValues(t *testing.T) {
	t.Run("10,000 deep", func(t *testing.T) {
		var v any = "leaf"
		for range 10_000 - 1 {
			v = map[string]any{"node": v}
		}
		c := respMsg("parse", map[string]any{"node": v})
		raw, err := json.Marshal(c.Parts[0].FunctionResponse.Response)
		require.NoError(t, err)
		require.Len(t, raw, 90_006, "the value whose o200k count deepNestingO200kTokens is")

		cache := New()
		ce := Counter{Base: estimate.ForModel("gpt-4o"), Cache: cache}
		cache.Begin()
		assert.GreaterOrEqual(t, float64(ce.Content(c)), 0.85*float64(deepNestingO200kTokens))

		deeper := respMsg("parse", map[string]any{"node": v, "x": 1})
		assert.NotEqual(t, contentid.Fingerprint(c), contentid.Fingerprint(deeper))
	})
	t.Run("shared sub-values", func(t *testing.T) {
		var v any = "x"
		for range 60 {
			v = map[string]any{"l": v, "r": v}
		}
		c := respMsg("blowup", map[string]any{"v": v})
		identityWalkEnds(t, func() {
			_, ok := contentid.Key(c)
			assert.False(t, ok, "too large to key: recounted instead")
			assert.Len(t, contentid.Fingerprint(c), 16)
		})
	})
}

// typedNode is a typed DAG node: encoding/json expands shared pointers.
type typedNode struct {
	L    *typedNode `json:"l,omitempty"`
	R    *typedNode `json:"r,omitempty"`
	Leaf string     `json:"leaf,omitempty"`
}

// typedDAGs are values of 30 small nodes, each level referring twice to the
// one below, through typed containers: expanded, 2^30 nodes. path is one
// path through the same levels, expanded: 30 nodes.
var typedDAGs = []struct {
	name      string
	dag, path func(levels int) any
}{
	{"[]map[string]any", func(n int) any {
		v := []map[string]any{{"leaf": "x"}}
		for range n {
			v = []map[string]any{{"l": v, "r": v}}
		}
		return v
	}, func(n int) any {
		v := []map[string]any{{"leaf": "x"}}
		for range n {
			v = []map[string]any{{"l": v}}
		}
		return v
	}},
	{"map[string]map[string]any", func(n int) any {
		v := map[string]map[string]any{"n": {"leaf": "x"}}
		for range n {
			v = map[string]map[string]any{"n": {"l": v, "r": v}}
		}
		return v
	}, func(n int) any {
		v := map[string]map[string]any{"n": {"leaf": "x"}}
		for range n {
			v = map[string]map[string]any{"n": {"l": v}}
		}
		return v
	}},
	{"struct pointers", func(n int) any {
		v := &typedNode{Leaf: "x"}
		for range n {
			v = &typedNode{L: v, R: v}
		}
		return v
	}, func(n int) any {
		v := &typedNode{Leaf: "x"}
		for range n {
			v = &typedNode{L: v}
		}
		return v
	}},
}

// TestCountCache_TypedSharedValues: a response whose typed containers
// share a sub-value twice at each of 30 levels (2^30 nodes expanded) is
// fingerprinted, keyed and counted in bounded time, and counted at least as
// one path through it. The old code handed typed values whole to
// encoding/json, which expands them: it did not return.
func TestCountCache_TypedSharedValues(t *testing.T) {
	for _, tc := range typedDAGs {
		t.Run(tc.name, func(t *testing.T) {
			c := respMsg("blowup", map[string]any{"v": tc.dag(30)})
			one := respMsg("blowup", map[string]any{"v": tc.path(30)})
			identityWalkEnds(t, func() {
				assert.Len(t, contentid.Fingerprint(c), 16)
				_, _ = contentid.Key(c)
				cache := New()
				ce := Counter{Base: estimate.ForModel("gpt-4o"), Cache: cache}
				cache.Begin()
				assert.GreaterOrEqual(t, ce.Content(c), ce.Content(one), "counted, not dropped")
			})
		})
	}
}

// TestCountCache_TypedCycles: a cycle through a typed container (a
// []map[string]any holding the map that holds it; a struct pointing to
// itself) is fingerprinted, keyed and counted in bounded time, and the
// fingerprint is stable.
func TestCountCache_TypedCycles(t *testing.T) {
	builds := []struct {
		name  string
		build func() map[string]any
	}{
		{"[]map[string]any", func() map[string]any {
			m := map[string]any{"output": "result"}
			m["list"] = []map[string]any{m, {"x": 1}}
			return m
		}},
		{"struct pointer", func() map[string]any {
			n := &typedNode{Leaf: "x"}
			n.L = n
			return map[string]any{"node": n}
		}},
		{"map[string]any in a typed map", func() map[string]any {
			m := map[string]any{"output": "result"}
			m["typed"] = map[string]map[string]any{"back": m}
			return m
		}},
	}
	for _, b := range builds {
		t.Run(b.name, func(t *testing.T) {
			c := respMsg("loop", b.build())
			var fa, fb string
			identityWalkEnds(t, func() {
				fa, fb = contentid.Fingerprint(c), contentid.Fingerprint(respMsg("loop", b.build()))
				_, _ = contentid.Key(c)
				cache := New()
				ce := Counter{Base: estimate.ForModel("gpt-4o"), Cache: cache}
				cache.Begin()
				assert.Positive(t, ce.Content(c))
			})
			assert.Equal(t, fa, fb, "stable")
			assert.NotEqual(t, fa, contentid.Fingerprint(respMsg("loop", map[string]any{"output": "result"})))
		})
	}
}
