package core

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/state"
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
		// The same lines in other views: listed under one excerpt.
		respMsg("read_file", map[string]any{"output": fileView(120, "vault code walrus")}),
		respMsg("read_file", map[string]any{"output": fileView(81, "vault code walrus") + htmlPage(true)}),
		respMsg("fetch", map[string]any{"output": htmlPage(false)}),
	)
	h := []*genai.Content{userMsg("u"), respMsg("read_file", map[string]any{"output": strings.Repeat("ü", 5000)})}
	h[1].Parts[0].FunctionResponse.ID = "c1"
	fit := recallFitFor(recallDefaultTokens, estimatorFor(""), state.Agent{})
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

// recallScenario is a compacted history and a query whose answer must
// show some lines, and must not show others more than once.
type recallScenario struct {
	name    string
	history []*genai.Content
	query   string
	// room is the room the agent's last request left under a window of
	// 100,000 tokens, 0 for none recorded (the default budget).
	room  int
	wants []string
	once  []string
}

// check asks the guard the scenario's query over its compacted history and
// holds the answer to its lines, to showing each of once a single time, and
// to the budget as the guard counts it; it returns the answer.
func (sc recallScenario) check(t *testing.T) string {
	t.Helper()
	g, _ := newTestGuard(t, fixedSummary("S"))
	st := compactedAt(sc.history, len(sc.history)-1)
	budget := recallDefaultTokens
	if sc.room > 0 {
		_ = st.Set(state.KeyWindow+"a", 100_000)
		_ = st.Set(state.KeyLastTokens+"a", 100_000-sc.room)
		budget = sc.room / recallRoomShare
	}
	out, err := g.Recall(callOf("u", "s"), st, "a", RecallScope{}, sc.history, RecallArgs{Query: sc.query})
	require.NoError(t, err)
	for _, w := range sc.wants {
		assert.Contains(t, out, w)
	}
	for _, o := range sc.once {
		assert.Equal(t, 1, strings.Count(out, o), "%q shown once:\n%s", o, out)
	}
	assert.LessOrEqual(t, answerTokens(st, out), budget, "within the budget as the guard counts it")
	return out
}

// toolOutput is a tool step whose result is output, with call ID id.
func toolOutput(id, output string) []*genai.Content {
	return readStep(id, output)
}

// ipythonTraceback is a Jupyter traceback: the exception's name heads it,
// frames follow, and the message ends it.
func ipythonTraceback() string {
	var b strings.Builder
	b.WriteString("---------------------------------------------------------------------------\n")
	b.WriteString("NameError                                 Traceback (most recent call last)\n")
	b.WriteString("Cell In[7], line 3\n      1 model.train()\n----> 3 run_epoch(model, loader, optimizer)\n\n")
	for i := range 6 {
		fmt.Fprintf(&b, "File /workspace/trainer/loop.py:%d, in step_%d(model, batch, opt)\n    %d     loss = model(batch).loss / opt.scale\n", 40+i*9, i, 40+i*9)
	}
	b.WriteString("---> 97     if step % accum_gradients == 0:\n     98         opt.step()\n\n")
	b.WriteString("NameError: name 'accum_gradients' is not defined\n")
	return b.String()
}

// denseNumbers is tool output of comma-separated numbers, about two bytes
// a token, with line holding a marker in its middle.
func denseNumbers(line string) string {
	var b strings.Builder
	for i := 0; b.Len() < 12_000; i++ {
		fmt.Fprintf(&b, "%d,", (i*7919)%1000)
		if i%40 == 39 {
			b.WriteString("\n")
		}
		if i == 2000 {
			b.WriteString("\n" + line + "\n")
		}
	}
	return b.String()
}

func TestRecall_ExcerptsShowTheMatch(t *testing.T) {
	longWords := "the profiles of each filesystem were loaded by the profiler and the filename index. " + strings.Repeat("nothing else happened here. ", 20)
	turkish := "İstanbul İzmir İnegöl DİYARBAKIR " + strings.Repeat("şehir ", 150)
	todo := "- [ ] rerun the flaky cache test\n- [x] bump the version"
	var repeated []*genai.Content
	for i := range 5 {
		repeated = append(repeated, userMsg(fmt.Sprintf("turn %d", i)), modelMsg("My todo list:\n"+todo))
	}
	repeated = append(repeated, toolOutput("c-9", strings.Repeat("ok\n", 50)+"the flaky cache test failed after timeout 30s in cache_test.go:88\n"+strings.Repeat("ok\n", 50))...)
	var dense []*genai.Content
	for i := range 5 {
		dense = append(dense, toolOutput(fmt.Sprintf("c-%d", i), denseNumbers(fmt.Sprintf("checksum mismatch in block %d", i)))...)
	}
	for _, tc := range []recallScenario{{
		name: "a traceback whose header is long",
		history: append(append([]*genai.Content{userMsg("train it")}, toolOutput("c-1", ipythonTraceback())...),
			userMsg("the name of the run"), modelMsg("the error log name"), userMsg("name the checkpoint"), modelMsg("no error in the name")),
		query: "NameError name accum_gradients",
		room:  1_000,
		wants: []string{"NameError: name 'accum_gradients' is not defined"},
	}, {
		name:    "a term inside a longer word",
		history: []*genai.Content{userMsg("look"), modelMsg(longWords + "the file config.yaml holds the key"), userMsg("next")},
		query:   "file",
		room:    1_000,
		wants:   []string{"the file config.yaml holds the key"},
	}, {
		name:    "letters whose lower case changes length",
		history: []*genai.Content{userMsg("look"), modelMsg(turkish + "the vault code is 4471 walrus"), userMsg("next")},
		query:   "walrus",
		room:    1_000,
		wants:   []string{"the vault code is 4471 walrus"},
	}, {
		name:    "one line repeated in five contents",
		history: append(repeated, userMsg("next")),
		query:   "flaky cache test",
		wants:   []string{"timeout 30s in cache_test.go:88", "the same lines also in turns"},
		once:    []string{"rerun the flaky cache test"},
	}, {
		name:    "dense tool output at the budget's edge",
		history: append(dense, userMsg("next")),
		query:   "checksum mismatch block",
		wants:   []string{"checksum mismatch in block 0", "checksum mismatch in block 4"},
	}} {
		t.Run(tc.name, func(t *testing.T) { tc.check(t) })
	}
}

