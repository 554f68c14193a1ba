package tokens

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"
)

// within runs f, a walk over a hostile value. A walk that does not end is
// caught by go test's -timeout, not by a wall clock here: the time such a
// walk takes depends on the machine, not on the code.
func within(t *testing.T, f func()) {
	t.Helper()
	f()
}

// writeJSON is the writer's encoding of v.
func writeJSON(v any) string {
	w := getWriter()
	defer putWriter(w)
	w.value(v, 0)
	return string(w.buf)
}

// nested is a value depth objects deep, {"node":{"node":…"leaf"}}, as a
// recursive tool result (a parse tree, a linked list) might look.
func nested(depth int) map[string]any {
	var inner any = "leaf"
	for range depth - 1 {
		inner = map[string]any{"node": inner}
	}
	return map[string]any{"node": inner}
}

// deepNestingO200kTokens is the exact o200k_base count of nested(10_000)'s
// JSON (90,006 bytes), by github.com/tiktoken-go/tokenizer v0.7.0;
// core/internal/tokenfit/accuracy's TestDeepNestingCount checks it. The
// tokenizer itself is not imported here: a module importing the plugin
// would download it for this package's tests.
const deepNestingO200kTokens = 25_002

// TestValue_DeepNestingIsCountedInFull: a tool result nested 10,000 deep
// is written byte for byte as json.Marshal writes it and estimated within
// 15% of its real o200k count (~25k). Before, the writer stopped at depth
// 256 and the value counted as about 1k.
func TestValue_DeepNestingIsCountedInFull(t *testing.T) {
	const depth = 10_000
	v := nested(depth)
	want, err := json.Marshal(v)
	require.NoError(t, err)
	assert.Equal(t, string(want), writeJSON(v), "the encoding is complete")

	real := deepNestingO200kTokens
	require.InDelta(t, 25_000, real, 2_000, "the scenario is a ~25k-token value")
	e := New(O200k)
	for _, tc := range []struct {
		name string
		part *genai.Part
	}{
		{"function response", &genai.Part{FunctionResponse: &genai.FunctionResponse{Name: "walk", Response: v}}},
		{"function call args", &genai.Part{FunctionCall: &genai.FunctionCall{Name: "walk", Args: v}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := e.Part(tc.part)
			assert.GreaterOrEqual(t, float64(got), 0.85*float64(real), "estimate %d for %d real tokens", got, real)
		})
	}
}

// cyclicValues are self-referencing maps and slices as a buggy tool or a
// state value could hold: a direct self-reference, two references to self
// (which doubles the walk at every level), a slice holding itself, and two
// maps holding each other.
func cyclicValues() map[string]map[string]any {
	self := map[string]any{"name": "self"}
	self["me"] = self

	twice := map[string]any{"payload": strings.Repeat("log line ", 200)}
	twice["left"] = twice
	twice["right"] = twice

	list := make([]any, 2)
	list[0] = "head"
	list[1] = list
	inList := map[string]any{"items": list}

	a := map[string]any{"name": "a"}
	b := map[string]any{"name": "b", "a": a}
	a["b"] = b
	a["b2"] = b

	viaMapArray := map[string]any{"k": "v"}
	viaMapArray["rows"] = []map[string]any{viaMapArray, {"x": 1}}

	return map[string]map[string]any{
		"self-reference":           self,
		"two references to itself": twice,
		"slice holding itself":     inList,
		"maps holding each other":  a,
		"map array holding parent": viaMapArray,
	}
}

