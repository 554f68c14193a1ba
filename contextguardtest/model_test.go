package contextguardtest

import (
	"context"
	"errors"
	"testing"

	"github.com/adk-contextguard/contextguard/core/coretest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/adk/model"
	"google.golang.org/genai"
)

// collect drains a model call.
func collect(t *testing.T, m model.LLM, req *model.LLMRequest, stream bool) ([]*model.LLMResponse, error) {
	t.Helper()
	var out []*model.LLMResponse
	for r, err := range m.GenerateContent(context.Background(), req, stream) {
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}

func userText(turn int, body string) *genai.Content {
	return genai.NewContentFromText(coretest.UserMessage(turn, Marker(int64(turn)), body), genai.RoleUser)
}

// answer plays the fake tools for a model response: one user content with a
// response per call, echoing the tag as the real tools do.
func answer(resp *model.LLMResponse) *genai.Content {
	c := &genai.Content{Role: genai.RoleUser}
	for _, p := range resp.Content.Parts {
		if fc := p.FunctionCall; fc != nil {
			c.Parts = append(c.Parts, &genai.Part{FunctionResponse: &genai.FunctionResponse{
				ID: fc.ID, Name: fc.Name, Response: map[string]any{"tag": fc.Args["tag"], "output": "ok"},
			}})
		}
	}
	return c
}

func calls(r *model.LLMResponse) []*genai.FunctionCall {
	var out []*genai.FunctionCall
	for _, p := range r.Content.Parts {
		if p.FunctionCall != nil {
			out = append(out, p.FunctionCall)
		}
	}
	return out
}

func TestScriptedModel_ParallelCallsThenText(t *testing.T) {
	m := NewScriptedModel(ScriptConfig{Plan: each(TurnPlan{Steps: Parallel(Call("grep", 100), Call("read_file", 200), Call("http_get", 300))})})
	contents := []*genai.Content{userText(0, "find it")}
	rs, err := collect(t, m, &model.LLMRequest{Contents: contents}, false)
	require.NoError(t, err)
	require.Len(t, rs, 1)
	fcs := calls(rs[0])
	require.Len(t, fcs, 3, "parallel calls come in one response")
	assert.Equal(t, "grep", fcs[0].Name)
	assert.Equal(t, 200, fcs[1].Args["size"])
	assert.Equal(t, "t0.s0.c2", fcs[2].Args["tag"])
	assert.Empty(t, fcs[0].ID, "Gemini-style calls carry no ID")
	require.NotNil(t, rs[0].UsageMetadata)

	contents = append(contents, rs[0].Content, answer(rs[0]))
	rs, err = collect(t, m, &model.LLMRequest{Contents: contents}, false)
	require.NoError(t, err)
	assert.Empty(t, calls(rs[0]))
	assert.Contains(t, rs[0].Content.Parts[0].Text, "Turn 0 done.")
	assert.Len(t, rs[0].Content.Parts[0].Text, coretest.DefaultResponseSize)
}

// TestScriptedModel_CallWith: a call made with CallWith carries its
// arguments exactly, no tag among them, and after the tool's response
// (which echoes none) the model still finds its place and ends the turn.
func TestScriptedModel_CallWith(t *testing.T) {
	args := map[string]any{"query": "checkout 5xx INC-4127", "page": 2}
	m := NewScriptedModel(ScriptConfig{Plan: each(TurnPlan{Steps: Parallel(CallWith("recall_context", args), Call("grep", 100))})})
	contents := []*genai.Content{userText(0, "what did the page say?")}
	rs, err := collect(t, m, &model.LLMRequest{Contents: contents}, false)
	require.NoError(t, err)
	fcs := calls(rs[0])
	require.Len(t, fcs, 2)
	assert.Equal(t, "recall_context", fcs[0].Name)
	assert.Equal(t, args, fcs[0].Args, "the arguments exactly, no tag added")
	assert.Equal(t, 100, fcs[1].Args["size"], "a Call beside it keeps the fake tool's arguments")
	args["page"] = 3
	assert.Equal(t, 2, fcs[0].Args["page"], "the call holds its own copy of the arguments")

	untagged := &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{
		{FunctionResponse: &genai.FunctionResponse{Name: "recall_context", Response: map[string]any{"result": "[1] turn 1, user: ..."}}},
		{FunctionResponse: &genai.FunctionResponse{Name: "grep", Response: map[string]any{"output": "ok"}}},
	}}
	rs, err = collect(t, m, &model.LLMRequest{Contents: append(contents, rs[0].Content, untagged)}, false)
	require.NoError(t, err)
	assert.Empty(t, calls(rs[0]), "the step is done: the model answers")
	assert.Contains(t, rs[0].Content.Parts[0].Text, "Turn 0 done.")
}

