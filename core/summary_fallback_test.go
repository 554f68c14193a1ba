package core

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/coretest"
	"github.com/adk-contextguard/contextguard/core/internal/calib"
)

// TestFallbackSummary: the summary written without the summarizer stays
// within its budget as the guard counts it, and lists what a resumed agent
// needs: the earlier summary, the user's requests newest first (with a
// count of those left out), the model's last text, the tools called and the
// todo list, each section within its share.
func TestFallbackSummary(t *testing.T) {
	todos := []TodoItem{{Content: "check pods", Status: "in_progress"}}
	withTools := append(coretest.History(5, 100), callMsg("kubectl_get_pods", nil), respMsg("kubectl_get_pods", map[string]any{"out": "3 pods"}))
	cases := []struct {
		name   string
		factor float64
		prev   string
		cs     []*genai.Content
		todos  []TodoItem
		budget int
		want   []string // substrings, in this order
		absent []string
	}{
		{name: "a budget too small for a heading and a line gives none", factor: 1, prev: "PREV", cs: withTools, budget: fallbackMinTokens - 1},
		{name: "a calibration that leaves no room for the short heading gives none", factor: calib.MaxCorrection, prev: "PREV", cs: withTools, budget: 20},
		{name: "a large budget lists every section", factor: 1, prev: "PREV", cs: withTools, todos: todos, budget: 10_000,
			want: []string{"(Automatic summary", "## Earlier summary\nPREV", "## User requests (newest first)\n- OLD-U4", "- OLD-U3", "- OLD-U0",
				"## Last assistant message\nOLD-M4", "## Tools called\n- kubectl_get_pods x1", "## Todo List\n- [in_progress] check pods"},
			absent: []string{"not listed"}},
		{name: "a small budget keeps the newest requests and counts the rest", factor: 1, cs: coretest.History(20, 100), budget: 200,
			want: []string{"- OLD-U19", "(19 earlier requests not listed: no room)"}, absent: []string{"OLD-U0 "}},
		{name: "the same under a calibration factor", factor: 2.5, cs: coretest.History(20, 100), budget: 500,
			want: []string{"- OLD-U19", "earlier requests not listed: no room)"}, absent: []string{"OLD-U0 "}},
		{name: "tools in the order of their first call, every call counted", factor: 1,
			cs:     []*genai.Content{userMsg("fix it"), callMsg("read", nil), respMsg("read", nil), callMsg("edit", nil), respMsg("edit", nil), callMsg("read", nil)},
			budget: 1000, want: []string{"- fix it", "## Tools called\n- read x2\n- edit x1"},
			absent: []string{"## Last assistant message", "## Todo List", "## Earlier summary"}},
		{name: "a long earlier summary is cut to its share and the requests keep the rest", factor: 1, prev: strings.Repeat("previous ", 3000), cs: coretest.History(3, 100), budget: 1000,
			want: []string{"## Earlier summary\nprevious", "omitted", "## User requests (newest first)\n- OLD-U2", "- OLD-U1", "- OLD-U0"}},
		{name: "no contents and no earlier summary: the heading alone", factor: 1, budget: 1000,
			want: []string{"(Automatic summary"}, absent: []string{"##"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cal := calib.Calibration{Factor: tc.factor}
			s := fallbackSummary(testEst, cal, tc.prev, tc.cs, tc.todos, tc.budget)
			if tc.want == nil {
				assert.Empty(t, s)
				return
			}
			assert.LessOrEqual(t, cal.Scale(testEst.Text(s)), tc.budget)
			at := 0
			for _, w := range tc.want {
				i := strings.Index(s[at:], w)
				if !assert.GreaterOrEqual(t, i, 0, "%q missing, or out of order", w) {
					t.Logf("summary:\n%s", s)
					return
				}
				at += i + len(w)
			}
			for _, a := range tc.absent {
				assert.NotContains(t, s, a)
			}
			if tc.prev != "" {
				sec := s[strings.Index(s, "\n## Earlier summary"):strings.Index(s, "\n## User requests")]
				assert.LessOrEqual(t, cal.Scale(testEst.Text(sec)), int(float64(tc.budget)*fallbackSharePrev), "the earlier summary within its share")
			}
		})
	}
}

// TestFallbackSummary_FitsEveryBudget: from the smallest budget a summary is
// written for up, with every section over its share and any calibration
// factor, the summary is never over its budget, and is written whenever
// the short heading fits.
func TestFallbackSummary_FitsEveryBudget(t *testing.T) {
	cs := append(coretest.History(50, 2000), callMsg("kubectl_get_pods", nil), respMsg("kubectl_get_pods", map[string]any{"out": strings.Repeat("pod ", 5000)}))
	todos := []TodoItem{{Content: strings.Repeat("check pods ", 200), Status: "in_progress"}}
	for _, cal := range []calib.Calibration{{Factor: 1}, {Factor: 2.5}, {Factor: calib.MaxCorrection}} {
		short := cal.Scale(testEst.Text("(automatic summary)\n"))
		for budget := fallbackMinTokens; budget <= 10_000; budget = budget*5/4 + 1 {
			s := fallbackSummary(testEst, cal, strings.Repeat("previous ", 3000), cs, todos, budget)
			assert.LessOrEqual(t, cal.Scale(testEst.Text(s)), budget, "budget %d, factor %v", budget, cal.Factor)
			if budget >= short {
				assert.NotEmpty(t, s, "budget %d, factor %v", budget, cal.Factor)
			}
		}
	}
}
