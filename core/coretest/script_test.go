package coretest

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"
)

func userTurn(turn int) *genai.Content {
	return genai.NewContentFromText(UserMessage(turn, Marker(int64(turn)), "body"), genai.RoleUser)
}

// toolAnswers plays the fake tools for a reply: one user content with a
// response per call, echoing the tag as the real tools do.
func toolAnswers(r *Reply) *genai.Content {
	c := &genai.Content{Role: genai.RoleUser}
	for _, p := range r.Content.Parts {
		if fc := p.FunctionCall; fc != nil {
			c.Parts = append(c.Parts, &genai.Part{FunctionResponse: &genai.FunctionResponse{Name: fc.Name, Response: map[string]any{"tag": fc.Args["tag"], "output": "ok"}}})
		}
	}
	return c
}

func TestScript_PlaysStepsThenText(t *testing.T) {
	s := NewScript(ScriptConfig{Plan: each(TurnPlan{Steps: Sequential(Call("grep", 100), Call("read_file", 100))})})
	contents := []*genai.Content{userTurn(0)}
	for step := range 2 {
		r, err := s.Respond(context.Background(), "s", contents, nil, false, nil)
		require.NoError(t, err)
		require.Len(t, r.Content.Parts, 1, "step %d", step)
		require.NotNil(t, r.Content.Parts[0].FunctionCall, "step %d", step)
		contents = append(contents, r.Content, toolAnswers(r))
	}
	r, err := s.Respond(context.Background(), "s", contents, nil, false, nil)
	require.NoError(t, err)
	assert.Contains(t, r.Content.Parts[0].Text, "Turn 0 done.")
	assert.Equal(t, genai.FinishReasonStop, r.FinishReason)
	require.NotNil(t, r.Usage)
	assert.Equal(t, int32(SeedCounter(1).Count(contents, nil)), r.Usage.PromptTokenCount)
	recs := s.Requests()
	require.Len(t, recs, 3)
	for i, rec := range recs {
		assert.Equal(t, i, rec.Step)
		assert.Equal(t, i, rec.Index)
		assert.Equal(t, "s", rec.SessionID)
	}
}

// A trailing user text without a turn tag (ADK v2's synthetic "Continue
// processing…" message, added when the history ends with a model content)
// neither moves the position nor hides the turn's user message.
func TestScript_UntaggedTrailingUserMessage(t *testing.T) {
	s := NewScript(ScriptConfig{Plan: each(TurnPlan{Steps: Parallel(Call("grep", 100))})})
	first := []*genai.Content{userTurn(3)}
	r, err := s.Respond(context.Background(), "s", first, nil, false, nil)
	require.NoError(t, err)
	contents := append(first, r.Content, toolAnswers(r))
	r, err = s.Respond(context.Background(), "s", contents, nil, false, nil)
	require.NoError(t, err)
	contents = append(contents, r.Content,
		genai.NewContentFromText("Continue processing previous requests as instructed. Exit or provide a summary if no more outputs are needed.", genai.RoleUser))
	_, err = s.Respond(context.Background(), "s", contents, nil, false, nil)
	require.NoError(t, err)
	recs := s.Requests()
	require.Len(t, recs, 3)
	assert.Equal(t, 3, recs[2].Turn)
	assert.Equal(t, 2, recs[2].Step, "resumes after the turn's last step")
	assert.True(t, recs[2].HasMarker(Marker(3)))
}

func TestScript_OverflowAndObserver(t *testing.T) {
	s := NewScript(ScriptConfig{Window: 5, ErrorStyle: ErrorAnthropic})
	var seen *RequestRecord
	_, err := s.Respond(context.Background(), "", []*genai.Content{userTurn(0)}, nil, false, func(r *RequestRecord) { seen = r })
	var oe *OverflowError
	require.True(t, errors.As(err, &oe))
	assert.Equal(t, 5, oe.Limit)
	assert.True(t, IsOverflowError(err))
	require.NotNil(t, seen)
	assert.True(t, seen.Rejected)
	assert.Equal(t, 1, s.Rejected())
	assert.Zero(t, seen.UsageReported)
}

func TestScript_StreamsChunksAndStopsOnCancel(t *testing.T) {
	s := NewScript(ScriptConfig{StreamChunks: 4})
	r, err := s.Respond(context.Background(), "", []*genai.Content{userTurn(0)}, nil, true, nil)
	require.NoError(t, err)
	require.Len(t, r.Chunks, 4)
	joined := ""
	for _, c := range r.Chunks {
		joined += c
	}
	assert.Equal(t, r.Content.Parts[0].Text, joined)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = s.Respond(ctx, "", []*genai.Content{userTurn(0)}, nil, false, nil)
	assert.ErrorIs(t, err, context.Canceled)
}

