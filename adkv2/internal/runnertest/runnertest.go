// Package runnertest holds the ADK v2 runner helpers that the plugin's
// tests share: those of the plugin's own package and those of
// internal/plugintest, which a module importing the plugin must not load.
package runnertest

import (
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

// Session is the ID of the session every turn of RunTurn plays in.
const Session = "s1"

// NewRunner returns a runner of app with one agent, "assistant", on llm,
// with plugins, creating its sessions in svc.
func NewRunner(t testing.TB, app string, svc session.Service, llm model.LLM, plugins ...*plugin.Plugin) *runner.Runner {
	t.Helper()
	a, err := llmagent.New(llmagent.Config{Name: "assistant", Model: llm, Instruction: "Answer the user."})
	require.NoError(t, err)
	r, err := runner.New(runner.Config{
		AppName:           app,
		Agent:             a,
		SessionService:    svc,
		PluginConfig:      runner.PluginConfig{Plugins: plugins},
		AutoCreateSession: true,
	})
	require.NoError(t, err)
	return r
}

// RunTurn sends text as user's message of one turn of Session, failing the
// test on any error of the run.
func RunTurn(t testing.TB, r *runner.Runner, user, text string) {
	t.Helper()
	for _, err := range r.Run(t.Context(), user, Session, genai.NewContentFromText(text, genai.RoleUser), agent.RunConfig{}) {
		require.NoError(t, err)
	}
}

// Texts returns the non-empty texts of c's parts.
func Texts(c *genai.Content) []string {
	if c == nil {
		return nil
	}
	var out []string
	for _, p := range c.Parts {
		if p != nil && p.Text != "" {
			out = append(out, p.Text)
		}
	}
	return out
}

// ContentTexts returns the text of each content, its parts joined by
// spaces.
func ContentTexts(cs []*genai.Content) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = strings.Join(Texts(c), " ")
	}
	return out
}
