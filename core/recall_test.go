package core

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/contentid"
	"github.com/adk-contextguard/contextguard/core/internal/state"
	"github.com/adk-contextguard/contextguard/core/internal/textcut"
)

// recallCall is a tool's call in one user's session.
type recallCall struct {
	context.Context
	user, session string
}

func (c recallCall) AppName() string             { return "app" }
func (c recallCall) UserID() string              { return c.user }
func (c recallCall) SessionID() string           { return c.session }
func (c recallCall) UserContent() *genai.Content { return nil }

func callOf(user, session string) recallCall {
	return recallCall{Context: context.Background(), user: user, session: session}
}

// compactedAt is the state of agent "a" whose summary covers the first cut
// contents of history.
func compactedAt(history []*genai.Content, cut int) *mapState {
	st := newMapState()
	_ = st.Set(state.KeySummary+"a", "the summary")
	_ = st.Set(state.KeyWatermark+"a", cut)
	_ = st.Set(state.KeyFingerprint+"a", contentid.Fingerprint(history[cut-1]))
	return st
}

// sessionHistory is a conversation of n turns with fact planted in turn 2.
func sessionHistory(n int, fact string) []*genai.Content {
	var cs []*genai.Content
	for i := 1; i <= n; i++ {
		text := fmt.Sprintf("turn %d: please look at file%d.go", i, i)
		if i == 2 {
			text = fact
		}
		cs = append(cs, userMsg(text), modelMsg(fmt.Sprintf("done with step %d", i)))
	}
	return cs
}

func TestRecall_FindsWhatTheSummaryCoversOnly(t *testing.T) {
	g, _ := newTestGuard(t, fixedSummary("S"))
	h := sessionHistory(10, "the staging database password rotates every Tuesday at noon")
	h[15] = userMsg("the production cluster is named orion-7")
	st := compactedAt(h, 10)

	out, err := g.Recall(callOf("u", "s"), st, "a", RecallScope{}, h, RecallArgs{Query: "database password"})
	require.NoError(t, err)
	assert.Contains(t, out, "rotates every Tuesday")
	assert.Contains(t, out, "turn 2, user")

	out, err = g.Recall(callOf("u", "s"), st, "a", RecallScope{}, h, RecallArgs{Query: "orion"})
	require.NoError(t, err)
	assert.Contains(t, out, "no earlier excerpt matches", "what is still in the request is not searched")
}

func TestRecall_NothingCompactedYet(t *testing.T) {
	g, _ := newTestGuard(t, fixedSummary("S"))
	out, err := g.Recall(callOf("u", "s"), newMapState(), "a", RecallScope{}, sessionHistory(3, "x"), RecallArgs{Query: "file1"})
	require.NoError(t, err)
	assert.Contains(t, out, "nothing of this conversation has been compacted")
}

func TestRecall_UnknownAgentIsAnError(t *testing.T) {
	g, _ := newTestGuard(t, fixedSummary("S"))
	_, err := g.Recall(callOf("u", "s"), newMapState(), "nobody", RecallScope{}, nil, RecallArgs{Query: "x"})
	require.Error(t, err)
	var ng *Guard
	_, err = ng.Recall(callOf("u", "s"), newMapState(), "a", RecallScope{}, nil, RecallArgs{Query: "x"})
	require.Error(t, err)
}

// loadState is agent "a"'s state in st.
func loadState(st StateReader) state.Agent {
	return state.IO{Agent: "a", Log: quietLog, Missing: func(error) bool { return true }}.LoadAll(st)
}

// answerTokens is what a recall answer weighs in agent "a"'s next request
// as the guard counts it: the tool's response, with the estimator of the
// agent's model (none seen yet: the default family's) and the session's
// calibration.
func answerTokens(st StateReader, answer string) int {
	est := estimatorFor("")
	return newCalibration(loadState(st), est).Scale(est.Content(recallAnswerContent(answer)))
}

// resultPage splits an answer for a call_id into the result's bytes it
// holds and the next page it names (0: none).
func resultPage(t *testing.T, out, callID string) (string, int) {
	t.Helper()
	head, body, ok := strings.Cut(out, ":\n")
	require.True(t, ok, out)
	require.Contains(t, head, "call_id "+callID)
	body, more, _ := strings.Cut(body, "\n[More: call recall_context with call_id "+callID+" and page ")
	next := 0
	if more != "" {
		_, err := fmt.Sscanf(more, "%d", &next)
		require.NoError(t, err)
	}
	return body, next
}

