package contextguard

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/agent/llmagent"
	"google.golang.org/adk/v2/agent/workflowagents/loopagent"
	"google.golang.org/adk/v2/agent/workflowagents/parallelagent"
	"google.golang.org/adk/v2/agent/workflowagents/sequentialagent"
	"google.golang.org/adk/v2/tool"
	"google.golang.org/adk/v2/tool/functiontool"
)

// continueText is the user message ADK v2 appends when a request would
// end on a model turn.
const continueText = "Continue processing previous requests as instructed. Exit or provide a summary if no more outputs are needed."

type amountArgs struct {
	Amount int `json:"amount"`
}

// cutCase takes the anchor of the cut after the first n contents at one
// recorded call of an agent, and checks where a later call puts it.
type cutCase struct {
	name string
	// from and n: the call (index among the agent's calls) and the cut
	// whose anchor is taken; fromAgent defaults to the checked agent.
	fromAgent string
	from, n   int
	// at: the later call of agent where Covered is asked.
	agent string
	at    int
	// want is Covered's count; wantLast the content it ends on ("" for 0).
	want     int
	wantLast string
}

// checkRoundTrips checks, at every recorded call and for every cut that
// can be named, that Covered finds the cut again in the same request:
// exactly, or short of trailing contents built from no event.
func checkRoundTrips(t *testing.T, rec *recorder) {
	t.Helper()
	named := 0
	for i, call := range rec.calls {
		pos := call.coverage.align(call.contents)
		for n := range len(call.contents) + 1 {
			anchor := call.coverage.Anchor(call.contents, n)
			if anchor == "" {
				continue
			}
			named++
			got, ok := call.coverage.Covered(call.contents, anchor)
			require.True(t, ok)
			require.LessOrEqual(t, got, n, "call %d cut %d", i, n)
			require.Positive(t, got, "call %d cut %d", i, n)
			for k := got; k < n; k++ {
				require.Equal(t, -1, pos[k], "call %d cut %d: content %d is built from an event", i, n, k)
			}
		}
	}
	require.Positive(t, named)
}

func checkCuts(t *testing.T, rec *recorder, cases []cutCase) {
	t.Helper()
	checkRoundTrips(t, rec)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fromAgent := tc.fromAgent
			if fromAgent == "" {
				fromAgent = tc.agent
			}
			fromCalls, atCalls := rec.of(fromAgent), rec.of(tc.agent)
			require.Greater(t, len(fromCalls), tc.from)
			require.Greater(t, len(atCalls), tc.at)
			from, at := fromCalls[tc.from], atCalls[tc.at]
			require.LessOrEqual(t, tc.n, len(from.contents))

			anchor := from.coverage.Anchor(from.contents, tc.n)
			require.NotEmpty(t, anchor, "the cut after %v", identities(from.contents[:tc.n]))
			covered, ok := at.coverage.Covered(at.contents, anchor)
			require.True(t, ok)
			assert.Equal(t, tc.want, covered, "later request %v", identities(at.contents))
			if tc.want > 0 {
				assert.Equal(t, tc.wantLast, identity(at.contents[covered-1]))
			}
		})
	}
}

