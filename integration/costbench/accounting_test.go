package costbench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/adk-contextguard/contextguard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tiktoken-go/tokenizer"
	"google.golang.org/genai"
)

// A hand-made conversation: a user's request, a model step calling a tool,
// the tool's result, and the model's next step.
func userText(s string) *genai.Content { return genai.NewContentFromText(s, genai.RoleUser) }

func modelCall(text, id, name string, args map[string]any) *genai.Content {
	return &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{
		{Text: text}, {FunctionCall: &genai.FunctionCall{ID: id, Name: name, Args: args}}}}
}

func toolResult(id, name, output string) *genai.Content {
	return &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{
		{FunctionResponse: &genai.FunctionResponse{ID: id, Name: name, Response: map[string]any{"output": output}}}}}
}

// bigOutput is a tool result of n bytes whose head, middle and tail differ.
func bigOutput(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "%6d\tline %d of the file under test\n", i, i)
	}
	return b.String()[:n]
}

// transcriptOf renders contents as the guard's transcript form shows them,
// each tool result cut to a head and tail excerpt of at most limit bytes.
func transcriptOf(limit int, cs ...*genai.Content) string {
	var b strings.Builder
	for _, c := range cs {
		for _, p := range c.Parts {
			switch {
			case p.Text != "":
				fmt.Fprintf(&b, "[%s]: %s\n", c.Role, p.Text)
			case p.FunctionCall != nil:
				// As the guard writes JSON: <, > and & escaped.
				args, _ := json.Marshal(p.FunctionCall.Args)
				fmt.Fprintf(&b, "[%s called tool %s] args: %s\n", c.Role, p.FunctionCall.Name, args)
			case p.FunctionResponse != nil:
				fmt.Fprintf(&b, "[tool %s returned] %s\n", p.FunctionResponse.Name, excerptOf(p.FunctionResponse.Response["output"].(string), limit))
			}
		}
	}
	return b.String()
}

// excerptOf cuts s to limit bytes as the guard's transcript does: two
// thirds of what is kept from its head, the rest from its tail, and a line
// saying how much was left out.
func excerptOf(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	marker := fmt.Sprintf("\n[... %d bytes omitted ...]\n", len(s)-limit)
	keep := limit - len(marker)
	h := head(s, keep*2/3)
	return h + marker + tail(s, keep-len(h))
}

// summarizerInputOf is a summarizer request in the transcript form.
func summarizerInputOf(transcript string, before int) SummarizerCall {
	return SummarizerCall{Contents: []*genai.Content{userText("Summarize the conversation below.\n" + transcript)}, Before: before}
}

// tagged is c with the tag its summary starts with.
func tagged(c SummarizerCall, tag string) SummarizerCall {
	c.Tag = tag
	return c
}

