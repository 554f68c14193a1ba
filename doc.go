// Package contextguard is an ADK-Go plugin that keeps every LLM request of an
// agent inside its model's context window.
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
// Register it with a runner in a few lines:
//
//	guard := contextguard.New(nil) // nil: the default, catwalk-backed registry
//	guard.Add("assistant", llm)    // the agent's name and the model that summarizes
//	r, err := runner.New(runner.Config{
//		AppName:           "app",
//		Agent:             assistant,
//		SessionService:    session.InMemoryService(),
//		PluginConfig:      guard.PluginConfig(),
//		AutoCreateSession: true, // the first Run creates the session
//	})
//
// Agents that were not added pass through untouched.
package contextguard

// api_gen.go re-exports the engine's public API with core's doc comments
// (internal/apidoc); the mirror then writes ADK v2's copies of this
// package's files (internal/mirrorv2). Run both with `go generate .` in the
// repository root.
//go:generate go run ./internal/apidoc
//go:generate go run ./internal/mirrorv2