// A long-running tool's answer arrives in a later invocation: ADK v2 first
// merges it into the pending answer at the end of the request, then moves
// it next to its call. A cut never takes in the answer it did not see.
func TestCoverage_LongRunningAnswerMovedNextToItsCall(t *testing.T) {
	approve, err := functiontool.New(functiontool.Config{Name: "approve", Description: "asks a human to approve", IsLongRunning: true},
		func(_ agent.Context, _ amountArgs) (map[string]any, error) {
			return map[string]any{"status": "pending"}, nil
		})
	require.NoError(t, err)
	clerk := &scriptedModel{script: []*genai.Content{
		modelCall("", "approve", map[string]any{"amount": 5}),
		modelText("waiting"), modelText("noted"), modelText("approved, done"), modelText("thanks noted"), modelText("bye"),
	}}
	h := newHarness(t, llmAgent(t, "clerk", clerk, approve))

	var callID string
	for _, ev := range h.run(genai.NewContentFromText("pay 5", genai.RoleUser)) {
		if ev.Content != nil && len(ev.Content.Parts) > 0 && ev.Content.Parts[0].FunctionCall != nil {
			callID = ev.Content.Parts[0].FunctionCall.ID
		}
	}
	require.NotEmpty(t, callID)
	h.run(genai.NewContentFromText("any news?", genai.RoleUser))
	h.run(&genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{
		ID: callID, Name: "approve", Response: map[string]any{"status": "approved"},
	}}}})
	h.run(genai.NewContentFromText("thanks", genai.RoleUser))
	h.run(genai.NewContentFromText("bye", genai.RoleUser))

	calls := h.rec.of("clerk")
	require.Len(t, calls, 6)
	approved := "user|resp approve  map[status:approved]"
	// The answer's merge at the end of the request, then its move.
	require.Equal(t, []string{`user|"pay 5"`, "model|call approve ", approved}, identities(calls[3].contents))
	require.Equal(t, approved, identity(calls[4].contents[2]))
	require.Equal(t, `model|"waiting"`, identity(calls[4].contents[3]))

	t.Run("a cut between the answer and older contents after it cannot be named", func(t *testing.T) {
		assert.Empty(t, calls[4].coverage.Anchor(calls[4].contents, 3))
	})
	t.Run("a cut through the merged answer cannot be named: the request left out the turns before the answer", func(t *testing.T) {
		assert.Empty(t, calls[3].coverage.Anchor(calls[3].contents, 3))
	})
	checkCuts(t, h.rec, []cutCase{
		{name: "a cut through the call finds the call again", agent: "clerk", from: 2, n: 2, at: 4, want: 2, wantLast: "model|call approve "},
		{name: "a cut through the pending answer stops before the final answer in its place", agent: "clerk", from: 1, n: 3, at: 4, want: 2, wantLast: "model|call approve "},
		{name: "a cut after the pending answer stops before the newer answer moved ahead of it", agent: "clerk", from: 2, n: 4, at: 4, want: 2, wantLast: "model|call approve "},
		{name: "a cut after the moved answer finds its last content again", agent: "clerk", from: 4, n: 6, at: 5, want: 6, wantLast: `model|"noted"`},
		{name: "a cut before the merged answer finds the call again", agent: "clerk", from: 3, n: 2, at: 5, want: 2, wantLast: "model|call approve "},
	})
}

// Parallel sub-agents run in branches of their own: the request of one
// omits the other's events, which do not count.
func TestCoverage_BranchesOmitOtherBranchesEvents(t *testing.T) {
	lookup, err := functiontool.New(functiontool.Config{Name: "lookup", Description: "looks up"},
		func(_ agent.Context, a amountArgs) (map[string]any, error) {
			return map[string]any{"found": a.Amount}, nil
		})
	require.NoError(t, err)
	p1 := llmAgent(t, "p1", &scriptedModel{script: []*genai.Content{modelText("p1 first"), modelText("p1 second")}})
	p2 := llmAgent(t, "p2", &scriptedModel{script: []*genai.Content{
		modelCall("", "lookup", map[string]any{"amount": 2}), modelText("p2 first"), modelText("p2 second"),
	}}, lookup)
	par, err := parallelagent.New(parallelagent.Config{AgentConfig: agent.Config{Name: "par", SubAgents: []agent.Agent{p1, p2}}})
	require.NoError(t, err)
	fin := llmAgent(t, "fin", &scriptedModel{script: []*genai.Content{modelText("fin first"), modelText("fin second")}})
	seq, err := sequentialagent.New(sequentialagent.Config{AgentConfig: agent.Config{Name: "seq", SubAgents: []agent.Agent{par, fin}}})
	require.NoError(t, err)
	h := newHarness(t, seq)
	h.run(genai.NewContentFromText("go", genai.RoleUser))
	h.run(genai.NewContentFromText("again", genai.RoleUser))

	p1Calls, p2Calls := h.rec.of("p1"), h.rec.of("p2")
	require.Len(t, p1Calls, 2)
	require.Equal(t, "par.p1", p1Calls[1].branch)
	require.Equal(t, "par.p2", p2Calls[0].branch)
	for _, c := range p1Calls[1].contents {
		require.NotContains(t, identity(c), "p2", "p1's request holds none of p2's events")
	}

	checkCuts(t, h.rec, []cutCase{
		{name: "a cut in a branch finds its content at the branch's next call", agent: "p2", from: 1, n: 3, at: 2, want: 3, wantLast: "user|resp lookup  map[found:2]"},
		{name: "a cut over both branches stops at the branch's own content", fromAgent: "fin", from: 0, n: 5, agent: "p1", at: 1, want: 2, wantLast: `model|"p1 first"`},
		{name: "a cut over both branches covers the other branch's calls", fromAgent: "fin", from: 0, n: 5, agent: "p2", at: 2, want: 4, wantLast: `model|"p2 first"`},
	})
}

