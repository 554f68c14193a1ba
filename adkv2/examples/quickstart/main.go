// Command quickstart runs one turn of an ADK-Go v2 agent whose every model request
// contextguard keeps inside the model's context window. The Gemini model
// reads GOOGLE_API_KEY; any other ADK model.LLM is added the same way.
package main

import (
	"context"
	"fmt"
	"log"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/agent/llmagent"
	"google.golang.org/adk/v2/model/gemini"
	"google.golang.org/adk/v2/runner"
	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"

	contextguard "github.com/adk-contextguard/contextguard/adkv2"
)

func main() {
	ctx := context.Background()
	llm, err := gemini.NewModel(ctx, "gemini-2.5-flash", nil) // your model
	if err != nil {
		log.Fatal(err)
	}
	assistant, err := llmagent.New(llmagent.Config{Name: "assistant", Model: llm, Instruction: "Answer the user."})
	if err != nil {
		log.Fatal(err)
	}

	guard := contextguard.New(nil) // nil: the default, catwalk-backed model registry
	guard.Add("assistant", llm)    // the agent's name, and the model that writes summaries
	r, err := runner.New(runner.Config{
		AppName:           "app",
		Agent:             assistant,
		SessionService:    session.InMemoryService(),
		PluginConfig:      guard.PluginConfig(), // panics on invalid options; guard.Plugin() returns them
		AutoCreateSession: true,                 // the first Run creates the session
	})
	if err != nil {
		log.Fatal(err)
	}

	msg := genai.NewContentFromText("Why do long agent sessions fail?", genai.RoleUser)
	for event, err := range r.Run(ctx, "user", "session-1", msg, agent.RunConfig{}) {
		if err != nil {
			log.Fatal(err)
		}
		if event.Content != nil {
			for _, p := range event.Content.Parts {
				fmt.Print(p.Text)
			}
		}
	}
	fmt.Println()
}
