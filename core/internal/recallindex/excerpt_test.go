package recallindex

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSpanOf(t *testing.T) {
	for _, tc := range []struct {
		name  string
		text  string
		query string
		limit int
		want  string
	}{
		{"all the terms together beat the first one alone",
			"NameError   Traceback\nframes\nNameError: name 'accum_gradients' is not defined", "NameError name accum_gradients", 200,
			"NameError: name 'accum_gradients"},
		{"a term matches words, not the inside of longer ones",
			"the profiles of the filesystem; the file is here", "file", 100, "file"},
		{"offsets hold where lower case changes length",
			"İİİİ İSTANBUL walrus", "walrus", 100, "walrus"},
		{"the span fits the limit",
			"alpha " + strings.Repeat("x ", 100) + "beta alpha", "alpha beta", 20, "beta alpha"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp := spanOf(tc.text, 0, len(tc.text), terms(tc.query), tc.limit)
			require.Positive(t, sp.held)
			assert.Equal(t, tc.want, tc.text[sp.at:sp.end])
		})
	}
	assert.Zero(t, spanOf("profiles", 0, len("profiles"), terms("file"), 100).held)
}

func TestLineSpan(t *testing.T) {
	text := "first line\nthe match is here\nlast line"
	at := strings.Index(text, "match")
	a, e := LineSpan(text, at, at+len("match"), 100)
	assert.Equal(t, "the match is here", text[a:e])
	a, e = LineSpan(text, at, at+len("match"), 8)
	assert.Equal(t, "match", text[a:e], "a line longer than the limit: the span")
	a, e = LineSpan("only one line", 5, 8, 100)
	assert.Equal(t, 0, a)
	assert.Equal(t, len("only one line"), e)
}

func TestExcerpt(t *testing.T) {
	var b strings.Builder
	for i := range 40 {
		b.WriteString("line ü " + strings.Repeat("w", i%7) + "\n")
	}
	text := b.String() + "THE MATCH\n" + b.String()
	at := strings.Index(text, "THE MATCH")
	for _, limit := range []int{1, 9, 10, 37, 100, 333} {
		out, start := Excerpt(text, at, at+len("THE MATCH"), limit)
		require.LessOrEqual(t, len(out), limit)
		require.True(t, utf8.ValidString(out))
		assert.Equal(t, out, text[start:start+len(out)], "its place in the text")
		if limit >= len("THE MATCH") {
			assert.Contains(t, out, "THE MATCH", "limit %d", limit)
		}
		if limit >= 100 {
			assert.NotContains(t, strings.Split(out, "\n")[0], "…")
			assert.True(t, strings.HasPrefix(out, "line"), "cut at a line break: %q", out)
		}
	}
	out, start := Excerpt("short", 0, 5, 100)
	assert.Equal(t, "short", out)
	assert.Zero(t, start)
}

// FuzzExcerpt: for any text, query and limit, the densest span lies in the
// passage read and within the limit, and the excerpt around its lines is
// a piece of the text within the limit, valid UTF-8 when the text is.
func FuzzExcerpt(f *testing.F) {
	f.Add("NameError   Traceback\nframes\nNameError: name 'x' is not defined", "NameError name x", 40)
	f.Add("İİİ İSTANBUL walrus\nnext line", "walrus istanbul", 7)
	f.Add(strings.Repeat("wörd ", 300), "wörd", 1)
	f.Fuzz(func(t *testing.T, text, query string, limit int) {
		limit = max(min(limit, 4096), 1)
		qs := terms(query)
		sp := spanOf(text, 0, len(text), qs, limit)
		if sp.held == 0 {
			return
		}
		at, end := sp.at, sp.end
		oneWord := strings.IndexFunc(text[at:end], func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) < 0
		if at < 0 || end > len(text) || at >= end || (end-at > limit && !oneWord) {
			t.Fatalf("span [%d,%d) of %d bytes, limit %d", at, end, len(text), limit)
		}
		from, to := LineSpan(text, at, end, limit)
		if from > at || to < end || (to-from > limit && (from != at || to != end)) {
			t.Fatalf("lines [%d,%d) around [%d,%d), limit %d", from, to, at, end, limit)
		}
		out, start := Excerpt(text, from, to, limit)
		if len(out) > limit || start < 0 || start+len(out) > len(text) || text[start:start+len(out)] != out {
			t.Fatalf("excerpt at %d of %d bytes, limit %d", start, len(out), limit)
		}
		if utf8.ValidString(text) && !utf8.ValidString(out) {
			t.Fatalf("excerpt %q is not valid UTF-8", out)
		}
	})
}

func TestSpanOf_Phrase(t *testing.T) {
	phrase := func(text, query string) bool { return spanOf(text, 0, len(text), terms(query), 400).phrase }
	assert.True(t, phrase("Connection refused by the database", "refused by the"))
	assert.True(t, phrase("a a b", "a b"))
	assert.False(t, phrase("refused, later the database", "refused the"))
	assert.False(t, phrase("anything", ""))
}
