package core

import (
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
	hits, _ := x.ix.Search(terms("billing error"), 5)
	require.NotEmpty(t, hits)
	assert.Equal(t, 1, x.srcs[hits[0].Text].pos)
	_, total := x.ix.Search(terms("kubernetes"), 5)
	assert.Zero(t, total, "a word no excerpt holds matches nothing")
}

func TestRecallIndex_SkipsRecallsOwnCallsAndThoughts(t *testing.T) {
	x := indexOf(
		&genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{Text: "secret plan", Thought: true},
			{FunctionCall: &genai.FunctionCall{Name: RecallToolName, Args: map[string]any{"query": "needle"}}}}},
		&genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{Name: RecallToolName, Response: map[string]any{"result": "needle"}}}}},
	)
	assert.Zero(t, x.ix.Len())
	assert.Empty(t, x.srcs)
}

func TestRecallIndex_ValidDetectsARewrittenHistory(t *testing.T) {
	cs := []*genai.Content{userMsg("one"), modelMsg("two")}
	x := indexOf(cs...)
	assert.True(t, x.valid(cs))
	assert.True(t, x.valid(append(cs, userMsg("three"))), "a longer history extends it")
	assert.False(t, x.valid([]*genai.Content{userMsg("one"), modelMsg("other")}))
	assert.False(t, x.valid(cs[:1]), "a shorter history does not hold it")
}
