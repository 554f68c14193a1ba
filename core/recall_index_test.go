package core

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/recallindex"
)

func terms(s string) []string {
	var out []string
	recallindex.EachTerm(s, func(t string) bool { out = append(out, t); return true })
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

func TestRecallIndex_ReadsCallsAsTheModelWroteThem(t *testing.T) {
	for _, tc := range []struct {
		name    string
		content *genai.Content
		want    string
	}{{
		name:    "a shell command's && and a tag's brackets",
		content: callMsg("bash", map[string]any{"command": `cd /w && echo "<br>" > a.html`}),
		want:    `bash {"command":"cd /w && echo \"<br>\" > a.html"}`,
	}, {
		name:    "a result of several fields",
		content: respMsg("fetch", map[string]any{"body": "<p>a & b</p>", "status": 200}),
		want:    `{"body":"<p>a & b</p>","status":200}`,
	}, {
		name:    "an escaped backslash before u0026 stays as written",
		content: callMsg("write", map[string]any{"text": `\u0026 & \\u003c`}),
		want:    `write {"text":"\\u0026 & \\\\u003c"}`,
	}, {
		name:    "a result of one string is its text",
		content: respMsg("read", map[string]any{"output": `literal \u0026 stays`}),
		want:    `literal \u0026 stays`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			x := indexOf(tc.content)
			require.Equal(t, 1, x.ix.Len())
			assert.Equal(t, tc.want, x.ix.Text(0))
		})
	}
	x := indexOf(callMsg("bash", map[string]any{"command": "make && echo done"}))
	_, total := x.ix.Search(terms("make echo"), 5)
	assert.Equal(t, 1, total, "the words beside && are terms of their own")
	_, total = x.ix.Search(terms("u0026echo"), 5)
	assert.Zero(t, total)
}