func TestAccount(t *testing.T) {
	const resultBytes = 19_368 // sweplay-1's call_0003
	ask := userText("Add the instruction decoder.")
	step1 := modelCall("Let me read the instruction module.", "call_1", "str_replace_editor", map[string]any{"command": "view", "path": "/workspace/src/instruction.py"})
	result1 := toolResult("call_1", "str_replace_editor", bigOutput(resultBytes))
	step2 := modelCall("Now let me run the tests.", "call_2", "execute_bash", map[string]any{"command": "cd /workspace && python -m pytest -q"})
	result2 := toolResult("call_2", "execute_bash", "4 passed in 0.12s")
	conv := []*genai.Content{ask, step1, result1, step2, result2}
	summary := userText("[Conversation summary: the instruction module was read.]")

	tests := []struct {
		name string
		// sent is the second request as the model received it; the first
		// holds the first three contents verbatim.
		sent       []*genai.Content
		summarizer []SummarizerCall
		want       Accounting
		// lost names the content the accounting must report lost.
		lost string
	}{
		{name: "everything kept",
			sent: conv,
			want: Accounting{Contents: 5, Kept: 5}},
		{name: "a content dropped is lost, and said which",
			sent: []*genai.Content{ask, step1, step2, result2},
			want: Accounting{Contents: 5, Kept: 4, Lost: 1},
			lost: "the 19368-byte response to str_replace_editor call call_1; last in request 0; 0 summarizer inputs finished before request 1"},
		{name: "summarized: excerpted in a summarizer input finished before the request (the guard's excerpt of a large result)",
			sent:       []*genai.Content{summary, step2, result2},
			summarizer: []SummarizerCall{summarizerInputOf(transcriptOf(6_000, ask, step1, result1), 1)},
			want:       Accounting{Contents: 5, Kept: 2, Summarized: 3}},
		{name: "a summary that reached the request counts for what its input held",
			sent:       []*genai.Content{userText("[summary 1] the instruction module was read."), step2, result2},
			summarizer: []SummarizerCall{tagged(summarizerInputOf(transcriptOf(6_000, ask, step1, result1), 1), "[summary 1]")},
			want:       Accounting{Contents: 5, Kept: 2, Summarized: 3}},
		{name: "a summary that did not reach the request (a prepared one left unused) does not count",
			sent: []*genai.Content{userText("[summary 2] the user asked for a decoder."), step2, result2},
			summarizer: []SummarizerCall{
				tagged(summarizerInputOf(transcriptOf(6_000, ask, step1, result1), 1), "[summary 1]"),
				tagged(summarizerInputOf(transcriptOf(6_000, ask), 1), "[summary 2]")},
			want: Accounting{Contents: 5, Kept: 2, Summarized: 1, Lost: 2},
			lost: "held by input 0, whose summary did not reach the request"},
		{name: "a summary folded into a later summary's input reaches the request with it",
			sent: []*genai.Content{userText("[summary 2] the tests pass."), result2},
			summarizer: []SummarizerCall{
				tagged(summarizerInputOf(transcriptOf(6_000, ask, step1, result1), 1), "[summary 1]"),
				tagged(summarizerInputOf("Previous summary: [summary 1] the module was read.\n"+transcriptOf(6_000, step2), 1), "[summary 2]")},
			want: Accounting{Contents: 5, Kept: 1, Summarized: 4}},
		{name: "a summarizer input finished after the request does not count",
			sent:       []*genai.Content{summary, step2, result2},
			summarizer: []SummarizerCall{summarizerInputOf(transcriptOf(6_000, ask, step1, result1), 2)},
			want:       Accounting{Contents: 5, Kept: 2, Lost: 3}},
		{name: "an excerpt that shows the result's head without its tail does not count",
			sent:       []*genai.Content{summary, step2, result2},
			summarizer: []SummarizerCall{summarizerInputOf(strings.TrimSuffix(transcriptOf(6_000, ask, step1, result1), tail(responseText(result1.Parts[0].FunctionResponse), 40)+"\n"), 1)},
			want:       Accounting{Contents: 5, Kept: 2, Summarized: 2, Lost: 1},
			lost:       "the 19368-byte response to str_replace_editor call call_1"},
		{name: "summarized in the cached form: the agent's contents and an instruction",
			sent:       []*genai.Content{summary, step2, result2},
			summarizer: []SummarizerCall{{Contents: []*genai.Content{ask, step1, result1, userText("Summarize.")}, Before: 1}},
			want:       Accounting{Contents: 5, Kept: 2, Summarized: 3}},
		{name: "a call whose arguments hold && is recognised as the transcript escapes it",
			sent:       []*genai.Content{summary, result2},
			summarizer: []SummarizerCall{summarizerInputOf(transcriptOf(6_000, ask, step1, result1, step2), 1)},
			want:       Accounting{Contents: 5, Kept: 1, Summarized: 4}},
		{name: "pruned: a placeholder that names the tool",
			sent: []*genai.Content{ask, step1, {Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{ID: "call_1", Name: "str_replace_editor",
				Response: map[string]any{"pruned": "str_replace_editor output of 19380 bytes removed to save context; ask again if needed"}}}}}, step2, result2},
			want: Accounting{Contents: 5, Kept: 4, Pruned: 1}},
		{name: "listed: the fallback's list of the first messages",
			sent:       []*genai.Content{summary, step2, result2},
			summarizer: []SummarizerCall{summarizerInputOf("(The conversation's first 3 messages, listed mechanically: summarizing them too would take more than 8 summarizer calls.)\n", 1)},
			want:       Accounting{Contents: 5, Kept: 2, Listed: 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := Recording{
				Agent:      []AgentCall{{Raw: conv[:3], Sent: conv[:3]}, {Raw: conv, Sent: tc.sent}},
				Summarizer: tc.summarizer,
			}
			got := Account(rec)
			assert.Equal(t, tc.want.Contents, got.Contents)
			assert.Equal(t, [5]int{tc.want.Kept, tc.want.Pruned, tc.want.Summarized, tc.want.Listed, tc.want.Lost},
				[5]int{got.Kept, got.Pruned, got.Summarized, got.Listed, got.Lost}, "kept, pruned, summarized, listed, lost")
			assert.Equal(t, tc.want.Lost > 0, got.Failed())
			if tc.lost != "" {
				require.NotEmpty(t, got.Losses)
				assert.Equal(t, 1, got.Losses[0].Request)
				assert.Contains(t, got.Losses[0].What, tc.lost)
			}
		})
	}
}

