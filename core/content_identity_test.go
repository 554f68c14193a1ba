package core

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"
)

// identityLeaf is one field reached from genai.Content, with a builder of
// values that differ only in that field.
type identityLeaf struct {
	name string
	// variants is how many pairwise different values build makes.
	variants int
	// build returns a value of the walked type whose containers on the way
	// to the field are allocated and whose field holds variant v (0: zero).
	build func(v int) reflect.Value
}

// identityLeaves walks t (structs, through pointers and slices) down to its
// scalar, byte-slice and map fields. A field of a kind it does not know
// fails the test, so a new genai type is noticed too.
func identityLeaves(t *testing.T, typ reflect.Type, name string) []identityLeaf {
	t.Helper()
	switch typ.Kind() {
	case reflect.Struct:
		var out []identityLeaf
		for i := range typ.NumField() {
			f := typ.Field(i)
			if !f.IsExported() {
				continue
			}
			for _, l := range identityLeaves(t, f.Type, name+"."+f.Name) {
				out = append(out, identityLeaf{name: l.name, variants: l.variants, build: func(v int) reflect.Value {
					s := reflect.New(typ).Elem()
					s.Field(i).Set(l.build(v))
					return s
				}})
			}
		}
		return out
	case reflect.Pointer:
		if typ.Elem().Kind() != reflect.Struct {
			scalar := scalarLeaf(t, typ.Elem(), name)
			return []identityLeaf{{name: name, variants: scalar.variants + 1, build: func(v int) reflect.Value {
				if v == 0 {
					return reflect.Zero(typ)
				}
				p := reflect.New(typ.Elem())
				p.Elem().Set(scalar.build(v - 1))
				return p
			}}}
		}
		var out []identityLeaf
		for _, l := range identityLeaves(t, typ.Elem(), name) {
			out = append(out, identityLeaf{name: l.name, variants: l.variants, build: func(v int) reflect.Value {
				p := reflect.New(typ.Elem())
				p.Elem().Set(l.build(v))
				return p
			}})
		}
		return out
	case reflect.Slice:
		if typ.Elem().Kind() == reflect.Uint8 {
			return []identityLeaf{{name: name, variants: 3, build: func(v int) reflect.Value {
				if v == 0 {
					return reflect.Zero(typ)
				}
				return reflect.ValueOf([]byte{byte(v), 0x42})
			}}}
		}
		var out []identityLeaf
		for _, l := range identityLeaves(t, typ.Elem(), name+"[]") {
			out = append(out, identityLeaf{name: l.name, variants: l.variants, build: func(v int) reflect.Value {
				s := reflect.MakeSlice(typ, 1, 1)
				s.Index(0).Set(l.build(v))
				return s
			}})
		}
		return out
	case reflect.Map:
		require.Equal(t, reflect.TypeOf(map[string]any(nil)), typ, "%s: a map type the test does not know", name)
		return []identityLeaf{{name: name, variants: 3, build: func(v int) reflect.Value {
			if v == 0 {
				return reflect.Zero(typ)
			}
			return reflect.ValueOf(map[string]any{"key": strings.Repeat("v", v)})
		}}}
	}
	return []identityLeaf{scalarLeaf(t, typ, name)}
}

// scalarLeaf is a string, bool or number field: zero, then one or two other
// values.
func scalarLeaf(t *testing.T, typ reflect.Type, name string) identityLeaf {
	t.Helper()
	set := func(v int) reflect.Value {
		x := reflect.New(typ).Elem()
		if v == 0 {
			return x
		}
		switch typ.Kind() {
		case reflect.String:
			x.SetString(strings.Repeat("s", v))
		case reflect.Bool:
			x.SetBool(true)
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			x.SetInt(int64(v))
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			x.SetUint(uint64(v))
		case reflect.Float32, reflect.Float64:
			x.SetFloat(float64(v) + 0.5)
		}
		return x
	}
	switch typ.Kind() {
	case reflect.Bool:
		return identityLeaf{name: name, variants: 2, build: set}
	case reflect.String, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return identityLeaf{name: name, variants: 3, build: set}
	}
	t.Fatalf("%s: field of kind %s: teach walkContent and this test about it", name, typ.Kind())
	return identityLeaf{}
}

