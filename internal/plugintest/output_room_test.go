package plugintest

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/plugin"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/genai"

	. "github.com/adk-contextguard/contextguard"
	"github.com/adk-contextguard/contextguard/contextguardtest"
	"github.com/adk-contextguard/contextguard/contextguardtest/o200k"
)

// toolAgent is a real runner around an llmagent that calls the kit's fake
// tools, with the guard's plugin installed and the agent's generation config
// set (MaxOutputTokens), for the tests of the room kept for the answer and
// of responses cut at the output limit.
type toolAgent struct {
	r *runner.Runner
}

func newToolAgent(t testing.TB, g *ContextGuard, llm model.LLM, genCfg *genai.GenerateContentConfig, toolNames ...string) *toolAgent {
	t.Helper()
	tools, err := contextguardtest.Tools(toolNames...)
	require.NoError(t, err)
	a, err := llmagent.New(llmagent.Config{
		Name:                  "assistant",
		Model:                 llm,
		Instruction:           "You are an operations assistant. Use the tools to investigate.",
		Tools:                 tools,
		GenerateContentConfig: genCfg,
	})
	require.NoError(t, err)
	p, err := g.Plugin()
	require.NoError(t, err)
	r, err := runner.New(runner.Config{
		AppName: "app", Agent: a, SessionService: session.InMemoryService(), AutoCreateSession: true,
		PluginConfig: runner.PluginConfig{Plugins: []*plugin.Plugin{p}},
	})
	require.NoError(t, err)
	return &toolAgent{r: r}
}

// turn sends the user message of turn i and returns the texts of the
// events and the errors the runner surfaced.
func (a *toolAgent) turn(sessionID string, i int) (texts []string, errs []error) {
	msg := genai.NewContentFromText(userText(i, 300), genai.RoleUser)
	for ev, err := range a.r.Run(context.Background(), "u", sessionID, msg, agent.RunConfig{}) {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ev != nil && ev.Content != nil {
			if s := contentText(ev.Content); s != "" {
				texts = append(texts, s)
			}
		}
	}
	return texts, errs
}

// readFileTurns is a plan whose every turn reads one file of size bytes.
func readFileTurns(size int) func(int) contextguardtest.TurnPlan {
	return func(int) contextguardtest.TurnPlan {
		return contextguardtest.TurnPlan{Steps: contextguardtest.Sequential(contextguardtest.Call("read_file", size))}
	}
}

// TestOutputRoom_PromptPlusOutputFitsTheWindow: an agent whose requests set
// MaxOutputTokens, on a provider that reports its counts. Several providers
// reject a request whose prompt plus max_tokens exceeds the window, so no
// request may exceed the window once its output limit is added: the guard
// compacts before the prompt reaches window - MaxOutputTokens - a margin,
// instead of at its configured trigger (180k of 200k, 102.4k of 128k).
//
// Before the guard kept room for the output, prompts grew to the configured
// trigger: 180k + 64k on a 200k window.
func TestOutputRoom_PromptPlusOutputFitsTheWindow(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name           string
		window, output int
		turns          int
	}{
		{"200k window, 64k output", 200_000, 64_000, 45},
		{"128k window, 32k output", 128_000, 32_000, 45},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// Each turn adds about a thirtieth of the window.
			m := contextguardtest.NewScriptedModel(contextguardtest.ScriptConfig{
				Name:    "gpt-4.1",
				Window:  tt.window,
				Counter: o200k.Counter(1),
				Plan:    readFileTurns(tt.window * 4 / 30),
				Seed:    int64(tt.window),
			})
			sum := contextguardtest.NewSummarizerModel(contextguardtest.SummarizerConfig{SummarySize: 4_000})
			g := New(NewCrushRegistry(WithRegistryLogger(quietLogger)), WithLogger(quietLogger))
			g.Add("assistant", sum, WithMaxTokens(tt.window))
			a := newToolAgent(t, g, m, &genai.GenerateContentConfig{MaxOutputTokens: int32(tt.output)}, "read_file")
			for i := range tt.turns {
				_, errs := a.turn("s", i)
				require.Empty(t, errs, "turn %d", i)
			}
			require.Positive(t, sum.Calls(), "the session reached the trigger")
			most := 0
			for _, rec := range m.Requests() {
				most = max(most, rec.Tokens)
				assert.LessOrEqual(t, rec.Tokens+tt.output, tt.window,
					"request %d: prompt %d + output %d fits the window", rec.Index, rec.Tokens, tt.output)
			}
			t.Logf("largest prompt %d + output %d = %d of %d; %d summaries", most, tt.output, most+tt.output, tt.window, sum.Calls())
			assert.Greater(t, most+tt.output, tt.window*8/10, "the room is used, not wasted")
		})
	}
}

// TestOutputRoom_NoWorkableRoom: an output limit that would leave the
// prompt less than a quarter of the window is not kept; the configured
// trigger is used and a warning says so, once.
func TestOutputRoom_NoWorkableRoom(t *testing.T) {
	t.Parallel()
	m := contextguardtest.NewScriptedModel(contextguardtest.ScriptConfig{
		Name:    "gemini-2.5-flash",
		Window:  8_000,
		Counter: contextguardtest.SeedCounter(1),
		Plan:    readFileTurns(4_000),
	})
	sum := contextguardtest.NewSummarizerModel(contextguardtest.SummarizerConfig{SummarySize: 800})
	logs := &logBuffer{}
	g := New(NewCrushRegistry(WithRegistryLogger(quietLogger)), WithLogger(logs.logger()))
	g.Add("assistant", sum, WithMaxTokens(8_000))
	a := newToolAgent(t, g, m, &genai.GenerateContentConfig{MaxOutputTokens: 8_192}, "read_file")
	for i := range 12 {
		_, errs := a.turn("s", i)
		require.Empty(t, errs, "turn %d", i)
	}
	assert.Positive(t, sum.Calls(), "the guard compacts at the configured trigger")
	assert.Equal(t, 1, strings.Count(logs.String(), "leaves too little of the window for the prompt"), "warned once")
	most := 0
	for _, rec := range m.Requests() {
		most = max(most, rec.Tokens)
	}
	assert.Greater(t, most, 8_000/2, "the prompt keeps the configured room")
}
