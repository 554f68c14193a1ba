package textcut

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"
)

func TestMiddle(t *testing.T) {
	japanese := strings.Repeat("日本語テキスト", 200)
	for _, n := range []int{0, 10, 40, 100, 1000, len(japanese), len(japanese) + 5} {
		out := Middle(japanese, n)
		assert.True(t, utf8.ValidString(out), "a cut of multi-byte text to %d bytes stays valid UTF-8", n)
		assert.LessOrEqual(t, len(out), max(n, 0), "a cut to %d bytes holds at most that many", n)
	}
	for _, tc := range []struct {
		name     string
		s        string
		maxBytes int
		check    func(t *testing.T, out string)
	}{
		{"a long text keeps its head and its tail and says what was cut",
			"HEAD" + strings.Repeat("x", 10_000) + "TAIL", 200, func(t *testing.T, out string) {
				assert.True(t, strings.HasPrefix(out, "HEAD"))
				assert.True(t, strings.HasSuffix(out, "TAIL"))
				assert.Contains(t, out, "bytes omitted")
			}},
		{"a text within the bound is kept whole", "short", 5, func(t *testing.T, out string) {
			assert.Equal(t, "short", out)
		}},
		{"a bound too small for the marker keeps a prefix", strings.Repeat("ab", 50), 20, func(t *testing.T, out string) {
			assert.Equal(t, strings.Repeat("ab", 10), out)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.check(t, Middle(tc.s, tc.maxBytes)) })
	}
}

func TestPrefixAndSanitize(t *testing.T) {
	for _, tc := range []struct {
		name       string
		s          string
		n          int
		wantPrefix string
	}{
		{"a cut inside a rune steps back to its start", "aé", 2, "a"},
		{"a cut past the end keeps the whole text", "abc", 10, "abc"},
		{"a cut of nothing is empty", "abc", 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.wantPrefix, Prefix(tc.s, tc.n)) })
	}
	assert.Equal(t, "a\uFFFDb", Sanitize("a\xffb"), "invalid bytes are replaced")
	assert.Equal(t, "ok", Sanitize("ok"), "valid text is unchanged")
}

func TestContentText(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    *genai.Content
		want string
	}{
		{"no content has no text", nil, ""},
		{"text parts are joined by lines, thoughts and other parts left out", &genai.Content{Parts: []*genai.Part{
			{Text: "one"}, {Text: "thinking", Thought: true}, nil, {FunctionCall: &genai.FunctionCall{Name: "f"}}, {Text: "two"},
		}}, "one\ntwo"},
	} {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, ContentText(tc.c)) })
	}
}

// TestTranscriptJSON_SelfReferencingAndDeepValues: the summarizer's
// transcript renders a tool result that refers to itself (json.Marshal
// fails on it) with the reference as null and the rest in full, and one
// nested 10,000 deep as json.Marshal does.
func TestTranscriptJSON_SelfReferencingAndDeepValues(t *testing.T) {
	m := map[string]any{"output": strings.Repeat("result line\n", 100)}
	m["self"] = m
	out := CompactJSON(m)
	assert.True(t, json.Valid([]byte(out)), "valid JSON: %.100s", out)
	assert.Contains(t, out, `"self":null`)
	assert.Contains(t, out, "result line", "the result itself is in the transcript")

	var v any = "leaf"
	for range 10_000 {
		v = map[string]any{"node": v}
	}
	want, err := json.Marshal(v)
	require.NoError(t, err)
	assert.Equal(t, string(want), JSON(v))
}
