package plugintest

import (
	"context"
	"fmt"
	"iter"
	"strings"
	"sync"
	"testing"

	. "github.com/adk-contextguard/contextguard"
	"github.com/adk-contextguard/contextguard/core/coretest/o200k"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/tool"
	"google.golang.org/adk/tool/functiontool"
	"google.golang.org/genai"
)

// commandLLM is an agent's model that answers "COMMAND:off" and
// "COMMAND:on" by calling the guard_switch tool, and everything else with a
// short text; it records what each request held.
type commandLLM struct {
	mu       sync.Mutex
	requests []agentRequest
}

func (m *commandLLM) Name() string { return "gemini-2.5-flash" }

func (m *commandLLM) GenerateContent(_ context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		rec := agentRequest{quote: quotedRequest(req)}
		rec.summarized = len(req.Contents) > 0 && strings.HasPrefix(contentText(req.Contents[0]), summaryHeader)
		var b strings.Builder
		for _, c := range req.Contents {
			b.WriteString(contentText(c))
			b.WriteByte('\n')
		}
		rec.text = b.String()
		m.mu.Lock()
		m.requests = append(m.requests, rec)
		m.mu.Unlock()

		answer := genai.NewContentFromText("ok", genai.RoleModel)
		if n := len(req.Contents); n > 0 && req.Contents[n-1].Role == genai.RoleUser {
			switch text := contentText(req.Contents[n-1]); {
			case strings.HasPrefix(text, "COMMAND:off"), strings.HasPrefix(text, "COMMAND:on"):
				answer = &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{
					Name: "guard_switch", Args: map[string]any{"off": strings.HasPrefix(text, "COMMAND:off")},
				}}}}
			}
		}
		yield(&model.LLMResponse{Content: answer, TurnComplete: true}, nil)
	}
}

func (m *commandLLM) recorded() []agentRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]agentRequest(nil), m.requests...)
}

// switchArgs are the arguments of the test's guard_switch tool.
type switchArgs struct {
	Off bool `json:"off"`
}

// switchTool switches the guard off or on from inside the agent.
func switchTool(t *testing.T, g *ContextGuard) tool.Tool {
	sw, err := functiontool.New(functiontool.Config{Name: "guard_switch", Description: "Switches the context guard off or on."},
		func(ctx agent.ToolContext, a switchArgs) (map[string]any, error) {
			if a.Off {
				return map[string]any{"guard": "off"}, g.DisableInState(ctx.State())
			}
			return map[string]any{"guard": "on"}, g.EnableInState(ctx.State())
		})
	require.NoError(t, err)
	return sw
}

// command runs one user message that is a command for the commandLLM.
func (f *fixture) command(text string) {
	f.t.Helper()
	for _, err := range f.r.Run(f.ctx, fxUser, fxSession, genai.NewContentFromText(text, genai.RoleUser), agent.RunConfig{}) {
		require.NoError(f.t, err, text)
	}
}

// compactionKeys are the state keys a compaction writes (a summary, its cut,
// the compaction's count and stamp): a session switched off writes none of
// them, only its counts (Usage, calibration, the prefix record).
var compactionKeys = []string{"summary_", "contents_at_compaction_", "summarized_at_", "fingerprint_",
	"user_request_", "compactions_", "anchor_", "last_compaction_at_", "last_compaction_reason_"}

// TestSessionSwitch_OffCompactsNothing_OnCompacts: with the guard switched
// off for a session that was never compacted, the conversation grows past
// the trigger and every request reaches the model as ADK built it: nothing
// is summarized and the guard writes no compaction to the session, only its
// counts. Switched back on, the guard compacts the first request it sees
// over the trigger.
func TestSessionSwitch_OffCompactsNothing_OnCompacts(t *testing.T) {
	const turnsOff = 8
	tests := []struct {
		name    string
		initial map[string]any
		off, on func(f *fixture)
	}{
		{
			name: "with the session service",
			off: func(f *fixture) {
				require.NoError(f.t, f.g.DisableSession(f.ctx, f.svc, fxApp, fxUser, fxSession))
			},
			on: func(f *fixture) {
				require.NoError(f.t, f.g.EnableSession(f.ctx, f.svc, fxApp, fxUser, fxSession))
			},
		},
		{
			name:    "off in the session's initial state",
			initial: map[string]any{StateKeyDisabled: true},
			off:     func(*fixture) {},
			on: func(f *fixture) {
				require.NoError(f.t, f.g.EnableSession(f.ctx, f.svc, fxApp, fxUser, fxSession))
			},
		},
		{
			name: "from a tool",
			off:  func(f *fixture) { f.command("COMMAND:off") },
			on:   func(f *fixture) { f.command("COMMAND:on") },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			llm := &commandLLM{}
			sum := fixedSummary("SUMMARY: the user sent long messages.")
			f := newFixture(t, fixtureConfig{llm: llm, sum: sum, state: tt.initial,
				tools: func(g *ContextGuard) []tool.Tool { return []tool.Tool{switchTool(t, g)} }})

			tt.off(f)
			require.True(t, f.usage().Disabled)
			from := f.session().Events().Len()
			for i := range turnsOff {
				f.turn(i, 2_500)
			}

			reqs := llm.recorded()
			last := reqs[len(reqs)-1]
			assert.Greater(t, o200k.Count(last.text), fxThreshold, "the last request was over the trigger (a real tokenizer's count)")
			for i := range turnsOff {
				assert.Contains(t, last.text, fmt.Sprintf("USER-%d ", i), "the request carries every message verbatim")
			}
			for i, r := range reqs {
				assert.False(t, r.summarized, "request %d", i)
			}
			assert.Zero(t, sum.Calls())
			assert.Empty(t, f.compactions())
			evs := f.session().Events()
			for i := from; i < evs.Len(); i++ {
				for k := range evs.At(i).Actions.StateDelta {
					for _, ck := range compactionKeys {
						assert.False(t, strings.HasPrefix(k, stateKeyPrefix+ck), "event %d: the guard wrote %s while off", i, k)
					}
				}
			}
			assert.Greater(t, f.usage().Tokens, fxThreshold, "Usage follows the request sent while off")

			tt.on(f)
			f.turn(turnsOff, 2_500)
			assert.False(t, f.usage().Disabled)
			require.Len(t, f.compactions(), 1, "back on, the guard compacts")
			assert.Equal(t, "tokens", f.compactions()[0].Reason)
			reqs = llm.recorded()
			assert.True(t, reqs[len(reqs)-1].summarized)
		})
	}
}

// TestSessionSwitch_InStateBadInput: the in-state switch refuses a nil
// state or guard.
func TestSessionSwitch_InStateBadInput(t *testing.T) {
	g, _ := newTestGuard(t, fixedSummary("unused"))
	require.ErrorContains(t, g.DisableInState(nil), "the session state is nil")
	require.ErrorContains(t, g.EnableInState(nil), "the session state is nil")
	require.ErrorContains(t, (*ContextGuard)(nil).DisableInState(newMapState()), "the guard is nil")
}