// TestContentIdentity_CoversEveryField: for every field of genai.Content
// and of the types nested in it (genai.Part and everything under it), two
// contents that differ only in that field have different cache keys and
// different fingerprints. A field genai adds later fails here until the
// identity covers it. No field is exempt: every field genai defines may be
// sent.
func TestContentIdentity_CoversEveryField(t *testing.T) {
	leaves := identityLeaves(t, reflect.TypeOf(genai.Content{}), "Content")
	require.Greater(t, len(leaves), 40, "the walk reaches the nested types")
	for _, l := range leaves {
		t.Run(l.name, func(t *testing.T) {
			contents := make([]*genai.Content, l.variants)
			for v := range contents {
				contents[v] = l.build(v).Addr().Interface().(*genai.Content)
			}
			for i := range contents {
				for j := i + 1; j < len(contents); j++ {
					ki, ok := contentKey(contents[i])
					require.True(t, ok)
					kj, ok := contentKey(contents[j])
					require.True(t, ok)
					assert.NotEqual(t, ki, kj, "cache key: variant %d and %d", i, j)
					assert.NotEqual(t, fingerprint(contents[i]), fingerprint(contents[j]), "fingerprint: variant %d and %d", i, j)
				}
			}
		})
	}
}

// TestFingerprint_UnchangedForTheFieldsItAlwaysCovered: watermarks persisted
// by earlier versions still match. The values were computed by the
// fingerprint before it covered call IDs, code, signatures, tool calls and
// the other fields added since.
func TestFingerprint_UnchangedForTheFieldsItAlwaysCovered(t *testing.T) {
	tests := []struct {
		name    string
		content *genai.Content
		want    string
	}{
		{"nil", nil, "100e6ec1085ca201"},
		{"empty", &genai.Content{}, "a8c7f832281a39c5"},
		{"user text", &genai.Content{Role: "user", Parts: []*genai.Part{{Text: "hello"}}}, "6e6c8bb6a70919eb"},
		{"thought, answer and a nil part", &genai.Content{Role: "model", Parts: []*genai.Part{{Text: "thinking", Thought: true}, {Text: "answer"}, nil}}, "4c76dd36f95991cd"},
		{"call with nested args", &genai.Content{Role: "model", Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{Name: "get",
			Args: map[string]any{"n": 5, "b": map[string]any{"x": []any{1, "y", nil, true, 2.5}}, "a": false}}}}}, "ced6f3a9111f0f0e"},
		{"response", &genai.Content{Role: "user", Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{Name: "get",
			Response: map[string]any{"output": "ok", "rows": []any{map[string]any{"k": "v"}}}}}}}, "00eedc5bcb4298e1"},
		{"nil args and response", &genai.Content{Role: "user", Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{Name: "nil args"}},
			{FunctionResponse: &genai.FunctionResponse{Name: "nil resp"}}}}, "a7ddc318eb562c20"},
		{"inline and file data", &genai.Content{Role: "user", Parts: []*genai.Part{{InlineData: &genai.Blob{MIMEType: "image/png", Data: []byte{1, 2, 3}}},
			{FileData: &genai.FileData{FileURI: "gs://b/f.pdf"}}}}, "c10d78096449d00f"},
		{"Go number types", &genai.Content{Role: "user", Parts: []*genai.Part{{Text: "t", FunctionCall: &genai.FunctionCall{Name: "c",
			Args: map[string]any{"f32": float32(1.5), "i64": int64(7), "u": uint(3)}}}}}, "679911f347af6dd4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, fingerprint(tt.content))
		})
	}
}

// TestFingerprint_TypedValuesHashAsTheirJSONRoundTrip: a content a tool
// built with typed values, and the same content reloaded from a database
// session (maps, slices, float64), have one fingerprint.
func TestFingerprint_TypedValuesHashAsTheirJSONRoundTrip(t *testing.T) {
	type row struct {
		Name  string `json:"name"`
		Count int    `json:"count"`
	}
	live := respMsg("list", map[string]any{"rows": []row{{"a", 1}, {"b", 2}}, "tags": []string{"x", "y"},
		"labels": map[string]string{"env": "prod"}, "n": json.Number("12"), "small": int8(3)})
	raw, err := json.Marshal(live.Parts[0].FunctionResponse.Response)
	require.NoError(t, err)
	var reloaded map[string]any
	require.NoError(t, json.Unmarshal(raw, &reloaded))
	assert.Equal(t, fingerprint(respMsg("list", reloaded)), fingerprint(live))
	assert.NotEqual(t, fingerprint(respMsg("list", map[string]any{"tags": []string{"x", "z"}})),
		fingerprint(respMsg("list", map[string]any{"tags": []string{"x", "y"}})), "typed values are not all one \"?\"")
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

	cache := newCountCache()
	ce := cachedEstimator{tokenEstimator: testEst, cache: cache}
	cache.begin()
	nOne := ce.content(one)
	nForty := ce.content(forty)
	assert.Equal(t, testEst.content(forty), nForty, "counted, not served from the 1-image entry")
	assert.Greater(t, nForty, 30*(nOne-testEst.content(respMsg("screenshot", map[string]any{"status": "ok"}))))
	assert.NotEqual(t, fingerprint(one), fingerprint(forty))

	// In steady state the rebuilt copy (new structs, same bytes) is a hit.
	copyOf := func(c *genai.Content) *genai.Content {
		fr := *c.Parts[0].FunctionResponse
		fr.Response = copyMap(fr.Response)
		return &genai.Content{Role: c.Role, Parts: []*genai.Part{{FunctionResponse: &fr}}}
	}
	calls := 0
	counting := cachedEstimator{tokenEstimator: countingEstimator{tokenEstimator: testEst, calls: &calls}, cache: cache}
	cache.begin()
	assert.Equal(t, nForty, counting.content(copyOf(forty)))
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

// identityWalkEnds fails the test if f does not return in time, instead of hanging
// the test binary on an unbounded walk.
func identityWalkEnds(t *testing.T, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("did not finish: unbounded on this value")
	}
}