// A task agent runs in an isolation scope (the delegating call's ID): its
// request holds only the scope's events, after a task input ADK builds
// from the delegating call's arguments, from no event.
func TestCoverage_IsolationScopeOfATaskAgent(t *testing.T) {
	lookup, err := functiontool.New(functiontool.Config{Name: "lookup", Description: "looks up"},
		func(_ agent.Context, a amountArgs) (map[string]any, error) {
			return map[string]any{"found": a.Amount}, nil
		})
	require.NoError(t, err)
	worker, err := llmagent.New(llmagent.Config{
		Name: "worker", Description: "counts", Mode: llmagent.ModeTask, Tools: []tool.Tool{lookup},
		Model: &scriptedModel{script: []*genai.Content{
			modelCall("", "lookup", map[string]any{"amount": 3}), modelText("worker result"),
			modelCall("", "lookup", map[string]any{"amount": 4}), modelText("worker result 2"),
		}},
	})
	require.NoError(t, err)
	coord, err := llmagent.New(llmagent.Config{
		Name: "coord", SubAgents: []agent.Agent{worker},
		Model: &scriptedModel{script: []*genai.Content{modelCall("", "worker", map[string]any{"request": "count"})}},
	})
	require.NoError(t, err)
	h := newHarness(t, coord)
	h.run(genai.NewContentFromText("go", genai.RoleUser))
	h.run(genai.NewContentFromText("again", genai.RoleUser))

	calls := h.rec.of("worker")
	require.Len(t, calls, 4)
	require.NotEmpty(t, calls[0].scope, "the task agent runs in a scope")
	taskInput := identity(genai.NewContentFromText(`{"request":"count"}`, genai.RoleUser))
	require.Equal(t, taskInput, identity(calls[3].contents[0]))

	t.Run("the task input alone is built from no event: no anchor", func(t *testing.T) {
		assert.Empty(t, calls[0].coverage.Anchor(calls[0].contents, 1))
	})
	t.Run("the coordinator's events are outside the scope: none is covered", func(t *testing.T) {
		c := h.rec.of("coord")[0]
		anchor := c.coverage.Anchor(c.contents, 1)
		require.NotEmpty(t, anchor)
		n, ok := calls[3].coverage.Covered(calls[3].contents, anchor)
		require.True(t, ok)
		assert.Zero(t, n)
	})
	checkCuts(t, h.rec, []cutCase{
		{name: "a cut in the scope finds its content after the task input", agent: "worker", from: 1, n: 3, at: 3, want: 3, wantLast: "user|resp lookup  map[found:3]"},
		{name: "a cut through the scope's user turn finds it again", agent: "worker", from: 2, n: 5, at: 3, want: 5, wantLast: `user|"again"`},
	})
}

// ADK v2 appends a synthetic "Continue processing" user message when the
// history ends on a model turn: present at one call, absent at the next,
// it never moves a cut.
func TestCoverage_ContinueMessageNeverMovesTheCut(t *testing.T) {
	writer := llmAgent(t, "writer", &scriptedModel{script: []*genai.Content{
		modelText("w1"), modelText("w2"), modelText("w3"), modelText("w4"), modelText("w5"), modelText("w6"),
	}})
	loop, err := loopagent.New(loopagent.Config{AgentConfig: agent.Config{Name: "loop", SubAgents: []agent.Agent{writer}}, MaxIterations: 2})
	require.NoError(t, err)
	h := newHarness(t, loop)
	h.run(genai.NewContentFromText("go", genai.RoleUser))
	h.run(genai.NewContentFromText("again", genai.RoleUser))

	calls := h.rec.of("writer")
	require.Len(t, calls, 4)
	require.Equal(t, `user|"`+continueText+`"`, identity(calls[1].contents[2]))
	require.Equal(t, `user|"again"`, identity(calls[2].contents[3]), "no continue message when the history ends on the user")

	t.Run("a cut through the continue message is the cut before it", func(t *testing.T) {
		c := calls[1]
		assert.Equal(t, c.coverage.Anchor(c.contents, 2), c.coverage.Anchor(c.contents, 3))
	})
	t.Run("the continue message alone is not covered", func(t *testing.T) {
		c := calls[3]
		last := c.coverage.Anchor(c.contents, len(c.contents))
		n, ok := c.coverage.Covered(c.contents, last)
		require.True(t, ok)
		assert.Equal(t, len(c.contents)-1, n)
	})
	checkCuts(t, h.rec, []cutCase{
		{name: "a cut through the continue message finds the model turn without it", agent: "writer", from: 1, n: 3, at: 2, want: 2, wantLast: `model|"w1"`},
		{name: "a cut taken without the message holds with it", agent: "writer", from: 2, n: 4, at: 3, want: 4, wantLast: `user|"again"`},
	})
}