// readStep is a call and its response of n bytes, with call ID id.
func readStep(id string, payload string) []*genai.Content {
	return []*genai.Content{
		{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{ID: id, Name: "read_file", Args: map[string]any{"path": id + ".txt"}}}}},
		{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{ID: id, Name: "read_file", Response: map[string]any{"output": payload}}}}},
	}
}

func TestRecall_PrunedResultByCallIDInPagesByteForByte(t *testing.T) {
	g, _ := newTestGuard(t, fixedSummary("S"), WithToolResultPruning(2))
	payload := strings.Repeat("line ünïcödé \"quoted\" 42\n", 2000) // 50 KB, multi-byte runes
	h := []*genai.Content{userMsg("read the files")}
	for i := range 6 {
		p := fmt.Sprintf("small %d", i)
		if i == 0 {
			p = payload
		}
		h = append(h, readStep(fmt.Sprintf("call-%d", i), p)...)
	}
	want := textcut.JSON(map[string]any{"output": payload})
	for _, room := range []int{0, 1_500} { // the default budget, and a small one
		st := newMapState()
		if room > 0 {
			_ = st.Set(state.KeyWindow+"a", 100_000)
			_ = st.Set(state.KeyLastTokens+"a", 100_000-room)
		}
		var got strings.Builder
		for page, calls := 1, 0; page > 0; calls++ {
			require.Less(t, calls, 1000)
			out, err := g.Recall(callOf("u", "s"), st, "a", RecallScope{}, h, RecallArgs{CallID: "call-0", Page: page})
			require.NoError(t, err)
			require.LessOrEqual(t, answerTokens(st, out), recallBudget(loadState(st)), "within the budget")
			var body string
			body, page = resultPage(t, out, "call-0")
			got.WriteString(body)
		}
		assert.Equal(t, want, got.String(), "room %d: the pages join into the result byte for byte", room)
	}

	out, err := g.Recall(callOf("u", "s"), newMapState(), "a", RecallScope{}, h, RecallArgs{Query: "ünïcödé quoted"})
	require.NoError(t, err)
	assert.Contains(t, out, "result of tool read_file (call_id call-0)", "a pruned result is searched by words too")

	out, err = g.Recall(callOf("u", "s"), newMapState(), "a", RecallScope{}, h, RecallArgs{CallID: "no-such"})
	require.NoError(t, err)
	assert.Contains(t, out, "no tool result with call_id")
}

func TestRecall_IsolatesUsersSessionsAndScopes(t *testing.T) {
	g, _ := newTestGuard(t, fixedSummary("S"))
	hA := sessionHistory(8, "alice's vault code is 4471 walrus")
	hB := sessionHistory(8, "bob's vault code is 9902 pelican")
	ask := func(c recallCall, scope RecallScope, h []*genai.Content, q string) string {
		out, err := g.Recall(c, compactedAt(h, 8), "a", scope, h, RecallArgs{Query: q})
		require.NoError(t, err)
		return out
	}
	for _, tc := range []struct {
		name string
		call recallCall
		h    []*genai.Content
		own  string
		hers string
	}{
		{"alice", callOf("alice", "s1"), hA, "walrus", "pelican"},
		{"bob, same session ID", callOf("bob", "s1"), hB, "pelican", "walrus"},
		{"alice, another session", callOf("alice", "s2"), hB, "pelican", "walrus"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Contains(t, ask(tc.call, RecallScope{}, tc.h, tc.own), "vault code")
			assert.Contains(t, ask(tc.call, RecallScope{}, tc.h, tc.hers), "no earlier excerpt matches")
		})
	}
	// One session, two branches: the index of one branch never answers the
	// other's recall, even where the histories start alike.
	c := callOf("carol", "s3")
	branchA := append(sessionHistory(4, "carol's branch A secret is heron"), sessionHistory(4, "x")...)
	branchB := append(sessionHistory(4, "carol's branch A secret is heron")[:2], sessionHistory(7, "branch B knows ibis")[2:]...)
	assert.Contains(t, ask(c, RecallScope{Branch: "root.a"}, branchA, "heron"), "secret is heron")
	assert.Contains(t, ask(c, RecallScope{Branch: "root.b"}, branchB, "heron"), "no earlier excerpt matches", "branch A's excerpt stays in branch A")
}