func TestScriptedModel_SequentialChainSurvivesCompaction(t *testing.T) {
	m := NewScriptedModel(ScriptConfig{Plan: each(TurnPlan{Steps: Sequential(Call("read_file", 10), Call("edit_file", 10), Call("run_tests", 10))}), ProviderCallIDs: true})
	contents := []*genai.Content{userText(0, "fix the bug")}
	var names []string
	for range 3 {
		rs, err := collect(t, m, &model.LLMRequest{Contents: contents}, false)
		require.NoError(t, err)
		fcs := calls(rs[0])
		require.Len(t, fcs, 1, "one call per step")
		assert.NotEmpty(t, fcs[0].ID)
		names = append(names, fcs[0].Name)
		contents = append(contents, rs[0].Content, answer(rs[0]))
		require.NoError(t, CheckPairs(contents))
	}
	assert.Equal(t, []string{"read_file", "edit_file", "run_tests"}, names)

	// A guard replaces the history with a summary and keeps the newest pair:
	// the model still knows where it is (final text of turn 0).
	compacted := append([]*genai.Content{genai.NewContentFromText("summary of [turn 0] work", genai.RoleUser)}, contents[len(contents)-2:]...)
	rs, err := collect(t, m, &model.LLMRequest{Contents: compacted}, false)
	require.NoError(t, err)
	assert.Contains(t, rs[0].Content.Parts[0].Text, "Turn 0 done.")

	// Next turn, compacted to summary + user message: starts turn 1 at step 0.
	rs, err = collect(t, m, &model.LLMRequest{Contents: []*genai.Content{genai.NewContentFromText("summary", genai.RoleUser), userText(1, "again")}}, false)
	require.NoError(t, err)
	assert.Equal(t, "t1.s0.c0", calls(rs[0])[0].Args["tag"])

	// The tool result was summarized away and only a synthetic message
	// follows: the per-session memory resumes the chain at step 1.
	rs, err = collect(t, m, &model.LLMRequest{Contents: []*genai.Content{userText(1, "again"), genai.NewContentFromText("Continue.", genai.RoleUser)}}, false)
	require.NoError(t, err)
	assert.Equal(t, "t1.s1.c0", calls(rs[0])[0].Args["tag"])
}

func TestScriptedModel_OverflowErrors(t *testing.T) {
	big := &model.LLMRequest{Contents: []*genai.Content{userText(0, coretest.Generate(coretest.KindLogLines, 8_000, 1))}}
	tests := []struct {
		style coretest.ErrorStyle
		want  string
	}{
		{coretest.ErrorGemini, "exceeds the maximum number of tokens allowed (1000)"},
		{coretest.ErrorAnthropic, "prompt is too long:"},
		{coretest.ErrorOpenAI, "context_length_exceeded"},
	}
	for _, tt := range tests {
		t.Run(tt.style.String(), func(t *testing.T) {
			m := NewScriptedModel(ScriptConfig{Window: 1000, ErrorStyle: tt.style})
			_, err := collect(t, m, big, false)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
			assert.True(t, IsOverflowError(err))
			assert.True(t, IsOverflowError(errors.New(err.Error())), "recognised by message too")
			var oe *coretest.OverflowError
			require.ErrorAs(t, err, &oe)
			assert.Equal(t, 1000, oe.Limit)
			assert.Greater(t, oe.Tokens, 1000)
			var api genai.APIError
			assert.Equal(t, tt.style == coretest.ErrorGemini, errors.As(err, &api))
			assert.Equal(t, 1, m.Rejected())
			recs := m.Requests()
			require.Len(t, recs, 1)
			assert.True(t, recs[0].Rejected)
		})
	}
	assert.False(t, IsOverflowError(nil))
	assert.False(t, IsOverflowError(errors.New("rate limited")))
}

func TestScriptedModel_Usage(t *testing.T) {
	req := func(turn int) *model.LLMRequest {
		return &model.LLMRequest{Contents: []*genai.Content{userText(turn, "hi")}}
	}
	off := NewScriptedModel(ScriptConfig{NoUsage: true})
	rs, err := collect(t, off, req(0), false)
	require.NoError(t, err)
	assert.Nil(t, rs[0].UsageMetadata)

	c := SeedCounter(2)
	late := NewScriptedModel(ScriptConfig{UsageFromTurn: 1, Counter: c})
	rs, err = collect(t, late, req(0), false)
	require.NoError(t, err)
	assert.Nil(t, rs[0].UsageMetadata, "no usage before turn 1")
	rs, err = collect(t, late, req(1), false)
	require.NoError(t, err)
	require.NotNil(t, rs[0].UsageMetadata)
	assert.Equal(t, int32(c.CountRequest(req(1))), rs[0].UsageMetadata.PromptTokenCount)
	assert.Equal(t, c.CountRequest(req(1)), late.Requests()[1].UsageReported)
}

func TestScriptedModel_Streaming(t *testing.T) {
	m := NewScriptedModel(ScriptConfig{Plan: each(TurnPlan{ResponseSize: 300})})
	rs, err := collect(t, m, &model.LLMRequest{Contents: []*genai.Content{userText(0, "hi")}}, true)
	require.NoError(t, err)
	require.Len(t, rs, 4)
	var joined string
	for _, r := range rs[:3] {
		assert.True(t, r.Partial)
		assert.Nil(t, r.UsageMetadata)
		joined += r.Content.Parts[0].Text
	}
	final := rs[3]
	assert.False(t, final.Partial)
	assert.True(t, final.TurnComplete)
	assert.NotNil(t, final.UsageMetadata)
	assert.Equal(t, final.Content.Parts[0].Text, joined)
	assert.True(t, m.Requests()[0].Streamed)
}

func TestScriptedModel_BadInput(t *testing.T) {
	m := NewScriptedModel(ScriptConfig{})
	_, err := collect(t, m, nil, false)
	assert.Error(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, err := range m.GenerateContent(ctx, &model.LLMRequest{}, false) {
		assert.ErrorIs(t, err, context.Canceled)
	}
	rs, err := collect(t, m, &model.LLMRequest{Contents: []*genai.Content{nil, {Role: genai.RoleUser}}}, false)
	require.NoError(t, err)
	assert.NotEmpty(t, rs[0].Content.Parts[0].Text)
}

// each plans every turn alike.
func each(p TurnPlan) func(int) TurnPlan { return func(int) TurnPlan { return p } }