func TestSummarizer_RecordsAndFaults(t *testing.T) {
	s := NewSummarizer(SummarizerConfig{SummarySize: 300})
	s.InjectFault(2, FaultError)
	s.InjectFault(3, FaultEmpty)
	in := []*genai.Content{genai.NewContentFromText("see "+Marker(1)+" and "+Marker(2), genai.RoleUser)}
	c, err := s.Summarize(context.Background(), in, nil)
	require.NoError(t, err)
	require.Len(t, c.Parts, 1)
	assert.Len(t, c.Parts[0].Text, 300)
	assert.Contains(t, c.Parts[0].Text, Marker(1)+" "+Marker(2))
	_, err = s.Summarize(context.Background(), in, nil)
	assert.ErrorIs(t, err, ErrSummarizerFault)
	c, err = s.Summarize(context.Background(), in, nil)
	require.NoError(t, err)
	assert.Empty(t, c.Parts)
	recs := s.Records()
	require.Len(t, recs, 3)
	assert.Equal(t, []string{Marker(1), Marker(2)}, recs[0].Markers)
	assert.Equal(t, SeedCounter(1).Count(in, nil), recs[0].Tokens)
	assert.Equal(t, FaultError, recs[1].Fault)
	assert.Equal(t, 3, s.Calls())
}

// The meter's accounting without a guard: every request is sent as built,
// so its effective input is its raw count, and nothing is lost.
func TestMeter_WithoutAGuard(t *testing.T) {
	counter := SeedCounter(1)
	s := NewSummarizer(SummarizerConfig{})
	m := NewMeter(counter, s)
	script := NewScript(ScriptConfig{Counter: counter})
	contents := []*genai.Content{userTurn(0)}
	for turn := range 3 {
		if turn > 0 {
			contents = append(contents, userTurn(turn))
		}
		m.SetLatestUser(Marker(int64(turn)))
		m.Raw(contents, nil)
		r, err := script.Respond(context.Background(), "", contents, nil, false, func(rec *RequestRecord) { m.Observe(rec) })
		require.NoError(t, err)
		contents = append(contents, r.Content)
	}
	res := &Result{Scenario: "meter", Window: 1000, Requests: m.Records()}
	res.Finish()
	require.Equal(t, 3, res.Steps)
	for _, rec := range res.Requests {
		assert.Equal(t, rec.RawTokens, rec.Tokens)
		assert.Equal(t, rec.RawTokens, rec.EffectiveInput)
		assert.True(t, rec.HasLatestUser)
		assert.Empty(t, rec.LostMarkers)
	}
	assert.Zero(t, res.CompactionSteps)
	assert.Equal(t, res.Requests[2].Tokens, res.MaxRealTokens)
}

// A guard that drops the oldest turn without summarizing it loses that
// turn's marker; one that summarizes first does not.
func TestMeter_LostMarkers(t *testing.T) {
	for _, summarize := range []bool{false, true} {
		counter := SeedCounter(1)
		s := NewSummarizer(SummarizerConfig{})
		m := NewMeter(counter, s)
		script := NewScript(ScriptConfig{Counter: counter})
		raw := []*genai.Content{userTurn(0), genai.NewContentFromText("answer", genai.RoleModel), userTurn(1)}
		m.SetLatestUser(Marker(1))
		m.Raw(raw, nil)
		if summarize {
			_, err := s.Summarize(context.Background(), raw[:2], nil)
			require.NoError(t, err)
		}
		_, err := script.Respond(context.Background(), "", raw[2:], nil, false, func(rec *RequestRecord) { m.Observe(rec) })
		require.NoError(t, err)
		rec := m.Records()[0]
		if summarize {
			assert.Empty(t, rec.LostMarkers)
			assert.True(t, rec.Compaction)
			assert.False(t, rec.NonShrinking)
		} else {
			assert.Equal(t, []string{Marker(0)}, rec.LostMarkers)
			assert.False(t, rec.Compaction)
		}
		assert.True(t, rec.HasLatestUser)
	}
}

func TestPhasedCounter_Switches(t *testing.T) {
	c, p := ScenarioCounter(Scenario{TokenRatio: 1, LateTokenRatio: 2})
	require.NotNil(t, p)
	in := []*genai.Content{genai.NewContentFromText("0123456789abcdef0123456789abcdef", genai.RoleUser)}
	before := c.Count(in, nil)
	p.Switch()
	assert.Equal(t, SeedCounter(2).Count(in, nil), c.Count(in, nil))
	assert.Equal(t, SeedCounter(1).Count(in, nil), before)
	_, none := ScenarioCounter(Scenario{TokenRatio: 1})
	assert.Nil(t, none)
}

func TestDataToolNames(t *testing.T) {
	names, err := DataToolNames(Scenario{Turns: 1, ToolDefs: 2, Plan: each(TurnPlan{Steps: Parallel(Call(MCPToolName(1), 10), Call("grep", 10), Call("grep", 5))})})
	require.NoError(t, err)
	assert.Equal(t, []string{"grep"}, names)
	_, err = DataToolNames(Scenario{Turns: 1, Plan: each(TurnPlan{Steps: Parallel(Call(MCPToolName(3), 10))})})
	assert.ErrorContains(t, err, "declares only 0 MCP tools")
	out, err := Produce("kubectl_logs", ToolArgs{Size: 50, Seed: 1, Tag: "t0.s0.c0"})
	require.NoError(t, err)
	assert.Equal(t, Generate(KindLogLines, 50, 1), out.Output)
	_, err = Produce("x", ToolArgs{Size: -1})
	assert.Error(t, err)
	_, err = ProduceMap("x", "bad")
	assert.Error(t, err)
}
