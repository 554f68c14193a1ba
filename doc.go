// Package contextguard is an ADK-Go plugin that keeps every LLM request of an
// agent inside its model's context window.
//
// Most apps need five things. [New], [ContextGuard.Add] and
// [ContextGuard.PluginConfig] put the guard in the runner: Add takes the
// agent's name and the model that writes its summaries, usually the agent's
// own. [WithMaxTokens] sets the model's context window, for a model the
// registry does not know or one served with a smaller window.
// [WithSessionService] gives the guard the runner's session service, so
// that a compaction made between two runs reaches every process that serves
// the session. [ContextGuard.RecallTool] gives the agent a tool that brings
// back, word for word, what compaction and pruning removed from its
// requests. [ContextGuard.Usage] says how full the context is.
//
// Before each model call the guard counts the request's tokens (contents,
// system instruction and tool declarations), calibrated by the provider's
// real prompt-token count of the previous call. When the count reaches the
// trigger (the window minus a buffer: 20k tokens for windows of 200k and
// more, 20% below that) it summarizes the conversation with an LLM, or with
// a deterministic fallback when the LLM fails, stores the summary in the ADK
// session, and sends the model one message holding the summary and the
// user's current request instead of the history. On later calls the summary
// replaces the contents it covers, located by a watermark and a fingerprint,
// so the compaction persists although ADK rebuilds the request from its
// append-only event log every step. After each call the guard records the
// provider's prompt-token count to calibrate the next estimate.
//
// Register it with a runner in a few lines (the README's "Start here" has
// the whole program):
//
//	sessions := session.InMemoryService()
//	guard := contextguard.New(nil, contextguard.WithSessionService(sessions)) // nil: the default registry
//	guard.Add("assistant", llm) // the agent's name and the model that summarizes
//	recall, err := guard.RecallTool(sessions) // add it to the agent's Tools
//	r, err := runner.New(runner.Config{
//		AppName:           "app",
//		Agent:             assistant,
//		SessionService:    sessions,
//		PluginConfig:      guard.PluginConfig(),
//		AutoCreateSession: true, // the first Run creates the session
//	})
//	// After a run: how full is the context?
//	u, err := guard.Usage(ctx, sessions, "app", userID, sessionID, "assistant")
//
// Agents that were not added pass through untouched.
package contextguard

// api_gen.go re-exports the engine's public API with core's doc comments
// (internal/apidoc); the mirror then writes ADK v2's copies of this
// package's files (internal/mirrorv2). Run both with `go generate .` in the
// repository root.
//go:generate go run ./internal/apidoc
//go:generate go run ./internal/mirrorv2