func TestRecall_HostileQueries(t *testing.T) {
	g, _ := newTestGuard(t, fixedSummary("S"))
	h := sessionHistory(10, "the regex (a+)+$ froze the parser")
	st := compactedAt(h, 12)
	for _, tc := range []struct {
		name  string
		args  RecallArgs
		wants string
	}{
		{"empty", RecallArgs{}, "no words to search for"},
		{"punctuation only", RecallArgs{Query: "()[]*+?$^|\\"}, "no words to search for"},
		{"control characters", RecallArgs{Query: "\x00\x01\x1b\x7f\u0085"}, "no words"},
		{"1 MB", RecallArgs{Query: strings.Repeat("parser ", 150_000)}, "cut to its first"},
		{"regex bomb", RecallArgs{Query: strings.Repeat("(a+)+", 5000) + "$"}, "froze the parser"},
		{"invalid UTF-8", RecallArgs{Query: "pars\xff\xfeer regex"}, "regex"},
		{"page far past the end", RecallArgs{Query: "step", Page: 1 << 40}, "page 2 of 2"},
		{"negative page", RecallArgs{Query: "step", Page: -3}, "page 1 of 2"},
		{"huge call id", RecallArgs{CallID: strings.Repeat("x", 1<<20)}, "no tool result"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out string
			require.NotPanics(t, func() {
				var err error
				out, err = g.Recall(callOf("u", "s"), st, "a", RecallScope{}, h, tc.args)
				require.NoError(t, err)
			})
			assert.Contains(t, out, tc.wants)
			assert.LessOrEqual(t, answerTokens(st, out), recallDefaultTokens, "bounded")
		})
	}
}

func TestRecall_BudgetIsAQuarterOfTheRoomLeft(t *testing.T) {
	g, _ := newTestGuard(t, fixedSummary("S"))
	var h []*genai.Content
	for i := range 40 {
		h = append(h, userMsg(fmt.Sprintf("needle %d %s", i, strings.Repeat("hay ", 250))))
	}
	st := compactedAt(h, 40)
	for _, tc := range []struct {
		window, tokens, maxTokens int
	}{
		{0, 0, recallDefaultTokens},
		{1_000_000, 10_000, recallDefaultTokens},
		{10_000, 8_000, 500},
		{4_000, 3_300, 175},
	} {
		_ = st.Set(state.KeyWindow+"a", tc.window)
		_ = st.Set(state.KeyLastTokens+"a", tc.tokens)
		out, err := g.Recall(callOf("u", "s"), st, "a", RecallScope{}, h, RecallArgs{Query: "needle"})
		require.NoError(t, err)
		assert.LessOrEqual(t, answerTokens(st, out), tc.maxTokens, "window %d", tc.window)
		assert.Contains(t, out, "More matches exist", "says how to page")
	}
	_ = st.Set(state.KeyWindow+"a", 10_000)
	_ = st.Set(state.KeyLastTokens+"a", 9_900)
	out, err := g.Recall(callOf("u", "s"), st, "a", RecallScope{}, h, RecallArgs{Query: "needle"})
	require.NoError(t, err)
	assert.Equal(t, noRoom, out)
}

func TestRecall_IndexesOnlyWhatIsNew(t *testing.T) {
	g, _ := newTestGuard(t, fixedSummary("S"))
	h := sessionHistory(20, "fact")
	recallOnce := func(h []*genai.Content, cut int) *recallIndex {
		_, err := g.Recall(callOf("u", "s"), compactedAt(h, cut), "a", RecallScope{}, h, RecallArgs{Query: "file"})
		require.NoError(t, err)
		e, err := g.sessions.acquire(context.Background(), sessionKey(callOf("u", "s")))
		require.NoError(t, err)
		defer g.sessions.release(e)
		return e.memory("a").recall
	}
	x := recallOnce(h[:20], 10)
	require.Len(t, x.srcs, 10)
	x.srcs[0].turn = -1 // a sentinel
	x = recallOnce(h, 30)
	assert.Len(t, x.srcs, 30, "the contents the new cut covers are added")
	assert.Equal(t, -1, x.srcs[0].turn, "the index grew in place: what it held was not indexed again")

	rewritten := sessionHistory(20, "another fact")
	rewritten[0] = userMsg("another start")
	x = recallOnce(rewritten, 30)
	assert.Len(t, x.srcs, 30)
	assert.Equal(t, "another start", x.ix.Text(0), "a history that changed under the index rebuilds it")

	e, err := g.sessions.acquire(context.Background(), sessionKey(callOf("u", "s")))
	require.NoError(t, err)
	assert.Greater(t, e.retainedBytes(), sessionOverhead+x.bytes-1, "the index is accounted")
	g.sessions.release(e)
}