func TestAccount_EventsShrinkTheirRequest(t *testing.T) {
	ev := contextguard.CompactionEvent{Strategy: contextguard.StrategyToolResultPruning, Reason: contextguard.ReasonTokens, Ran: contextguard.RanBetweenTurns, TokensBefore: 23_297, TokensAfter: 14_840}
	a := userText("a")
	rec := Recording{
		Agent: []AgentCall{
			{Raw: []*genai.Content{a}, Sent: []*genai.Content{a}},
			{Raw: []*genai.Content{a}, Sent: []*genai.Content{a}, RawTokens: 21_115, SentTokens: 21_115},
			{Raw: []*genai.Content{a}, Sent: []*genai.Content{a}, RawTokens: 21_500, SentTokens: 14_900},
		},
		Events: []EventMark{
			{Before: 1, Event: ev},
			{Before: 2, Event: ev},
			{Before: 2, Event: contextguard.CompactionEvent{Discarded: true}},
			{Before: 3, Event: ev}, // after the session's last request
		},
	}
	got := Account(rec)
	assert.Equal(t, 2, got.Events, "the discarded event and the one after the last request are not checked")
	assert.Equal(t, 1, got.Discarded)
	require.Len(t, got.Unshrunk, 1)
	assert.Equal(t, Unshrunk{Request: 1, EventIndex: 0, Event: "strategy tool_result_pruning, reason tokens, ran between_turns, 23297 -> 14840 tokens", Raw: 21_115, Sent: 21_115}, got.Unshrunk[0])
	assert.True(t, got.Failed())
}

// TestReplay_LargeResultIsSummarizedAsAnExcerpt is sweplay-1's first
// compaction played by the guard: a 19,368-byte tool result reaches the
// summarizer's transcript as a head and tail excerpt (the rest omitted, and
// said so), and the accounting places it there; every compaction shrinks
// its request.
func TestReplay_LargeResultIsSummarizedAsAnExcerpt(t *testing.T) {
	out := bigOutput(19_368)
	data := fmt.Sprintf(`{"system": "You are a coding agent.",
 "tools": [{"name": "str_replace_editor", "description": "View or edit a file.", "parameters": {"type": "object", "properties": {"command": {"type": "string"}, "path": {"type": "string"}}}}],
 "turns": [{"user": "Add the instruction decoder.", "steps": [
    {"text": "Let me read the module.", "calls": [{"id": "call_0001", "name": "str_replace_editor", "args": {"command": "view", "path": "/workspace/a.py"}, "output": %[1]q}]},
    {"text": "And the next one.", "calls": [{"id": "call_0002", "name": "str_replace_editor", "args": {"command": "view", "path": "/workspace/b.py"}, "output": %[1]q}]},
    {"text": "And the tests.", "calls": [{"id": "call_0003", "name": "str_replace_editor", "args": {"command": "view", "path": "/workspace/c.py"}, "output": %[1]q}]},
    {"text": "Once more.", "calls": [{"id": "call_0004", "name": "str_replace_editor", "args": {"command": "view", "path": "/workspace/d.py"}, "output": %[1]q}]}
  ], "final": "Done."}]}`, out)
	tr, err := ParseTrace([]byte(data))
	require.NoError(t, err)
	tr.File = "large-result.json"
	cfg := Config{Name: "transcript", Window: 16_000, Options: []contextguard.AgentOption{contextguard.WithSummaryForm(contextguard.SummaryFormTranscript)}}
	s, err := Replay(context.Background(), tr, cfg)
	require.NoError(t, err)
	require.Empty(t, s.Errors)
	require.NotEmpty(t, s.Recording.Summarizer, "the session compacts")
	in := newRequestView(s.Recording.Summarizer[0].Contents, s.Recording.Summarizer[0].System)
	assert.Contains(t, in.text, "bytes omitted ...]", "the result reaches the summarizer cut to an excerpt")
	assert.NotContains(t, in.text, out, "not whole")

	a := s.Account()
	assert.Zero(t, a.Lost, "%v", a.Losses)
	assert.Positive(t, a.Summarized)
	assert.Positive(t, a.Events)
	assert.Empty(t, a.Unshrunk)
}