// TestValue_CyclesAreWrittenOnceWithTheBackReferenceAsNull: encoding/json
// rejects a cyclic value; the estimator writes it with each reference back
// to an enclosing container as null, never recursing without end, and
// counts at least the value's non-cyclic content.
func TestValue_CyclesAreWrittenOnceWithTheBackReferenceAsNull(t *testing.T) {
	for name, v := range cyclicValues() {
		t.Run(name, func(t *testing.T) {
			_, err := json.Marshal(v)
			require.Error(t, err, "encoding/json sees a cycle")
			var out string
			within(t, func() { out = writeJSON(v) })
			assert.True(t, json.Valid([]byte(out)), "valid JSON: %.200s", out)
			assert.Equal(t, out, writeJSON(v), "the same on every call")
			var n int
			within(t, func() { n = New(O200k).Value(v) })
			assert.GreaterOrEqual(t, n, New(O200k).Text(out)-1)
		})
	}
	t.Run("exact output", func(t *testing.T) {
		self := map[string]any{"name": "self"}
		self["me"] = self
		assert.Equal(t, `{"me":null,"name":"self"}`, writeJSON(self))
		twice := map[string]any{"p": 1}
		twice["l"] = twice
		twice["r"] = twice
		assert.Equal(t, `{"l":null,"p":1,"r":null}`, writeJSON(twice))
	})
	t.Run("shared but acyclic values are written in full", func(t *testing.T) {
		shared := map[string]any{"k": "v"}
		v := map[string]any{"a": shared, "b": []any{shared, shared}}
		want, err := json.Marshal(v)
		require.NoError(t, err)
		assert.Equal(t, string(want), writeJSON(v))
	})
}

// TestValue_SharedSubvaluesAreBounded: a value whose shared sub-values make
// its encoding 2^60 times longer than its size is walked up to
// maxValueBytes and counted as more than any window holds, instead of
// walking for ever.
func TestValue_SharedSubvaluesAreBounded(t *testing.T) {
	var v any = "0123456789abcdef"
	for range 60 {
		v = map[string]any{"l": v, "r": v}
	}
	var n int
	within(t, func() { n = New(O200k).Value(v) })
	assert.Greater(t, n, 2_000_000, "counted as too large for any window")
}

// TestSchema_CyclesAndFanOutAreBounded: a tool schema that refers back to
// itself from two properties is written with the back references as null.
func TestSchema_CyclesAndFanOutAreBounded(t *testing.T) {
	node := &genai.Schema{Type: genai.TypeObject, Description: "a tree node"}
	node.Properties = map[string]*genai.Schema{"left": node, "right": node}
	node.Items = node
	d := &genai.FunctionDeclaration{Name: "tree", Parameters: node}
	var n int
	within(t, func() { n = New(O200k).Declaration(d) })
	assert.Positive(t, n)

	w := getWriter()
	defer putWriter(w)
	w.decl(d)
	assert.Equal(t, `{"name":"tree","parameters":{"type":"object","description":"a tree node","items":null,"properties":{"left":null,"right":null}}}`, string(w.buf))
}

// TestAppendJSON_MatchesMarshal: AppendJSON is json.Marshal's output for the
// values it can encode, appended to what dst holds.
func TestAppendJSON_MatchesMarshal(t *testing.T) {
	type row struct {
		Name string `json:"name"`
	}
	values := []any{
		nil, "a<b>&\u2028", 1.5, map[string]any{"z": 1, "a": []any{true, nil, "x"}},
		[]map[string]any{{"k": "v"}, nil}, []string{"x"}, map[string]string{"b": "1", "a": "2"},
		row{Name: "typed"}, []byte("bytes"), json.Number("12"), nested(300),
	}
	for _, v := range values {
		want, err := json.Marshal(v)
		require.NoError(t, err)
		assert.Equal(t, "prefix:"+string(want), string(AppendJSON([]byte("prefix:"), v)))
	}
}

type liftInner struct {
	Note string `json:"note"`
}

type liftTagged struct {
	liftInner
	Name    string            `json:"name"`
	Skip    string            `json:"-"`
	Empty   string            `json:"empty,omitempty"`
	Zero    liftInner         `json:"zero,omitzero"`
	Count   int64             `json:"count"`
	Ratio   float32           `json:"ratio"`
	Quoted  int               `json:"quoted,string"`
	Labels  map[string]string `json:"labels"`
	Tags    []string          `json:"tags"`
	Blob    []byte            `json:"blob"`
	When    time.Time         `json:"when"`
	Ptr     *liftInner        `json:"ptr"`
	Nil     *liftInner        `json:"nil"`
	Plain   int
	private int
}

type liftNode struct {
	L, R *liftNode `json:",omitempty"`
	Leaf string    `json:",omitempty"`
}

