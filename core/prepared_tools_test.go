package core

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"
)

// The size of the next step by the tools it calls (prepared_tools.go).

// result is one tool result recorded by name and size.
type result struct {
	name string
	n    int
}

func TestToolSizes(t *testing.T) {
	resp := func(names ...string) *genai.Content {
		c := &genai.Content{Role: genai.RoleUser}
		for _, n := range names {
			c.Parts = append(c.Parts, &genai.Part{FunctionResponse: &genai.FunctionResponse{Name: n, Response: map[string]any{"out": fillerOf(400, len(n))}}})
		}
		return c
	}
	calls := func(names ...string) *genai.Content {
		c := &genai.Content{Role: genai.RoleModel}
		for _, n := range names {
			c.Parts = append(c.Parts, &genai.Part{FunctionCall: &genai.FunctionCall{Name: n}})
		}
		return c
	}
	shared := testEst.content(resp("ls", "cat")) / 2
	for _, tc := range []struct {
		name string
		// set are recorded first, then the results that end each of raws.
		set  []result
		raws [][]*genai.Content
		// want is each tool's record, the zero value for none.
		want map[string]toolSize
		// calls and predicted: the growth predicted for the calls, -1 for
		// no prediction.
		calls     *genai.Content
		predicted int
	}{
		{name: "results alike predict the next: the largest",
			set:  []result{{"grep", 200}, {"grep", 260}, {"grep", 240}},
			want: map[string]toolSize{"grep": {least: 200, most: 260, seen: 3}}, calls: calls("grep"), predicted: 260 + testEst.content(calls("grep"))},
		{name: "results far apart predict nothing",
			set:  []result{{"read_file", 200}, {"read_file", 900}},
			want: map[string]toolSize{"read_file": {least: 200, most: 900, seen: 2}}, calls: calls("read_file"), predicted: -1},
		{name: "one result predicts nothing",
			set:  []result{{"grep", 200}},
			want: map[string]toolSize{"grep": {least: 200, most: 200, seen: 1}}, calls: calls("grep"), predicted: -1},
		{name: "a result with no name is not kept",
			set:  []result{{"", 100}, {"", 100}},
			want: map[string]toolSize{"": {}}, calls: calls(""), predicted: -1},
		{name: "the results that end the request, a content's count shared by its results",
			raws:  [][]*genai.Content{{userMsg("go"), calls("ls", "cat"), resp("ls", "cat")}, {userMsg("go"), calls("ls", "cat"), resp("ls", "cat")}},
			want:  map[string]toolSize{"ls": {least: shared, most: shared, seen: 2}, "cat": {least: shared, most: shared, seen: 2}},
			calls: calls("ls", "cat"), predicted: 2*shared + testEst.content(calls("ls", "cat"))},
		{name: "results before the request's last message are not the step's",
			raws: [][]*genai.Content{{calls("ls"), resp("ls"), modelMsg("done")}},
			want: map[string]toolSize{"ls": {}}, calls: calls("ls"), predicted: -1},
		{name: "a call of a tool not seen yet: no prediction",
			set:  []result{{"grep", 100}, {"grep", 100}},
			want: map[string]toolSize{"grep": {least: 100, most: 100, seen: 2}}, calls: calls("grep", "run_tests"), predicted: -1},
		{name: "a response without calls: no prediction", calls: modelMsg("done"), predicted: -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ts toolSizes
			for _, r := range tc.set {
				ts.set(r.name, r.n)
			}
			for _, raw := range tc.raws {
				ts.note(cachedEstimator{tokenEstimator: testEst, cache: newCountCache()}, raw)
			}
			for name, want := range tc.want {
				got, ok := ts.get(name)
				assert.Equal(t, want != toolSize{}, ok, "tool %q recorded", name)
				assert.Equal(t, want, got, "tool %q", name)
			}
			n, ok := ts.predict(testEst, tc.calls)
			if tc.predicted < 0 {
				assert.False(t, ok, "no prediction")
				return
			}
			require.True(t, ok, "a prediction")
			assert.Equal(t, tc.predicted, n)
		})
	}
}

// TestToolSizes_Bounded: a tool beyond the kept ones takes the place of
// the one recorded longest ago.
func TestToolSizes_Bounded(t *testing.T) {
	var ts toolSizes
	for i := range toolSizesKept + 1 {
		ts.set(fmt.Sprintf("tool-%d", i), i+1)
	}
	_, ok := ts.get("tool-0")
	assert.False(t, ok, "the first tool gave its place")
	for i := 1; i <= toolSizesKept; i++ {
		z, ok := ts.get(fmt.Sprintf("tool-%d", i))
		require.True(t, ok, "tool-%d", i)
		assert.Equal(t, toolSize{least: i + 1, most: i + 1, seen: 1}, z)
	}
}

// TestPrepared_SmallToolsDoNotPrepare: a large result of one tool, then
// steps of another that returns about a quarter as much. After the first
// compaction the agent's recent steps predict a step as large as the large
// one, but the tool each response calls is known to return less, so no
// summary is prepared early, only to be replaced a few steps on: the
// session's two compactions each use one summary, none is dropped, and no
// summarizer call is spent on anything else.
func TestPrepared_SmallToolsDoNotPrepare(t *testing.T) {
	baseline := runtime.NumGoroutine()
	sum := newCtl(gateAnswer)
	s := newToolSession(t, sum)
	s.charge = 1
	events := s.untilCompactions(t, 2, func(i int) {
		s.tool, s.stepTokens = "list_pods", 900
		if i == 2 {
			s.tool, s.stepTokens = "read_file", 4_000
		}
	})
	for i, ev := range events {
		assert.Equal(t, ReasonTokens, ev.Reason, "compaction %d", i)
		assert.Equal(t, RanPrepared, ev.Ran, "compaction %d", i)
	}
	assert.Equal(t, int64(2), s.g.prep.started.Load(), "summaries prepared")
	assert.Zero(t, s.g.prep.dropped.Load(), "prepared summaries dropped")
	assert.Zero(t, s.g.prep.wasted.Load(), "prepared summaries not used")
	assert.Equal(t, 2, sum.Calls(), "summarizer calls")
	s.finish(t, baseline)
}
