package contentid

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"
)

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
			assert.Equal(t, tt.want, Fingerprint(tt.content))
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
	assert.Equal(t, Fingerprint(respMsg("list", reloaded)), Fingerprint(live))
	assert.NotEqual(t, Fingerprint(respMsg("list", map[string]any{"tags": []string{"x", "z"}})),
		Fingerprint(respMsg("list", map[string]any{"tags": []string{"x", "y"}})), "typed values are not all one \"?\"")
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
			assert.Equal(t, Fingerprint(respMsg("f", plain)), Fingerprint(respMsg("f", map[string]any{"v": tc.v})))
		})
	}
}

// TestFingerprint_StableAcrossRebuildsAndNumberTypes: a content rebuilt
// with its map keys in another order and its numbers as float64 keeps its
// fingerprint; another value, or another role, changes it.
func TestFingerprint_StableAcrossRebuildsAndNumberTypes(t *testing.T) {
	a := callMsg("get", map[string]any{"n": 5, "b": map[string]any{"x": []any{1, "y"}}, "a": true})
	b := callMsg("get", map[string]any{"a": true, "b": map[string]any{"x": []any{float64(1), "y"}}, "n": float64(5)})
	assert.Equal(t, Fingerprint(a), Fingerprint(b))
	assert.NotEqual(t, Fingerprint(a), Fingerprint(callMsg("get", map[string]any{"n": 6})))
	assert.NotEqual(t, Fingerprint(userMsg("x")), Fingerprint(modelMsg("x")))
	assert.NotPanics(t, func() { Fingerprint(nil); Fingerprint(&genai.Content{Parts: []*genai.Part{nil}}) })
}

// TestHashes: the hashes by value agree with the fingerprint where they
// share its walk, and tell apart what it tells apart.
func TestHashes(t *testing.T) {
	long := strings.Repeat("a long tool result line\n", 20)
	for _, tc := range []struct {
		name string
		same bool
		a, b uint64
	}{
		{"Hash is the fingerprint's number", true, Hash(userMsg("x")), Hash(userMsg("x"))},
		{"Hash tells contents apart", false, Hash(userMsg("x")), Hash(modelMsg("x"))},
		{"ChainHash is by value", true, ChainHash(userMsg(long)), ChainHash(userMsg(strings.Clone(long)))},
		{"ChainHash sees an edit in a long string", false, ChainHash(userMsg(long)), ChainHash(userMsg(long + "!"))},
		{"HashBytes is by value", true, HashBytes([]byte("abc")), HashBytes([]byte("abc"))},
		{"HashBytes tells bytes apart", false, HashBytes([]byte("abc")), HashBytes([]byte("abd"))},
		{"StringHash depends on its salt", false, StringHash(1, "name"), StringHash(2, "name")},
	} {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.same, tc.a == tc.b) })
	}
	assert.Equal(t, Fingerprint(userMsg("x")), fmt.Sprintf("%016x", Hash(userMsg("x"))))
}