// fileView is a file viewer's output of lines, numbered from first, with
// line marked among filler code.
func fileView(first int, line string) string {
	var b strings.Builder
	for i := range 9 {
		text := fmt.Sprintf("    value_%d = compute(%d)", first+i, i)
		if i == 4 {
			text = line
		}
		fmt.Fprintf(&b, "%6d\t%s\n", first+i, text)
	}
	return b.String()
}

// htmlPage is a page as a CGI script prints it: its head, then (when
// listed) the script's own source with "<br />" before each line.
func htmlPage(listed bool) string {
	page := "<html>\n\t<head>\n\t\t<title>Perl File Upload</title>\n\t</head>\n\t<body>\n\t\t<h1>Upload</h1>\n\t</body>\n</html>\n"
	if !listed {
		return page
	}
	return page + strings.Repeat("progress bar 100%\n", 30) + "#!/usr/bin/perl\n<br />print <<EOF;\n<br /><html>\n<br />\t<head>\n<br />\t\t<title>Perl File Upload</title>\n<br />\t</head>\n"
}

// numberedWith is n numbered lines of filler code with line at the
// numbers at.
func numberedWith(n int, line string, at ...int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		text := fmt.Sprintf("    filler_%d = step(%d)", i, i%7)
		if slices.Contains(at, i) {
			text = line
		}
		fmt.Fprintf(&b, "%5d\t%s\n", i, text)
	}
	return b.String()
}

// resultHead matches the head of an excerpt of a tool result.
var resultHead = regexp.MustCompile(`\n\[\d+\] turn \d+, result of tool `)

func TestRecall_OneLineInSeveralViews(t *testing.T) {
	target := "        retries = backoff_schedule(attempt, jitter)"
	for _, tc := range []struct {
		recallScenario
		// results is how many excerpts of tool results the page shows.
		results int
	}{{
		recallScenario: recallScenario{
			name: "a file read twice, its lines moved by an edit",
			history: append(append(append([]*genai.Content{userMsg("read it")}, toolOutput("c-1", fileView(120, target))...),
				toolOutput("c-2", "edited: 35 lines removed")...), append(toolOutput("c-3", fileView(81, target)), userMsg("next"))...),
			query: "backoff schedule attempt jitter",
			wants: []string{"   124\t" + target, "    85\t" + target, "Other views of these lines:", "call_id c-3"},
		},
		results: 1,
	}, {
		recallScenario: recallScenario{
			name:    "a page that lists its own source, in a room of 500 tokens",
			history: append(append([]*genai.Content{userMsg("fetch")}, toolOutput("c-1", htmlPage(false))...), append(toolOutput("c-2", htmlPage(true)), userMsg("next"))...),
			query:   "title perl file upload",
			room:    2_000,
			wants:   []string{"\t\t<title>Perl File Upload</title>", "<br />\t\t<title>Perl File Upload</title>", "Other views of these lines:"},
		},
		results: 1,
	}, {
		recallScenario: recallScenario{
			name:    "one line at three places of one output",
			history: append(append([]*genai.Content{userMsg("run")}, toolOutput("c-1", numberedWith(400, target, 20, 200, 380))...), userMsg("next")),
			query:   "backoff schedule attempt jitter",
			wants:   []string{"20\t" + target, "200\t" + target, "380\t" + target, "elsewhere in the same text"},
		},
		results: 1,
	}, {
		recallScenario: recallScenario{
			name: "a file read twice, the line twice in the second view",
			history: append(append(append([]*genai.Content{userMsg("read it")}, toolOutput("c-1", numberedWith(400, target, 20))...),
				toolOutput("c-2", numberedWith(400, target, 85, 300))...), userMsg("next")),
			query: "backoff schedule attempt jitter",
			wants: []string{"20\t" + target, "85\t" + target, "300\t" + target, "call_id c-2"},
		},
		results: 1,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			out := tc.check(t)
			assert.Len(t, resultHead.FindAllString(out, -1), tc.results, "excerpts of tool results on the page:\n%s", out)
		})
	}
}