// TestAppendJSON_TypedValuesAsMarshal: typed values are written as the JSON
// json.Marshal writes (struct fields in key order), walked by reflection rather than handed
// to encoding/json, and estimated within a few tokens of the o200k count.
func TestAppendJSON_TypedValuesAsMarshal(t *testing.T) {
	// o200k is each value's exact o200k_base count of its JSON, by
	// github.com/tiktoken-go/tokenizer v0.7.0.
	values := []struct {
		name  string
		v     any
		o200k int
	}{
		{"struct with json tags", liftTagged{liftInner: liftInner{"n"}, Name: "a", Skip: "s", Count: 1 << 60, Ratio: 0.1,
			Quoted: 7, Labels: map[string]string{"b": "2", "a": "1"}, Tags: []string{"x"}, Blob: []byte("hi"),
			When: time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC), Ptr: &liftInner{"p"}, Plain: 4, private: 3}, 83},
		{"pointer to struct", &liftInner{"p <b>"}, 12},
		{"map[string]string", map[string]string{"env": "prod", "tier": "1"}, 9},
		{"[]string", []string{"a", "b <&>"}, 15},
		{"map[int][]float32", map[int][]float32{2: {0.1, 1e-7}, 1: nil}, 16},
		{"map[string]map[string]any", map[string]map[string]any{"x": {"a": []int{1, 2}}}, 10},
		{"raw message", map[string]json.RawMessage{"r": json.RawMessage(`{"z":[1,2.5,"x"]}`)}, 14},
		{"array of pointers", [2]*liftInner{{"a"}, nil}, 8},
		{"json.Number", []json.Number{"12", "1e3"}, 7},
		{"nil typed values", map[string]any{"m": map[string]int(nil), "s": []int(nil), "p": (*liftInner)(nil)}, 13},
		{"tool result rows", []liftTagged{{Name: "row one", Count: 3, Tags: []string{"alpha", "beta"}}, {Name: "row two", Labels: map[string]string{"k": "v"}}}, 126},
	}
	est := New(O200k)
	for _, tc := range values {
		t.Run(tc.name, func(t *testing.T) {
			want, err := json.Marshal(tc.v)
			require.NoError(t, err)
			// The same JSON; a struct's fields come in key order, not in
			// declaration order (the same bytes, permuted).
			got := writeJSON(tc.v)
			assert.JSONEq(t, string(want), got)
			assert.Len(t, got, len(want))
			n := tc.o200k
			assert.InDelta(t, n, est.Value(tc.v), float64(max(4, n/10)))
		})
	}
}

// TestAppendJSON_TypedSharedValuesAndCycles: typed values sharing one
// sub-value twice at each of 30 levels (2^30 nodes expanded; json.Marshal
// does not return on them, and the old writer handed them to it) are cut
// at maxValueBytes and counted at least as one path; a cycle through typed
// containers is written with the back reference as null.
func TestAppendJSON_TypedSharedValuesAndCycles(t *testing.T) {
	dag, path := &liftNode{Leaf: "x"}, &liftNode{Leaf: "x"}
	mdag, mpath := map[string]map[string]any{"n": {"leaf": "x"}}, map[string]map[string]any{"n": {"leaf": "x"}}
	for range 30 {
		dag, path = &liftNode{L: dag, R: dag}, &liftNode{L: path}
		mdag = map[string]map[string]any{"n": {"l": mdag, "r": mdag}}
		mpath = map[string]map[string]any{"n": {"l": mpath}}
	}
	cyc := map[string]any{"a": "b"}
	cyc["list"] = []map[string]any{cyc}
	self := &liftNode{Leaf: "x"}
	self.R = self
	est := New(O200k)
	for _, tc := range []struct {
		name     string
		v, floor any
	}{
		{"struct pointers", dag, path},
		{"typed maps", mdag, mpath},
		{"[]map[string]any cycle", map[string]any{"typed": map[string][]map[string]any{"c": {cyc}}}, nil},
		{"struct cycle", self, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			within(t, func() {
				out := writeJSON(tc.v)
				assert.LessOrEqual(t, len(out), maxValueBytes+4096)
				if tc.floor != nil {
					assert.GreaterOrEqual(t, est.Value(tc.v), est.Value(tc.floor), "counted, not dropped")
				} else {
					assert.True(t, json.Valid([]byte(out)), "%.200s", out)
					assert.Contains(t, out, "null")
				}
			})
		})
	}
}