// Another agent's events reach a request as "For context:" user messages;
// they are matched to their events, and the same event is found again in
// its author's own request.
func TestCoverage_OtherAgentsEventsAsForContext(t *testing.T) {
	lookup, err := functiontool.New(functiontool.Config{Name: "lookup", Description: "looks up"},
		func(_ agent.Context, a amountArgs) (map[string]any, error) {
			return map[string]any{"found": a.Amount}, nil
		})
	require.NoError(t, err)
	a := llmAgent(t, "a", &scriptedModel{script: []*genai.Content{
		modelCall("", "lookup", map[string]any{"amount": 7}), modelText("a found 7"), modelText("a again"),
	}}, lookup)
	b := llmAgent(t, "b", &scriptedModel{script: []*genai.Content{modelText("b first"), modelText("b second")}})
	seq, err := sequentialagent.New(sequentialagent.Config{AgentConfig: agent.Config{Name: "seq", SubAgents: []agent.Agent{a, b}}})
	require.NoError(t, err)
	h := newHarness(t, seq)
	h.run(genai.NewContentFromText("find 7", genai.RoleUser))
	h.run(genai.NewContentFromText("again", genai.RoleUser))

	bCalls := h.rec.of("b")
	require.Len(t, bCalls, 2)
	returned := `user|"For context:"|"[a] ` + "`lookup`" + ` tool returned result: {\"found\":7}"`
	require.Equal(t, returned, identity(bCalls[0].contents[2]))

	checkCuts(t, h.rec, []cutCase{
		{name: "a cut through a converted answer finds it at the next call", agent: "b", from: 0, n: 3, at: 1, want: 3, wantLast: returned},
		{name: "a cut through a converted text finds it at the next call", agent: "b", from: 0, n: 4, at: 1, want: 4, wantLast: `user|"For context:"|"[a] said: a found 7"`},
		{name: "a cut in the reader's request finds the author's own content", fromAgent: "b", from: 0, n: 4, agent: "a", at: 2, want: 4, wantLast: `model|"a found 7"`},
		{name: "a cut in the author's request finds the reader's converted content", fromAgent: "a", from: 2, n: 5, agent: "b", at: 1, want: 5, wantLast: `model|"b first"`},
	})
}

// An agent that sees its current turn only (IncludeContentsNone) gets no
// history, which the callback cannot tell: the history's expected contents
// are skipped, and a cut in an earlier turn covers nothing of this one.
func TestCoverage_CurrentTurnOnly(t *testing.T) {
	lookup, err := functiontool.New(functiontool.Config{Name: "lookup", Description: "looks up"},
		func(_ agent.Context, a amountArgs) (map[string]any, error) {
			return map[string]any{"found": a.Amount}, nil
		})
	require.NoError(t, err)
	bot, err := llmagent.New(llmagent.Config{
		Name: "bot", IncludeContents: llmagent.IncludeContentsNone, Tools: []tool.Tool{lookup},
		Model: &scriptedModel{script: []*genai.Content{
			modelText("first"), modelCall("", "lookup", map[string]any{"amount": 1}), modelCall("", "lookup", map[string]any{"amount": 2}),
			modelText("second"), modelText("third"),
		}},
	})
	require.NoError(t, err)
	h := newHarness(t, bot)
	h.run(genai.NewContentFromText("one", genai.RoleUser))
	h.run(genai.NewContentFromText("two", genai.RoleUser))
	h.run(genai.NewContentFromText("three", genai.RoleUser))

	calls := h.rec.of("bot")
	require.Len(t, calls, 5)
	require.Equal(t, []string{`user|"two"`, "model|call lookup ", "user|resp lookup  map[found:1]"}, identities(calls[2].contents))

	t.Run("a cut in an earlier turn covers nothing of this one", func(t *testing.T) {
		anchor := calls[0].coverage.Anchor(calls[0].contents, 1)
		require.NotEmpty(t, anchor)
		n, ok := calls[4].coverage.Covered(calls[4].contents, anchor)
		require.True(t, ok)
		assert.Zero(t, n)
	})
	checkCuts(t, h.rec, []cutCase{
		{name: "a cut in the turn finds its content at the turn's next call", agent: "bot", from: 2, n: 2, at: 3, want: 2, wantLast: "model|call lookup "},
	})
}