// TestContentIdentity_SelfReferencingValues: call arguments, responses and
// metadata that refer to themselves are keyed, fingerprinted and counted
// without overflowing the stack or hanging, and the fingerprint is the same
// for two equal cyclic values built apart (it is stable across processes).
func TestContentIdentity_SelfReferencingValues(t *testing.T) {
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
			identityWalkEnds(t, func() { fa, fb = fingerprint(a), fingerprint(b) })
			assert.Equal(t, fa, fb, "stable")
			assert.NotEqual(t, fa, fingerprint(pl.build(map[string]any{"output": "other"})))
			identityWalkEnds(t, func() { _, _ = contentKey(a) })

			cache := newCountCache()
			ce := cachedEstimator{tokenEstimator: testEst, cache: cache}
			cache.begin()
			var n int
			identityWalkEnds(t, func() { n = ce.content(a) })
			if pl.counted {
				// Counted, not dropped: the payload's text (as escaped JSON,
				// which the estimator may weigh a little differently from
				// the raw text) is in the count.
				assert.GreaterOrEqual(t, n, testEst.text(strings.Repeat("result line\n", 100))*3/4, "the content is counted")
			}
			assert.Equal(t, fa, ce.fingerprint(a))
		})
	}
}

// deepNestingO200kTokens is the exact o200k_base count of a response nested
// 10,000 deep ({"node":{"node":...:"leaf"}}, 90,006 bytes of JSON), by
// github.com/tiktoken-go/tokenizer v0.7.0; core/internal/tokenfit/accuracy's
// TestDeepNestingCount checks it. The tokenizer itself is not imported here:
// a module importing the plugin would download it for this package's tests.
const deepNestingO200kTokens = 25_002

// TestContentIdentity_DeepAndSharedValues: a response nested 10,000 deep is
// counted in full through the cache (within 15% of its o200k count, where
// the estimate used to stop at depth 256), and one whose shared sub-values
// expand to 2^60 nodes is keyed and fingerprinted in bounded time.
func TestContentIdentity_DeepAndSharedValues(t *testing.T) {
	t.Run("10,000 deep", func(t *testing.T) {
		var v any = "leaf"
		for range 10_000 - 1 {
			v = map[string]any{"node": v}
		}
		c := respMsg("parse", map[string]any{"node": v})
		raw, err := json.Marshal(c.Parts[0].FunctionResponse.Response)
		require.NoError(t, err)
		require.Len(t, raw, 90_006, "the value whose o200k count deepNestingO200kTokens is")

		cache := newCountCache()
		ce := cachedEstimator{tokenEstimator: estimatorFor("gpt-4o"), cache: cache}
		cache.begin()
		assert.GreaterOrEqual(t, float64(ce.content(c)), 0.85*float64(deepNestingO200kTokens))

		deeper := respMsg("parse", map[string]any{"node": v, "x": 1})
		assert.NotEqual(t, fingerprint(c), fingerprint(deeper))
	})
	t.Run("shared sub-values", func(t *testing.T) {
		var v any = "x"
		for range 60 {
			v = map[string]any{"l": v, "r": v}
		}
		c := respMsg("blowup", map[string]any{"v": v})
		identityWalkEnds(t, func() {
			_, ok := contentKey(c)
			assert.False(t, ok, "too large to key: recounted instead")
			assert.Len(t, fingerprint(c), 16)
		})
	})
}

