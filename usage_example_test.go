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

// exampleApp is an agent "assistant" guarded in an 8,000-token window, on a
// runner over an in-memory session service, for the examples.
func exampleApp(hook func(context.Context, contextguard.CompactionEvent)) (*contextguard.ContextGuard, *runner.Runner, session.Service) {
	llm := cannedModel{name: "gemini-2.5-flash", answer: "Noted."}
	summarizer := cannedModel{name: "gemini-2.5-flash", answer: "## Current State\nThe user reported the status of their services."}
	assistant, err := llmagent.New(llmagent.Config{Name: "assistant", Model: llm, Instruction: "Answer the user."})
	if err != nil {
		panic(err)
	}
	var opts []contextguard.Option
	if hook != nil {
		opts = append(opts, contextguard.WithOnCompaction(hook))
	}
	guard := contextguard.New(nil, opts...)
	guard.Add("assistant", summarizer, contextguard.WithMaxTokens(8_000))
	sessions := session.InMemoryService()
	r, err := runner.New(runner.Config{
		AppName:           "app",
		Agent:             assistant,
		SessionService:    sessions,
		PluginConfig:      guard.PluginConfig(),
		AutoCreateSession: true,
	})
	if err != nil {
		panic(err)
	}
	return guard, r, sessions
}

// say runs one turn of the user's.
func say(r *runner.Runner, text string) {
	for _, err := range r.Run(context.Background(), "user", "session", genai.NewContentFromText(text, genai.RoleUser), agent.RunConfig{}) {
		if err != nil {
			panic(err)
		}
	}
}

// The status line of an agent UI, or an HTTP handler's answer: Usage needs
// only the session service and the session's IDs. Inside a tool, use
// UsageFromState with the tool context's state.
func ExampleContextGuard_Usage() {
	guard, r, sessions := exampleApp(nil)
	for turn := 1; turn <= 10; turn++ {
		say(r, fmt.Sprintf("Service %d reports: %s", turn, strings.Repeat("all pods ready, latency nominal. ", 60)))
	}

	u, err := guard.Usage(context.Background(), sessions, "app", "user", "session", "assistant")
	if err != nil {
		panic(err)
	}
	fmt.Printf("context: %.0f%% of %d tokens, compacting at %d\n", u.Utilization*100, u.Window, u.Threshold)
	fmt.Println("compactions:", u.Compactions)
	// Output:
	// context: 63% of 8000 tokens, compacting at 6400
	// compactions: 0
}

// A "/compact" command: the application asks, between two runs, that the
// session's next model call compact, with a focus for the summary. The
// agent can also ask for it itself with the tool CompactTool returns.
func ExampleContextGuard_RequestCompaction() {
	guard, r, sessions := exampleApp(func(_ context.Context, ev contextguard.CompactionEvent) {
		fmt.Printf("compacted (%s): %d -> %d tokens\n", ev.Reason, ev.TokensBefore, ev.TokensAfter)
	})
	for turn := 1; turn <= 2; turn++ {
		say(r, fmt.Sprintf("Service %d reports: %s", turn, strings.Repeat("all pods ready, latency nominal. ", 60)))
	}

	err := guard.RequestCompaction(context.Background(), sessions, "app", "user", "session", "assistant", "focus on the failing service")
	if err != nil {
		panic(err)
	}
	say(r, "Service 3 is failing its health checks.")

	u, err := guard.Usage(context.Background(), sessions, "app", "user", "session", "assistant")
	if err != nil {
		panic(err)
	}
	fmt.Println("compactions:", u.Compactions, "last:", u.LastCompactionReason, "still requested:", u.CompactionRequested)
	// Output:
	// compacted (requested): 1026 -> 159 tokens
	// compactions: 1 last: requested still requested: false
}

// Switching the guard off for one session, and back on.
func ExampleContextGuard_DisableSession() {
	guard, r, sessions := exampleApp(nil)
	ctx := context.Background()
	say(r, "Hello. "+strings.Repeat("Here is the status of every service. ", 20))

	if err := guard.DisableSession(ctx, sessions, "app", "user", "session"); err != nil {
		panic(err)
	}
	say(r, "This request reaches the model as ADK built it.")
	u, _ := guard.Usage(ctx, sessions, "app", "user", "session", "assistant")
	fmt.Println("guard off:", u.Disabled)

	if err := guard.EnableSession(ctx, sessions, "app", "user", "session"); err != nil {
		panic(err)
	}
	u, _ = guard.Usage(ctx, sessions, "app", "user", "session", "assistant")
	fmt.Println("guard off:", u.Disabled)
	// Output:
	// guard off: true
	// guard off: false
}
