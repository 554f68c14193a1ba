package recallbench

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/adk-contextguard/contextguard/integration/costbench"
)

// handMade is a session of turns tool steps, each reading a file whose
// output has lines of distinct words.
func handMade(turns int) *costbench.Trace {
	tr := &costbench.Trace{File: "hand.json"}
	for i := range turns {
		var out strings.Builder
		for j := range 6 {
			fmt.Fprintf(&out, "line%d_%d alpha%d beta%d gamma%d delta%d\n", i, j, i*10+j, j, i, i*7+j)
		}
		args, _ := json.Marshal(map[string]any{"path": fmt.Sprintf("src/module%d/file%d.go", i, i)})
		tr.Turns = append(tr.Turns, costbench.Turn{
			User:  fmt.Sprintf("please read module number %d carefully", i),
			Steps: []costbench.Step{{Calls: []costbench.Call{{ID: fmt.Sprintf("c%d", i), Name: "read_file", Args: args, Output: out.String()}}}},
			Final: fmt.Sprintf("module %d has been read completely", i),
		})
	}
	return tr
}

func TestDraw_FollowsTheRule(t *testing.T) {
	tr := handMade(8)
	// The final request still holds the last two turns.
	var final []string
	for _, turn := range tr.Turns[6:] {
		final = append(final, turn.User, turn.Steps[0].Calls[0].Output, turn.Final)
	}
	qs := Draw(tr, "hand/default/8000", final)
	require.NotEmpty(t, qs)
	assert.Equal(t, qs, Draw(tr, "hand/default/8000", final), "a fixed seed: the same queries every run")
	kinds := map[Kind]int{}
	for _, q := range qs {
		kinds[q.Kind]++
		n := len(strings.Fields(q.Text))
		assert.True(t, n >= minWords && n <= maxWords, "%q has %d words", q.Text, n)
		if q.Kind == KindCall {
			assert.NotEmpty(t, q.CallID)
			continue
		}
		for _, f := range final {
			assert.NotContains(t, f, q.Line, "only lines the final request no longer holds")
		}
		if q.Kind == KindLine {
			for _, w := range strings.Fields(q.Text) {
				assert.Contains(t, strings.ToLower(q.Line), w, "a line query's words are the line's")
			}
		}
	}
	assert.LessOrEqual(t, kinds[KindLine], lineQueries)
	assert.Positive(t, kinds[KindNeighbour])
	assert.Positive(t, kinds[KindCall])
}

func TestRarest_TakesTheRarestInLineOrder(t *testing.T) {
	line := []string{"a", "b", "c", "d", "e", "f", "g"}
	df := map[string]int{"a": 9, "b": 1, "c": 3, "d": 5, "e": 8, "f": 2, "g": 7}
	for stream := range uint64(20) {
		got := rarest(line, df, newRand(stream))
		require.True(t, len(got) >= minWords && len(got) <= maxWords, "%v", got)
		assert.Subset(t, got, []string{"b", "c", "f"}, "the three rarest are always drawn")
		assert.NotContains(t, got, "a", "the commonest never is")
		assert.IsIncreasing(t, got, "in the line's order")
	}
	assert.Nil(t, rarest([]string{"one", "two"}, df, newRand(0)), "fewer than minWords: no query")
}

func TestRank_ReadsTheAnswersExcerpts(t *testing.T) {
	answer := "recall_context: 2 excerpt(s) of the earlier conversation match \"x\", best first; page 1 of 1.\n" +
		"\n[1] turn 3, result of tool read_file (call_id c7):\nfirst excerpt\n" +
		"\n[2] turn 4, model:\nsecond excerpt holds the line\n" +
		"\nMore matches exist: call recall_context with the same query and page 2."
	assert.Equal(t, 2, rank(Query{Kind: KindLine, Line: "holds the line"}, answer))
	assert.Equal(t, 1, rank(Query{Kind: KindCall, CallID: "c7"}, answer))
	assert.Zero(t, rank(Query{Kind: KindLine, Line: "More matches"}, answer), "the paging line is no excerpt")
	assert.Zero(t, rank(Query{Kind: KindCall, CallID: "c"}, answer))
}