// TestTranscriptJSON_SelfReferencingAndDeepValues: the summarizer's
// transcript renders a tool result that refers to itself (json.Marshal
// fails on it) with the reference as null and the rest in full, and one
// nested 10,000 deep as json.Marshal does.
func TestTranscriptJSON_SelfReferencingAndDeepValues(t *testing.T) {
	var out string
	identityWalkEnds(t, func() { out = compactJSON(selfReferencing()) })
	assert.True(t, json.Valid([]byte(out)), "valid JSON: %.100s", out)
	assert.Contains(t, out, `"self":null`)
	assert.Contains(t, out, "result line", "the result itself is in the transcript")

	var v any = "leaf"
	for range 10_000 {
		v = map[string]any{"node": v}
	}
	want, err := json.Marshal(v)
	require.NoError(t, err)
	assert.Equal(t, string(want), marshalJSON(v))
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

// TestContentIdentity_TypedSharedValues: a response whose typed containers
// share a sub-value twice at each of 30 levels (2^30 nodes expanded) is
// fingerprinted, keyed and counted in bounded time, and counted at least as
// one path through it. The old code handed typed values whole to
// encoding/json, which expands them: it did not return.
func TestContentIdentity_TypedSharedValues(t *testing.T) {
	for _, tc := range typedDAGs {
		t.Run(tc.name, func(t *testing.T) {
			c := respMsg("blowup", map[string]any{"v": tc.dag(30)})
			one := respMsg("blowup", map[string]any{"v": tc.path(30)})
			identityWalkEnds(t, func() {
				assert.Len(t, fingerprint(c), 16)
				_, _ = contentKey(c)
				cache := newCountCache()
				ce := cachedEstimator{tokenEstimator: estimatorFor("gpt-4o"), cache: cache}
				cache.begin()
				assert.GreaterOrEqual(t, ce.content(c), ce.content(one), "counted, not dropped")
			})
		})
	}
}

// TestContentIdentity_TypedCycles: a cycle through a typed container (a
// []map[string]any holding the map that holds it; a struct pointing to
// itself) is fingerprinted, keyed and counted in bounded time, and the
// fingerprint is stable.
func TestContentIdentity_TypedCycles(t *testing.T) {
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
				fa, fb = fingerprint(c), fingerprint(respMsg("loop", b.build()))
				_, _ = contentKey(c)
				cache := newCountCache()
				ce := cachedEstimator{tokenEstimator: estimatorFor("gpt-4o"), cache: cache}
				cache.begin()
				assert.Positive(t, ce.content(c))
			})
			assert.Equal(t, fa, fb, "stable")
			assert.NotEqual(t, fa, fingerprint(respMsg("loop", map[string]any{"output": "result"})))
		})
	}
}

// TestFingerprint_TypedValuesMatchTheirPlainEquivalent: typed values that
// survive a JSON round trip fingerprint as the plain value it gives.
func TestFingerprint_TypedValuesMatchTheirPlainEquivalent(t *testing.T) {
	type inner struct {
		Note string `json:"note"`
	}
	type tagged struct {
		inner
		Name    string            `json:"name"`
		Skip    string            `json:"-"`
		Empty   string            `json:"empty,omitempty"`
		Count   int64             `json:"count"`
		Ratio   float32           `json:"ratio"`
		Quoted  int               `json:"quoted,string"`
		Labels  map[string]string `json:"labels"`
		Tags    []string          `json:"tags"`
		Blob    []byte            `json:"blob"`
		When    time.Time         `json:"when"`
		Ptr     *inner            `json:"ptr"`
		Nil     *inner            `json:"nil"`
		private int
	}
	values := []struct {
		name string
		v    any
	}{
		{"struct with json tags", tagged{inner: inner{"n"}, Name: "a", Skip: "s", Count: 1 << 60, Ratio: 0.1, Quoted: 7,
			Labels: map[string]string{"b": "2", "a": "1"}, Tags: []string{"x"}, Blob: []byte("hi"),
			When: time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC), Ptr: &inner{"p"}, private: 3}},
		{"map[string]string", map[string]string{"env": "prod", "tier": "1"}},
		{"[]string", []string{"a", "b <&>"}},
		{"map[int][]float32", map[int][]float32{2: {0.1, 1e-7}, 1: nil}},
		{"[]map[string]any", []map[string]any{{"a": 1}, {"b": []int{1, 2}}}},
		{"raw message", json.RawMessage(`{"z": [1, 2.5, "x"]}`)},
		{"array of pointers", [2]*inner{{"a"}, nil}},
	}
	for _, tc := range values {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := json.Marshal(map[string]any{"v": tc.v})
			require.NoError(t, err)
			var plain map[string]any
			require.NoError(t, json.Unmarshal(raw, &plain))
			assert.Equal(t, fingerprint(respMsg("f", plain)), fingerprint(respMsg("f", map[string]any{"v": tc.v})))
		})
	}
}