// loadTrace returns the recorded session named file, or skips the test
// without the recorded sessions (a failure in CI, which has them).
func loadTrace(t *testing.T, file string) *Trace {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(tracesDir(), file))
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the recorded agent sessions are missing (%v): CI must provide them", err)
		}
		t.Skipf("no recorded session %s (%v); set -traces or CONTEXTGUARD_TRACES", file, err)
	}
	tr, err := ParseTrace(data)
	require.NoError(t, err)
	tr.File = file
	return tr
}

// TestReplay_Sweplay1FirstCompaction is the case an outside accounting
// could not place: sweplay-1 at 32k, counted with the exact o200k
// tokenizer, whose first compaction leaves out of its request the
// 19,368-byte response to call_0003 (content 6). The guard had put it in
// the compaction's summarizer input (prepared while the tools ran): as the
// function response itself in the cached form, as a 6,000-byte head and
// tail excerpt ("[... 13368 bytes omitted ...]") in the transcript form. A
// check that looks for the result's text whole, or as JSON writes it (its
// head holds tabs and quotes), finds it in neither; this accounting places
// it, and finds nothing lost.
func TestReplay_Sweplay1FirstCompaction(t *testing.T) {
	tr := loadTrace(t, "sweplay-1.json")
	codec, err := tokenizer.Get(tokenizer.O200kBase)
	require.NoError(t, err)
	exact := contextguard.TokenCounterFunc(func(s string) int {
		n, _ := codec.Count(s)
		return n
	})
	for _, form := range []contextguard.SummaryForm{contextguard.SummaryFormCached, contextguard.SummaryFormTranscript} {
		t.Run(string(form), func(t *testing.T) {
			cfg := Config{Name: string(form), Window: 32_000, Options: []contextguard.AgentOption{
				contextguard.WithTokenCounter(exact), contextguard.WithSummaryForm(form)}}
			s, err := Replay(context.Background(), tr, cfg)
			require.NoError(t, err)
			require.Empty(t, s.Errors)
			rec := s.Recording
			require.NotEmpty(t, rec.Events, "the session compacts")
			first := rec.Events[0].Before
			require.Less(t, first, len(rec.Agent))
			raw := rec.Agent[first].Raw
			require.Greater(t, len(raw), 6)
			result := raw[6]
			require.Len(t, result.Parts, 1)
			fr := result.Parts[0].FunctionResponse
			require.NotNil(t, fr, "content 6 is a tool result")
			require.Equal(t, "call_0003", fr.ID)
			require.Len(t, responseText(fr), 19_368)

			sent := newRequestView(rec.Agent[first].Sent, nil)
			assert.Equal(t, FateLost, sent.place(result), "the first compaction's request leaves it out")
			var in *SummarizerCall
			for i := range rec.Summarizer {
				if rec.Summarizer[i].Before <= first {
					in = &rec.Summarizer[i]
				}
			}
			require.NotNil(t, in, "a summarizer call finished before the request")
			view := newRequestView(in.Contents, in.System)
			if form == contextguard.SummaryFormCached {
				assert.Equal(t, FateKept, view.place(result), "the cached form holds the result itself")
			} else {
				assert.Contains(t, view.text, "[... 13368 bytes omitted ...]", "the transcript holds an excerpt, and says so")
				assert.True(t, view.excerpts(result), "the excerpt is recognised")
			}
			assert.NotContains(t, view.text, responseText(fr), "the result's text is not in the input whole")

			a := s.Account()
			assert.Zero(t, a.Lost, "%v", a.Losses)
			assert.Empty(t, a.Unshrunk)
		})
	}
}
