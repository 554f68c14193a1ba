package core

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"
)

func terms(s string) []string {
	var out []string
	eachTerm(s, func(t string) bool { out = append(out, t); return true })
	return out
}

func TestEachTerm(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"Hello, World!", []string{"hello", "world"}},
		{"MARK-7f3a9 found", []string{"mark", "7f3a9", "found"}},
		{"parseConfig failed", []string{"parseconfig", "parse", "config", "failed"}},
		{"snake_case_name", []string{"snake", "case", "name"}},
		{"port=8080\x00\x1b[31m", []string{"port", "8080", "31m"}},
		{"Größe ÄRGER", []string{"größe", "ärger"}},
		{strings.Repeat("a", 100), []string{strings.Repeat("a", maxRecallTermBytes)}},
	} {
		assert.Equal(t, tc.want, terms(tc.in), tc.in)
	}
}

func TestChunkEnd_KeepsWordsAndRunes(t *testing.T) {
	s := strings.Repeat("wörd ", 600)
	for len(s) > 0 {
		n := chunkEnd(s, recallChunkBytes)
		require.Positive(t, n)
		require.LessOrEqual(t, n, recallChunkBytes)
		assert.True(t, utf8RuneStartByte(s[min(n, len(s)-1)]) || n == len(s))
		s = s[n:]
	}
	assert.Equal(t, 5, chunkEnd("abcdefgh", 5), "no space: cut at the limit")
}

// indexOf indexes every content of cs.
func indexOf(cs ...*genai.Content) *recallIndex {
	x := newRecallIndex("")
	for i := range cs {
		x.add(cs, i, i+1)
	}
	return x
}

func TestRecallIndex_RanksTheRareWordsExcerptFirst(t *testing.T) {
	x := indexOf(
		userMsg("the build ran and the tests ran and the linter ran"),
		modelMsg("the deploy failed with error code E4711 in the billing service"),
		userMsg("the weather is nice and the build is green"),
	)
	hits, _ := x.search(terms("billing error"), 5)
	require.NotEmpty(t, hits)
	assert.Equal(t, 1, x.srcs[x.docs[hits[0].doc].src].pos)
	_, total := x.search(terms("kubernetes"), 5)
	assert.Zero(t, total, "a word no excerpt holds matches nothing")
}

func TestRecallIndex_PhraseOutranksScatteredWords(t *testing.T) {
	x := indexOf(
		userMsg("connection refused by the database; later the pool was reset and the connection came back"),
		userMsg("the database pool reset: connection refused by the database"),
	)
	hits, _ := x.search(terms("connection refused by the database"), 5)
	require.Len(t, hits, 2)
	assert.True(t, hasPhrase(x.docs[hits[0].doc].text, terms("connection refused by the database")))
}

func TestRecallIndex_SkipsRecallsOwnCallsAndThoughts(t *testing.T) {
	x := indexOf(
		&genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{Text: "secret plan", Thought: true},
			{FunctionCall: &genai.FunctionCall{Name: RecallToolName, Args: map[string]any{"query": "needle"}}}}},
		&genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{Name: RecallToolName, Response: map[string]any{"result": "needle"}}}}},
	)
	assert.Empty(t, x.docs)
}

func TestRecallIndex_ValidDetectsARewrittenHistory(t *testing.T) {
	cs := []*genai.Content{userMsg("one"), modelMsg("two")}
	x := indexOf(cs...)
	assert.True(t, x.valid(cs))
	assert.True(t, x.valid(append(cs, userMsg("three"))), "a longer history extends it")
	assert.False(t, x.valid([]*genai.Content{userMsg("one"), modelMsg("other")}))
	assert.False(t, x.valid(cs[:1]), "a shorter history does not hold it")
}

func TestTopHits_KeepsTheBestKInOrder(t *testing.T) {
	scores := []float64{0.5, 3, 1, 3, 0.1, 2}
	hits := []int{0, 1, 2, 3, 4, 5}
	top := topHits(hits, scores, 3)
	assert.Equal(t, []recallHit{{1, 3}, {3, 3}, {5, 2}}, top, "ties keep the earlier excerpt first")
	assert.Len(t, topHits(hits, scores, 10), 6)
}
