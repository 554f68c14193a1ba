package integration

import (
	"context"
	"iter"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/plugin"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/tool"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard"
)

// recallModel is the agent's model after the restart: to a user message
// "RECALL q" (or a summary quoting it) it calls recall_context with query
// q; to the tool's answer it replies in text.
type recallModel struct{}

func (recallModel) Name() string { return agentModelName }

func (recallModel) GenerateContent(_ context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		last := req.Contents[len(req.Contents)-1]
		reply := genai.NewContentFromText("Recalled.", genai.RoleModel)
		text := contentText(last)
		if _, quoted, ok := strings.Cut(text, "<user_request>\n"); ok {
			text, _, _ = strings.Cut(quoted, "\n</user_request>")
		}
		if q, ok := strings.CutPrefix(strings.TrimSpace(text), "RECALL "); ok && last.Parts[0].FunctionResponse == nil {
			reply = &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{
				Name: contextguard.RecallToolName, Args: map[string]any{"query": q},
			}}}}
		}
		yield(&model.LLMResponse{Content: reply, TurnComplete: true}, nil)
	}
}

// TestRecallAfterRestart compacts a session on ADK's database session
// service, restarts (a new database handle, session service, guard and
// runner: no index in memory), and recalls the first turn's marker, which
// only the session's stored events still hold: the index is rebuilt from
// them on the first recall (ARCHITECTURE.md, Recall).
func TestRecallAfterRestart(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open opener) {
		const (
			window    = 8_000
			sessionID = "recall-restart"
			maxTurns  = 20
		)
		ctx := t.Context()
		salt := t.Name()
		clog, logs := &compactionLog{}, &logRecorder{}

		db1 := open(t)
		createSession(t, db1.svc, sessionID)
		r1 := newReplica(t, replicaConfig{name: "before", svc: db1.svc, agentLLM: newAgentModel(2, window), summarizer: &summarizerModel{},
			window: window, outputBytes: 3_000, log: clog, logs: logs})
		for turn := 1; turn <= maxTurns && len(clog.Events()) == 0; turn++ {
			clog.setTurn(turn)
			require.NoError(t, r1.runTurn(ctx, sessionID, userMessage(salt, turn), agent.RunConfig{}))
		}
		require.NotEmpty(t, clog.Events(), "the guard compacted within %d turns", maxTurns)
		require.NoError(t, db1.Close())

		db2 := open(t)
		guard2 := contextguard.New(nil, contextguard.WithLogger(slog.New(slog.DiscardHandler)))
		guard2.Add(agentName, &summarizerModel{}, contextguard.WithMaxTokens(window))
		recall, err := guard2.RecallTool(db2.svc)
		require.NoError(t, err)
		a, err := llmagent.New(llmagent.Config{Name: agentName, Model: recallModel{}, Instruction: agentInstruction, Tools: []tool.Tool{recall}})
		require.NoError(t, err)
		p, err := guard2.Plugin()
		require.NoError(t, err)
		run, err := runner.New(runner.Config{AppName: appName, Agent: a, SessionService: db2.svc, PluginConfig: runner.PluginConfig{Plugins: []*plugin.Plugin{p}}})
		require.NoError(t, err)

		first := marker(salt, 1)
		var answer string
		for ev, err := range run.Run(ctx, userID, sessionID, genai.NewContentFromText("RECALL "+first, genai.RoleUser), agent.RunConfig{}) {
			require.NoError(t, err)
			if ev == nil || ev.Content == nil {
				continue
			}
			for _, part := range ev.Content.Parts {
				if fr := part.FunctionResponse; fr != nil && fr.Name == contextguard.RecallToolName {
					answer, _ = fr.Response["result"].(string)
				}
			}
		}
		assert.Contains(t, answer, first+": please fetch the records of batch 1", "the compacted turn comes back from the stored events")
	})
}
