package main

import (
	"context"
	"fmt"
	"io"
	"iter"
	"strings"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/plugin"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard"
)

// The recall step after the story: the first turn's numbers were compacted
// long ago, and the agent gets them back with recall_context (README,
// "Going further: let the agent recall what a compaction removed").

// recallQuery is what the recall step searches for: words of the page the
// user described in the first turn.
const recallQuery = "checkout 5xx requests INC-4127"

// recallLines bounds the answer the demo prints.
const recallLines = 6

// recallModel is the recall step's scripted model: it calls recall_context
// with recallQuery, then closes the turn. It bears the name of the story's
// model (name): the recall turn is one more turn of the same agent, and the
// guard, seeing the summarizer's model in the request, gives the
// summarizer the agent's window rather than warn that it does not know it.
type recallModel struct{ name string }

func (m recallModel) Name() string { return m.name }

func (recallModel) GenerateContent(_ context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		reply := &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{
			Name: contextguard.RecallToolName, Args: map[string]any{"query": recallQuery},
		}}}}
		if n := len(req.Contents); n > 0 && len(req.Contents[n-1].Parts) > 0 && req.Contents[n-1].Parts[0].FunctionResponse != nil {
			reply = genai.NewContentFromText("Recalled.", genai.RoleModel)
		}
		yield(&model.LLMResponse{Content: reply, TurnComplete: true}, nil)
	}
}

// recallFact plays one turn of the agent (same name, same session, same
// guard) with the recall tool and a scripted model named modelName, the
// story's model, that calls it, and returns the tool's answer.
func recallFact(ctx context.Context, guard *contextguard.ContextGuard, guardPlugin *plugin.Plugin, sessions session.Service, sessionID, modelName string) (string, error) {
	recall, err := guard.RecallTool(sessions)
	if err != nil {
		return "", fmt.Errorf("recall tool: %w", err)
	}
	a, err := llmagent.New(llmagent.Config{Name: agentName, Model: recallModel{name: modelName}, Instruction: systemInstruction, Tools: []tool.Tool{recall}})
	if err != nil {
		return "", fmt.Errorf("recall agent: %w", err)
	}
	r, err := runner.New(runner.Config{AppName: appName, Agent: a, SessionService: sessions,
		PluginConfig: runner.PluginConfig{Plugins: []*plugin.Plugin{guardPlugin}}})
	if err != nil {
		return "", fmt.Errorf("recall runner: %w", err)
	}
	msg := genai.NewContentFromText("What exactly did the first page of the incident say?", genai.RoleUser)
	answer := ""
	for ev, err := range r.Run(ctx, userID, sessionID, msg, agent.RunConfig{}) {
		if err != nil {
			return "", fmt.Errorf("recall turn: %w", err)
		}
		if ev == nil || ev.Content == nil {
			continue
		}
		for _, p := range ev.Content.Parts {
			if fr := p.FunctionResponse; fr != nil && fr.Name == contextguard.RecallToolName {
				answer, _ = fr.Response["result"].(string)
			}
		}
	}
	return answer, nil
}

// printRecall prints the recall step's query and the head of its answer.
func printRecall(w io.Writer, answer string) {
	fmt.Fprintf(w, "\n== recall after compaction: the agent calls recall_context(query: %q)\n", recallQuery)
	lines := strings.Split(strings.TrimSpace(answer), "\n")
	for i, l := range lines {
		if i == recallLines {
			fmt.Fprintf(w, "  … (%d more lines)\n", len(lines)-recallLines)
			break
		}
		fmt.Fprintf(w, "  %s\n", clip(l, 160))
	}
}
