// Command quickstart runs one turn of an ADK-Go v2 agent whose every model request
// contextguard keeps inside the model's context window, with what most apps
// use: the guard in the runner's plugins, the model's window, the runner's
// session service, the recall tool and the context's usage. The Gemini
// model reads GOOGLE_API_KEY; any other ADK model.LLM is added the same way.
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
	"google.golang.org/adk/v2/tool"
	"google.golang.org/genai"

	contextguard "github.com/adk-contextguard/contextguard/adkv2"
)

func main() {
	ctx := context.Background()
	llm, err := gemini.NewModel(ctx, "gemini-2.5-flash", nil) // your model
	if err != nil {
		log.Fatal(err)
	}
	sessions := session.InMemoryService() // in production, a database session service

	// New: nil takes the default, catwalk-backed model registry.
	// WithSessionService: a compaction made between two runs is written to
	// the session, so any process that serves it starts compacted.
	guard := contextguard.New(nil, contextguard.WithSessionService(sessions))
	// Add: the agent's name and the model that writes its summaries.
	// WithMaxTokens: the model's window, for a model the registry does not
	// know or one served with a smaller window.
	guard.Add("assistant", llm, contextguard.WithMaxTokens(1_048_576))

	// RecallTool: the agent can get back what a compaction removed.
	recall, err := guard.RecallTool() // reads the events from the tool's context
	if err != nil {
		log.Fatal(err)
	}
	assistant, err := llmagent.New(llmagent.Config{Name: "assistant", Model: llm,
		Instruction: "Answer the user.", Tools: []tool.Tool{recall}})
	if err != nil {
		log.Fatal(err)
	}

	r, err := runner.New(runner.Config{
		AppName:           "app",
		Agent:             assistant,
		SessionService:    sessions,
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

	// Usage: how full the context is, for a UI's "context: 63%" line.
	u, err := guard.Usage(ctx, sessions, "app", "user", "session-1", "assistant")
	if err != nil {
		log.Fatal(err)
	}
	log.Printf("context: %.0f%% of %d tokens, %d compactions", u.Utilization*100, u.Window, u.Compactions)
	// Close stops the summaries the guard still prepares in the background.
	if err := guard.Close(); err != nil {
		log.Fatal(err)
	}
}
