package plugintest_test

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/agent/llmagent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/plugin"
	"google.golang.org/adk/v2/runner"
	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"
)

// The runner helpers of adkv2's own tests (adapter_adk_test.go), for the
// tests here, which a module importing the plugin must not load.

const (
	// testApp and testUser name the app and the user of every run.
	testApp  = "app"
	testUser = "user"
)

// quiet discards the guard's logs.
var quiet = slog.New(slog.DiscardHandler)

// newRunner returns a runner of one agent, "assistant", on llm, with
// plugins, creating its sessions in svc.
func newRunner(t *testing.T, svc session.Service, llm model.LLM, plugins ...*plugin.Plugin) *runner.Runner {
	t.Helper()
	a, err := llmagent.New(llmagent.Config{Name: "assistant", Model: llm, Instruction: "Answer the user."})
	require.NoError(t, err)
	r, err := runner.New(runner.Config{
		AppName:           testApp,
		Agent:             a,
		SessionService:    svc,
		PluginConfig:      runner.PluginConfig{Plugins: plugins},
		AutoCreateSession: true,
	})
	require.NoError(t, err)
	return r
}

// runTurn sends text as the user's message of one turn of session s1.
func runTurn(t *testing.T, r *runner.Runner, text string) {
	t.Helper()
	for _, err := range r.Run(t.Context(), testUser, "s1", genai.NewContentFromText(text, genai.RoleUser), agent.RunConfig{}) {
		require.NoError(t, err)
	}
}

// texts returns the texts of c's parts.
func texts(c *genai.Content) []string {
	var out []string
	if c == nil {
		return nil
	}
	for _, p := range c.Parts {
		if p != nil && p.Text != "" {
			out = append(out, p.Text)
		}
	}
	return out
}

// contentTexts returns the text of each content, its parts joined by
// spaces.
func contentTexts(cs []*genai.Content) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = strings.Join(texts(c), " ")
	}
	return out
}
