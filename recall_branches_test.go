package contextguard_test

import (
	"context"
	"iter"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/agent/workflowagents/parallelagent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard"
	"github.com/adk-contextguard/contextguard/contextguardtest"
	"github.com/adk-contextguard/contextguard/core/coretest"
)

// Recall in ADK v1's branches (ARCHITECTURE.md, Recall): two agents of a
// parallel agent run in branches par.alpha and par.beta of one session; the
// recall tool of beta searches what beta's compaction removed from beta's
// requests, never alpha's events, which ADK keeps out of beta's requests.

// branchModel answers every request with its text.
type branchModel struct{ text string }

func (m branchModel) Name() string { return "gemini-2.5-flash" }

func (m branchModel) GenerateContent(context.Context, *model.LLMRequest, bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		yield(&model.LLMResponse{Content: genai.NewContentFromText(m.text, genai.RoleModel), TurnComplete: true}, nil)
	}
}

func TestRecallTool_StaysInItsBranch(t *testing.T) {
	svc := session.InMemoryService()
	g := contextguard.New(nil, contextguard.WithLogger(slog.New(slog.DiscardHandler)))
	sum := contextguardtest.NewSummarizerModel(contextguardtest.SummarizerConfig{})
	g.Add("alpha", sum, contextguard.WithMaxTokens(8_000))
	g.Add("beta", sum, contextguard.WithMaxTokens(8_000))
	recall, err := g.RecallTool(svc)
	require.NoError(t, err)
	alpha, err := llmagent.New(llmagent.Config{Name: "alpha", Model: branchModel{"alpha found the secret: the vault word is heron"}})
	require.NoError(t, err)
	llm := &recallAgentModel{}
	beta, err := llmagent.New(llmagent.Config{Name: "beta", Model: llm, Tools: []tool.Tool{recall}})
	require.NoError(t, err)
	par, err := parallelagent.New(parallelagent.Config{AgentConfig: agent.Config{Name: "par", SubAgents: []agent.Agent{alpha, beta}}})
	require.NoError(t, err)
	run, err := runner.New(runner.Config{AppName: "app", Agent: par, SessionService: svc, AutoCreateSession: true, PluginConfig: g.PluginConfig()})
	require.NoError(t, err)

	recallTurn(t, run, llm, "u", "s", "first: the deploy window is tuesday. "+coretest.Generate(coretest.KindProseEnglish, 3_000, 1))
	recallTurn(t, run, llm, "u", "s", "second: the rollback owner is dana. "+coretest.Generate(coretest.KindProseEnglish, 3_000, 2))
	require.NoError(t, g.RequestCompaction(t.Context(), svc, "app", "u", "s", "beta", ""))

	recallTurn(t, run, llm, "u", "s", "RECALL rollback owner")
	u, err := g.Usage(t.Context(), svc, "app", "u", "s", "beta")
	require.NoError(t, err)
	require.Equal(t, 1, u.Compactions, "beta's conversation was compacted")
	assert.Contains(t, llm.lastAnswer(), "the rollback owner is dana", "beta recalls its own branch's history")

	recallTurn(t, run, llm, "u", "s", "RECALL vault word heron")
	assert.NotContains(t, llm.lastAnswer(), "vault word is heron", "never another branch's content")
}
