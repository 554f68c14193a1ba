// Package contextguard is the contextguard plugin for ADK-Go v2
// (google.golang.org/adk/v2): it keeps every LLM request of an agent inside
// its model's context window. It has the constructor, options and
// session-state keys of the plugin for ADK-Go v1
// (github.com/adk-contextguard/contextguard), and the same engine (module
// github.com/adk-contextguard/contextguard/core), so a program moves from one
// ADK line to the other by changing the import path.
//
// Before each model call the guard counts the request's tokens (contents,
// system instruction and tool declarations), calibrated by the provider's
// real prompt-token count of the previous call. When the count reaches the
// trigger it summarizes the conversation with an LLM, or with a
// deterministic fallback when the LLM fails, stores the summary in the ADK
// session, and sends the model one message holding the summary and the
// user's current request instead of the history. On later calls the summary
// replaces the contents it covers. With ADK v2 the end of that coverage is
// the ID of the session event it was built from, so the cut stays on the
// same content when ADK v2 rearranges the request (function responses moved
// next to their calls, branches and isolation scopes, its synthetic
// "Continue processing" message, other agents' events); a session written
// by the earlier guard, whose state holds only a count of contents, is
// picked up and anchored on its first call.
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
