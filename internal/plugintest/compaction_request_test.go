package plugintest

import (
	"context"
	"errors"
	"iter"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/tool"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/contextguardtest"

	. "github.com/adk-contextguard/contextguard"
)

// focusLine is how a focus reaches the summarizer's prompt.
const focusLine = "Focus of this summary: "

// TestRequestCompaction_FromOutside: an application that holds only the
// session service asks, between two runs, that the session compact (like
// "/compact focus on ..."). The next run's model call compacts although
// the request is far below the trigger, with Reason "requested" and the
// focus in the summarizer's prompt; the request is cleared, so the run
// after it does not compact again.
func TestRequestCompaction_FromOutside(t *testing.T) {
	tests := []struct {
		name  string
		focus string
		opts  []AgentOption
		// kept is whether the user's current message stays verbatim after
		// the summary (the sliding window keeps the newest turns) rather
		// than quoted in it.
		kept bool
	}{
		{name: "with a focus", focus: "focus on the failing test TestPayments and what was tried"},
		{name: "without a focus"},
		{name: "sliding window", focus: "keep the ticket numbers", opts: []AgentOption{WithSlidingWindow(4)}, kept: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			llm := &scriptedAgentLLM{name: "gemini-2.5-flash", script: func(int) *genai.Content { return genai.NewContentFromText("Noted.", genai.RoleModel) }}
			sum := fixedSummary("SUMMARY: the user sent three messages.")
			f := newFixture(t, fixtureConfig{llm: llm, sum: sum, opts: tt.opts})
			for i := range 3 {
				f.turn(i, 1_000)
			}
			require.Empty(t, f.compactions(), "far below the trigger, nothing compacts by itself")

			require.NoError(t, f.g.RequestCompaction(f.ctx, f.svc, fxApp, fxUser, fxSession, fxAgent, "  "+tt.focus+"\n"))
			assert.True(t, f.usage().CompactionRequested)
			f.turn(3, 1_000)

			evs := f.compactions()
			require.Len(t, evs, 1)
			assert.Equal(t, ReasonRequested, evs[0].Reason)
			assert.False(t, evs[0].Discarded)
			assert.Less(t, evs[0].TokensBefore, evs[0].Threshold, "compacted below the trigger")
			reqs := llm.recorded()
			require.Len(t, reqs, 4)
			assert.True(t, reqs[3].summarized, "the model got the summary in place of the conversation")
			if tt.kept {
				assert.Contains(t, reqs[3].text, "USER-3", "and the user's current message")
				assert.NotContains(t, reqs[3].text, "USER-0", "the oldest turn is summarized")
			} else {
				assert.Contains(t, reqs[3].quote, "USER-3", "and the user's current message")
			}
			if tt.focus != "" {
				assert.Contains(t, sum.lastInput(), focusLine+tt.focus)
			} else {
				assert.NotContains(t, sum.lastInput(), focusLine)
			}
			u := f.usage()
			assert.False(t, u.CompactionRequested, "one compaction answers the request")
			assert.Equal(t, false, f.state(keyCompactRequest+fxAgent))
			assert.Equal(t, ReasonRequested, u.LastCompactionReason)
			assert.Equal(t, fxNow, u.LastCompaction)

			f.turn(4, 1_000)
			assert.Len(t, f.compactions(), 1, "the request was answered once")
		})
	}
}

// TestRequestCompaction_FromTheTool: the agent calls the ready-made tool
// itself, with a focus. The model call that reads the tool's result gets
// the summary in place of the conversation, written with the focus.
func TestRequestCompaction_FromTheTool(t *testing.T) {
	const focus = "the deployment's rollback steps"
	llm := &scriptedAgentLLM{name: "gemini-2.5-flash", script: func(call int) *genai.Content {
		if call == 2 {
			return &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{
				Name: CompactToolName, Args: map[string]any{"focus": focus},
			}}}}
		}
		return genai.NewContentFromText("Noted.", genai.RoleModel)
	}}
	sum := fixedSummary("SUMMARY: the user described the deployment.")
	f := newFixture(t, fixtureConfig{llm: llm, sum: sum, tools: func(g *ContextGuard) []tool.Tool {
		compact, err := g.CompactTool()
		require.NoError(t, err)
		return []tool.Tool{compact}
	}})

	for i := range 3 {
		f.turn(i, 1_000)
	}

	reqs := llm.recorded()
	require.Len(t, reqs, 4, "two turns, then the tool call and the answer to its result")
	for i, r := range reqs[:3] {
		assert.False(t, r.summarized, "request %d", i)
	}
	assert.True(t, reqs[3].summarized, "the request after the tool's result starts with the summary")
	assert.Contains(t, reqs[3].quote, "USER-2", "the summary quotes the user's current message")
	evs := f.compactions()
	require.Len(t, evs, 1)
	assert.Equal(t, ReasonRequested, evs[0].Reason)
	assert.Contains(t, sum.lastInput(), focusLine+focus)
	assert.Equal(t, false, f.state(keyCompactRequest+fxAgent), "the request is cleared")
}

