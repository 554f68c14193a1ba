package contentid

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"google.golang.org/genai"
)

// TestCheck_RunsThroughAHistory: one Check compares a history content
// by content, each from where the last record ended: a content that
// differs fails alone wherever its walk stops (a part removed, a part
// added, a text), and the contents after it still match.
func TestCheck_RunsThroughAHistory(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fails []int
		edit  func(cs []*genai.Content)
	}{
		{"nothing changed", nil, func([]*genai.Content) {}},
		{"a text changed", []int{1}, func(cs []*genai.Content) { cs[1].Parts[0].Text = "other" }},
		{"a part removed", []int{4}, func(cs []*genai.Content) { cs[4].Parts = nil }},
		{"a part added", []int{0}, func(cs []*genai.Content) {
			cs[0].Parts = append(cs[0].Parts, &genai.Part{Text: "and"})
		}},
		{"the first and the last changed", []int{0, 4}, func(cs []*genai.Content) {
			cs[0].Role, cs[4].Role = genai.RoleModel, genai.RoleUser
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := tapeHistory()
			tp, ends := recordAll(t, h)
			cs := make([]*genai.Content, len(h))
			for i, c := range h {
				cs[i] = adkClone(c)
			}
			tc.edit(cs)
			ck := tp.Check(Mark{})
			got := make([]bool, len(cs))
			for i, c := range cs {
				got[i] = ck.Match(c, ends[i])
			}
			want := []bool{true, true, true, true, true}
			for _, i := range tc.fails {
				want[i] = false
			}
			assert.Equal(t, want, got)
			assert.Equal(t, matches(tp, ends, cs), got, "the same as a comparison started per content")
		})
	}
}
