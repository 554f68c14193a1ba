package core

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"
)

func TestCleanQuery(t *testing.T) {
	for _, tc := range []struct {
		in    string
		terms []string
		note  string
	}{
		{"  Connection   refused\tby DB ", []string{"connection", "refused", "by", "db"}, ""},
		{"\x00\x07", nil, "no words to search for"},
		{strings.Repeat("word ", 1000), nil, "cut to its first"},
		{"\xff\xfeparse\xc0 error", []string{"parse", "error"}, ""},
	} {
		q, note := cleanQuery(tc.in)
		if tc.terms != nil {
			assert.Equal(t, tc.terms, q.terms, "%q", tc.in)
		}
		assert.Contains(t, note, tc.note, "%q", tc.in)
		assert.LessOrEqual(t, len(q.terms), maxRecallTerms)
		assert.True(t, utf8.ValidString(q.text))
	}
}

func TestPageBounds_JoinByteForByte(t *testing.T) {
	for _, s := range []string{"", "a", strings.Repeat("ü", 1000), strings.Repeat("abc€", 333)} {
		b := pageBounds(s, 7)
		var got strings.Builder
		for i := 1; i < len(b); i++ {
			page := s[b[i-1]:b[i]]
			require.True(t, utf8.ValidString(page), "page %d of %q", i, s)
			got.WriteString(page)
		}
		assert.Equal(t, s, got.String())
	}
	assert.Equal(t, []int{0, 1, 2}, pageBounds("ab", 1))
}

// FuzzRecall: any query, call_id and page against a small index gives an
// answer within the default budget and never panics.
func FuzzRecall(f *testing.F) {
	for _, s := range []string{"", "vault code", "(a+)+$", "\x00\xff", "MARK-7f3a", strings.Repeat("é", 600)} {
		f.Add(s, "", 1)
		f.Add("", s, -1)
	}
	x := indexOf(
		userMsg("the staging vault code is 4471 walrus"),
		respMsg("read_file", map[string]any{"output": strings.Repeat("line of output ü\n", 400)}),
	)
	h := []*genai.Content{userMsg("u"), respMsg("read_file", map[string]any{"output": strings.Repeat("ü", 5000)})}
	h[1].Parts[0].FunctionResponse.ID = "c1"
	fit := recallFitFor(recallDefaultTokens, estimatorFor(""), guardState{})
	f.Fuzz(func(t *testing.T, query, callID string, page int) {
		q, note := cleanQuery(query)
		out := note
		if len(q.terms) > 0 {
			out = renderMatches(x, q, page, fit, note)
		}
		if n := fit.count(out); n > fit.tokens || !utf8.ValidString(out) {
			t.Fatalf("query %q: answer of %d tokens, valid UTF-8 %v", query, n, utf8.ValidString(out))
		}
		if out = recallResult(h, callID, page, fit); fit.count(out) > fit.tokens {
			t.Fatalf("call_id %q: answer of %d tokens", callID, fit.count(out))
		}
	})
}