// TestRequestCompaction_AnsweredWhateverTheOutcome: a request is answered by
// one compaction even when that compaction is not applied (its summary
// would not make the request smaller); it is not asked again.
func TestRequestCompaction_AnsweredWhateverTheOutcome(t *testing.T) {
	llm := contextguardtest.NewScriptedModel(contextguardtest.ScriptConfig{Name: "gemini-2.5-flash", Counter: contextguardtest.SeedCounter(1)})
	// A summary longer than the conversation it replaces.
	sum := fixedSummary("SUMMARY: " + strings.Repeat("a detail worth keeping; ", 100))
	f := newFixture(t, fixtureConfig{llm: llm, sum: sum})
	require.NoError(t, f.g.RequestCompaction(f.ctx, f.svc, fxApp, fxUser, fxSession, fxAgent, ""))

	f.turn(0, 100)
	evs := f.compactions()
	require.Len(t, evs, 1)
	assert.Equal(t, ReasonRequested, evs[0].Reason)
	assert.True(t, evs[0].Discarded, "the compaction would have made the request larger")
	assert.Equal(t, false, f.state(keyCompactRequest+fxAgent), "the request is cleared")
	assert.Equal(t, 0, f.usage().Compactions)

	f.turn(1, 100)
	assert.Len(t, f.compactions(), 1, "not asked again")
	assert.Equal(t, 1, sum.Calls())
}

// TestRequestCompaction_BadInput: what RequestCompaction and its in-state
// form refuse (the checks common to the service API are in
// TestOutOfBandAPI_BadInput).
func TestRequestCompaction_BadInput(t *testing.T) {
	f := newFixture(t, fixtureConfig{llm: fixedSummary("unused"), sum: fixedSummary("unused")})
	long := strings.Repeat("x", MaxFocusBytes+1)
	tests := []struct {
		name string
		call func() error
		want string
	}{
		{"focus too long", func() error {
			return f.g.RequestCompaction(f.ctx, f.svc, fxApp, fxUser, fxSession, fxAgent, long)
		}, "at most 2000"},
		{"focus too long, in state", func() error { return f.g.RequestCompactionInState(newMapState(), fxAgent, long) }, "at most 2000"},
		{"nil state", func() error { return f.g.RequestCompactionInState(nil, fxAgent, "") }, "the session state is nil"},
		{"agent not guarded, in state", func() error { return f.g.RequestCompactionInState(newMapState(), "stranger", "") }, `agent "stranger" is not guarded`},
		{"nil guard's tool", func() error { _, err := (*ContextGuard)(nil).CompactTool(); return err }, "the guard is nil"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.ErrorContains(t, tt.call(), tt.want)
		})
	}
	assert.Nil(t, f.state(keyCompactRequest+fxAgent), "nothing was stored")
}

// failingLLM fails the model call at index failAt with a provider error
// that is not an overflow, and passes the others to next.
type failingLLM struct {
	*scriptedAgentLLM
	failAt int

	mu    sync.Mutex
	calls int
}

func (m *failingLLM) GenerateContent(ctx context.Context, req *model.LLMRequest, stream bool) iter.Seq2[*model.LLMResponse, error] {
	m.mu.Lock()
	call := m.calls
	m.calls++
	m.mu.Unlock()
	if call == m.failAt {
		return func(yield func(*model.LLMResponse, error) bool) { yield(nil, errors.New("503 Service Unavailable")) }
	}
	return m.scriptedAgentLLM.GenerateContent(ctx, req, stream)
}

// TestRequestCompaction_ModelCallFails: the model call that carried a
// requested compaction fails, and ADK drops the state it wrote, the cleared
// request with it. The next call reuses the compaction (the in-memory
// record) and does not answer the request a second time.
func TestRequestCompaction_ModelCallFails(t *testing.T) {
	inner := &scriptedAgentLLM{name: "gemini-2.5-flash", script: func(int) *genai.Content { return genai.NewContentFromText("Noted.", genai.RoleModel) }}
	llm := &failingLLM{scriptedAgentLLM: inner, failAt: 3}
	sum := fixedSummary("SUMMARY: the user sent three messages.")
	f := newFixture(t, fixtureConfig{llm: llm, sum: sum})
	for i := range 3 {
		f.turn(i, 1_000)
	}
	require.NoError(t, f.g.RequestCompaction(f.ctx, f.svc, fxApp, fxUser, fxSession, fxAgent, "keep the ticket numbers"))

	var runErr error
	for _, err := range f.r.Run(f.ctx, fxUser, fxSession, genai.NewContentFromText("USER-3 where are we?", genai.RoleUser), agent.RunConfig{}) {
		if err != nil {
			runErr = err
		}
	}
	require.ErrorContains(t, runErr, "503")
	require.Len(t, f.compactions(), 1)
	assert.True(t, f.usage().CompactionRequested, "the failed call's state was dropped")

	f.turn(4, 1_000)
	assert.Len(t, f.compactions(), 1, "the request is not answered twice")
	assert.Equal(t, 1, sum.Calls(), "the summary already paid for is reused")
	assert.Equal(t, false, f.state(keyCompactRequest+fxAgent))
	u := f.usage()
	assert.Equal(t, 1, u.Compactions)
	assert.Equal(t, ReasonRequested, u.LastCompactionReason)
	assert.Equal(t, fxNow, u.LastCompaction)
	reqs := inner.recorded()
	assert.True(t, reqs[len(reqs)-1].summarized)
}
