package contextguard_test

import (
	"context"
	"fmt"
	"strings"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard"
)

// ExampleContextGuard_AddDefault guards every agent of a multi-agent app:
// a coordinator is added by name with its own window, and AddDefault guards
// every other agent, such as its sub-agents, each under its own name.
func ExampleContextGuard_AddDefault() {
	summarizer := cannedModel{name: "gemini-2.5-flash", answer: "## Current State\nThe user is asking long questions."}
	researcher, err := llmagent.New(llmagent.Config{
		Name: "researcher", Description: "Researches long questions.",
		Model: cannedModel{name: "gemini-2.5-flash", answer: strings.Repeat("Here is what I found. ", 40)},
	})
	if err != nil {
		panic(err)
	}

	compacted := map[string]bool{}
	guard := contextguard.New(nil, contextguard.WithOnCompaction(func(_ context.Context, e contextguard.CompactionEvent) {
		compacted[e.Agent] = true
	}))
	guard.Add("coordinator", summarizer, contextguard.WithMaxTokens(1_000_000))
	guard.AddDefault(summarizer, contextguard.WithMaxTokens(4_000))

	// The researcher, which was not added by name, runs the session (as
	// after a coordinator's transfer to it).
	r, err := runner.New(runner.Config{
		AppName: "example", Agent: researcher, SessionService: session.InMemoryService(),
		PluginConfig: guard.PluginConfig(), AutoCreateSession: true,
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
	fmt.Println("researcher compacted:", compacted["researcher"])
	// Output: researcher compacted: true
}