func TestDeclaresRecall_TellsTheModel(t *testing.T) {
	with := &genai.GenerateContentConfig{Tools: []*genai.Tool{nil, {FunctionDeclarations: []*genai.FunctionDeclaration{nil, {Name: "other"}, {Name: RecallToolName}}}}}
	without := &genai.GenerateContentConfig{Tools: []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{{Name: CompactToolName}}}}}
	assert.True(t, declaresRecall(with))
	assert.False(t, declaresRecall(without))
	assert.False(t, declaresRecall(nil))

	assert.Contains(t, summaryContent("S", "u", true).Parts[0].Text, recallNote)
	assert.NotContains(t, summaryContent("S", "u", false).Parts[0].Text, RecallToolName)

	big := respMsg("kubectl_logs", map[string]any{"output": strings.Repeat("log line\n", 500)})
	big.Parts[0].FunctionResponse.ID = "c-1"
	p := buildPruned(testEst, big, true).Content
	require.NotNil(t, p)
	assert.Contains(t, p.Parts[0].FunctionResponse.Response[prunedKey], `call_id "c-1"`)
	p = buildPruned(testEst, big, false).Content
	assert.NotContains(t, p.Parts[0].FunctionResponse.Response[prunedKey], RecallToolName)
}

// benchHistory is a compacted history of about tokens tokens (4 bytes a
// token): user requests, model answers and tool results of a coding
// session, each with distinct identifiers and numbers.
func benchHistory(tokens int) []*genai.Content {
	var cs []*genai.Content
	words := []string{"deploy", "config", "parser", "timeout", "cluster", "billing", "cache", "schema", "retry", "socket"}
	size := 0
	for i := 0; size < tokens*4; i++ {
		w := words[i%len(words)]
		user := fmt.Sprintf("step %d: check the %s of service svc%d, the error was E%d in %s_%d.go", i, w, i%97, 1000+i, w, i)
		var out strings.Builder
		for j := range 30 {
			fmt.Fprintf(&out, "%s line %d of file%d: value=%d status=%s ok\n", w, j, i, i*j, words[(i+j)%len(words)])
		}
		step := readStep(fmt.Sprintf("c%d", i), out.String())
		cs = append(cs, userMsg(user), step[0], step[1], modelMsg(fmt.Sprintf("the %s of svc%d looks fine; moving on", w, i%97)))
		size += len(user) + out.Len() + 80
	}
	return cs
}

func BenchmarkRecall(b *testing.B) {
	for _, tokens := range []int{200_000, 1_000_000} {
		h := benchHistory(tokens)
		st := compactedAt(h, len(h)-4)
		args := RecallArgs{Query: "parser error E1502 in parser_502.go"}
		b.Run(fmt.Sprintf("first/%dk", tokens/1000), func(b *testing.B) {
			for b.Loop() {
				g, _ := newTestGuard(b, fixedSummary("S")) // a restart: no index
				if _, err := g.Recall(callOf("u", "s"), st, "a", RecallScope{}, h, args); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("growing/%dk", tokens/1000), func(b *testing.B) {
			// The conversation goes on after the cut: each recall sees a
			// longer history (nothing new to index), so each pays the pass
			// over the history.
			const tail = 4096
			long := append(slices.Clone(h), benchHistory(tail * 120)[:tail]...)
			g, _ := newTestGuard(b, fixedSummary("S"))
			if _, err := g.Recall(callOf("u", "s"), st, "a", RecallScope{}, long[:len(h)], args); err != nil {
				b.Fatal(err)
			}
			i := 0
			for b.Loop() {
				i++
				if _, err := g.Recall(callOf("u", "s"), st, "a", RecallScope{}, long[:len(h)+1+i%tail], args); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("steady/%dk", tokens/1000), func(b *testing.B) {
			g, _ := newTestGuard(b, fixedSummary("S"))
			if _, err := g.Recall(callOf("u", "s"), st, "a", RecallScope{}, h, args); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				out, err := g.Recall(callOf("u", "s"), st, "a", RecallScope{}, h, args)
				if err != nil || !strings.Contains(out, "parser_502.go") {
					b.Fatal(err, out)
				}
			}
		})
	}
}
