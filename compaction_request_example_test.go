package contextguard_test

import (
	"context"
	"fmt"
	"iter"
	"strings"

	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard"
)

// slashModel stands in for a model that calls the compaction tool when the
// user types "/compact <focus>", and otherwise answers briefly.
type slashModel struct{}

func (slashModel) Name() string { return "gemini-2.5-flash" }

func (slashModel) GenerateContent(_ context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	answer := genai.NewContentFromText("Noted.", genai.RoleModel)
	if n := len(req.Contents); n > 0 && req.Contents[n-1].Role == genai.RoleUser {
		if p := req.Contents[n-1].Parts; len(p) > 0 {
			if focus, ok := strings.CutPrefix(p[0].Text, "/compact"); ok {
				answer = &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{
					Name: contextguard.CompactToolName, Args: map[string]any{"focus": strings.TrimSpace(focus)},
				}}}}
			}
		}
	}
	return func(yield func(*model.LLMResponse, error) bool) { yield(&model.LLMResponse{Content: answer}, nil) }
}

// The agent compacts its own conversation with the tool CompactTool
// returns, here because the user typed "/compact" with a focus.
func ExampleContextGuard_CompactTool() {
	guard := contextguard.New(nil, contextguard.WithOnCompaction(func(_ context.Context, ev contextguard.CompactionEvent) {
		fmt.Printf("compacted (%s), %d of %d tokens before\n", ev.Reason, ev.TokensBefore, ev.Window)
	}))
	summarizer := cannedModel{name: "gemini-2.5-flash", answer: "## Current State\nThe user is debugging the payment service."}
	guard.Add("assistant", summarizer, contextguard.WithMaxTokens(8_000))
	compact, err := guard.CompactTool()
	if err != nil {
		panic(err)
	}
	assistant, err := llmagent.New(llmagent.Config{
		Name: "assistant", Model: slashModel{}, Instruction: "Answer the user.",
		Tools: []tool.Tool{compact},
	})
	if err != nil {
		panic(err)
	}
	r, err := runner.New(runner.Config{
		AppName: "app", Agent: assistant, SessionService: session.InMemoryService(),
		PluginConfig: guard.PluginConfig(), AutoCreateSession: true,
	})
	if err != nil {
		panic(err)
	}

	say(r, "The payment service fails: "+strings.Repeat("timeout while calling the ledger; ", 40))
	say(r, "/compact focus on the ledger timeouts")
	// Output: compacted (requested), 534 of 8000 tokens before
}
