package countcache

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/coretest"
	"github.com/adk-contextguard/contextguard/core/internal/contentid/hashcount"
)

// memoHistory is a history whose contents hold every kind of value the
// memo verifies: texts, nested arguments and results, a thought signature
// and inline data.
func memoHistory() []*genai.Content {
	h := coretest.ToolHistory(3, "memo") // 12 contents
	h[1].Parts[0].FunctionCall.Args["opts"] = map[string]any{"since": "1h", "fields": []any{"ts", "msg"}}
	h[3].Parts[0].ThoughtSignature = []byte("the answer's thought signature")
	h[4] = &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: "this one:"}, {InlineData: &genai.Blob{MIMEType: "image/png", Data: []byte("\x89PNG image bytes")}}}}
	return h
}

// chainOfFresh is the chain hash of cs by a memo that never saw them.
func chainOfFresh(cs []*genai.Content) uint64 {
	var m Memo
	m.update(cs)
	return m.at(len(cs))
}

// TestPrefixMemo_HashesWhatChanged: brought to ADK's copy of its contents
// plus a new one, the memo hashes only the new one. Brought to contents
// edited in place (the same pointers) at content k, it hashes content k
// and those after it, and its chain is the one of the contents as they
// now are: it changed with any change, and not for a content replaced by
// an equal copy in new bytes.
func TestPrefixMemo_HashesWhatChanged(t *testing.T) {
	hashed := func(m *Memo, cs []*genai.Content) int64 {
		before := hashcount.Load()
		m.update(cs)
		return hashcount.Load() - before
	}
	t.Run("ADK's copy and a new content", func(t *testing.T) {
		var m Memo
		h := memoHistory()
		require.EqualValues(t, len(h), hashed(&m, h))
		next := append(coretest.ADKCopy(h), userMsg("and now?"))
		next[3].Parts[0].ThoughtSignature = []byte(string(h[3].Parts[0].ThoughtSignature))
		next[4].Parts[1].InlineData = &genai.Blob{MIMEType: "image/png", Data: []byte(string(h[4].Parts[1].InlineData.Data))}
		assert.EqualValues(t, 1, hashed(&m, next), "only the new content is hashed")
		assert.Equal(t, chainOfFresh(next), m.at(len(next)))
	})
	for _, tc := range []struct {
		name    string
		at      int
		changes bool
		edit    func(h []*genai.Content)
	}{
		{"a text changed in place at the same length", 3, true, func(h []*genai.Content) {
			h[3].Parts[0].Text = strings.ToUpper(h[3].Parts[0].Text)
		}},
		{"a map argument changed in place", 1, true, func(h []*genai.Content) {
			h[1].Parts[0].FunctionCall.Args["opts"].(map[string]any)["since"] = "2h"
		}},
		{"a tool result changed in place", 6, true, func(h []*genai.Content) {
			h[6].Parts[0].FunctionResponse.Response["output"] = "error: pod not found"
		}},
		{"a []byte changed in place", 4, true, func(h []*genai.Content) {
			h[4].Parts[1].InlineData.Data[3] ^= 1
		}},
		{"a content replaced by an equal copy", 5, false, func(h []*genai.Content) {
			c := h[5].Parts[0].FunctionCall
			h[5] = callMsg(strings.Clone(c.Name), map[string]any{strings.Clone("pod"): strings.Clone(c.Args["pod"].(string)), "tail": c.Args["tail"]})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var m Memo
			h := memoHistory()
			m.update(h)
			before := m.at(len(h))
			tc.edit(h)
			assert.EqualValues(t, len(h)-tc.at, hashed(&m, h), "content %d and those after it are hashed", tc.at)
			assert.Equal(t, chainOfFresh(h), m.at(len(h)), "the chain is the edited contents'")
			assert.Equal(t, tc.changes, m.at(len(h)) != before, "the chain changed")
		})
	}
}

// TestPrefixMemo_TypedPayloadIsHashedAlone: a content whose payload the
// tape cannot verify (a struct) is hashed again on every call, and only
// it: the contents after it are still verified.
func TestPrefixMemo_TypedPayloadIsHashedAlone(t *testing.T) {
	type result struct{ Output string }
	h := memoHistory()
	h[2] = respMsg("kubectl_logs", map[string]any{"result": result{Output: "ok"}})
	var m Memo
	m.update(h)
	before := hashcount.Load()
	next := append(coretest.ADKCopy(h), userMsg("next"))
	m.update(next)
	assert.EqualValues(t, 2, hashcount.Load()-before, "the typed content and the new one")
	assert.Equal(t, chainOfFresh(next), m.at(len(next)))
}

// benchTurn is one turn as core's BenchmarkBeforeModel builds them: a
// question, a call with nested arguments, a one-key tool result, an answer.
func benchTurn(i int) []*genai.Content {
	c := callMsg("query", map[string]any{"q": "select * from t", "opts": map[string]any{"limit": float64(i), "filters": []any{"a", "b", map[string]any{"k": "v"}}}})
	return []*genai.Content{userMsg("question " + strings.Repeat("x", i%7)), c,
		respMsg("query", map[string]any{"output": strings.Repeat("row\n", 100+i)}), userMsg("answer")}
}

// BenchmarkMemoMatching is the memo's check of ADK's copy of a history it
// holds, per content (ns/content), for histories of 1, 80 and 400 turns.
func BenchmarkMemoMatching(b *testing.B) {
	for _, turns := range []int{1, 80, 400} {
		var h []*genai.Content
		for i := range turns {
			h = append(h, benchTurn(i)...)
		}
		var m Memo
		m.update(h)
		cp := coretest.ADKCopy(h)
		b.Run(strconv.Itoa(turns), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if m.matching(cp) != len(cp) {
					b.Fatal("a copy did not match")
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(cp)), "ns/content")
		})
	}
}
