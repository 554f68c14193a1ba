package contextguard_test

import (
	"context"
	"fmt"
	"iter"
	"strings"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/agent/llmagent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/runner"
	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"

	contextguard "github.com/adk-contextguard/contextguard/adkv2"
)

// cannedModel answers every request with the same text and reports a prompt
// size of four bytes a token, like a provider's usage metadata.
type cannedModel struct{ name, answer string }

func (m cannedModel) Name() string { return m.name }

func (m cannedModel) GenerateContent(_ context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	size := 0
	for _, c := range req.Contents {
		for _, p := range c.Parts {
			size += len(p.Text)
		}
	}
	return func(yield func(*model.LLMResponse, error) bool) {
		yield(&model.LLMResponse{
			Content:       genai.NewContentFromText(m.answer, genai.RoleModel),
			UsageMetadata: &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: int32(size/4 + 1)},
		}, nil)
	}
}

// Example registers the guard on an ADK runner. The window is set small with
// WithMaxTokens so that a few long turns make it compact.
func Example() {
	llm := cannedModel{name: "gemini-2.5-flash", answer: strings.Repeat("Here is what I found. ", 40)}
	summarizer := cannedModel{name: "gemini-2.5-flash", answer: "## Current State\nThe user is asking long questions."}
	assistant, err := llmagent.New(llmagent.Config{Name: "assistant", Model: llm, Instruction: "Answer the user."})
	if err != nil {
		panic(err)
	}

	compactions := 0
	guard := contextguard.New(nil, contextguard.WithOnCompaction(func(context.Context, contextguard.CompactionEvent) { compactions++ }))
	guard.Add("assistant", summarizer, contextguard.WithMaxTokens(4_000))
	r, err := runner.New(runner.Config{
		AppName:           "example",
		Agent:             assistant,
		SessionService:    session.InMemoryService(),
		PluginConfig:      guard.PluginConfig(),
		AutoCreateSession: true,
	})
	if err != nil {
		panic(err)
	}

	for turn := 1; turn <= 6; turn++ {
		msg := genai.NewContentFromText(fmt.Sprintf("Question %d: %s", turn, strings.Repeat("tell me more ", 200)), genai.RoleUser)
		for _, err := range r.Run(context.Background(), "user", "session", msg, agent.RunConfig{}) {
			if err != nil {
				panic(err)
			}
		}
	}
	fmt.Println("compacted:", compactions > 0)
	// Output: compacted: true
}
