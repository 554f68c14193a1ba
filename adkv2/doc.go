// Package contextguard is the contextguard plugin for ADK-Go v2
// (google.golang.org/adk/v2): it keeps every LLM request of an agent inside
// its model's context window. It has the constructor, options and
// session-state keys of the plugin for ADK-Go v1
// (github.com/adk-contextguard/contextguard), and the same engine (module
// github.com/adk-contextguard/contextguard/core), so a program moves from one
// ADK line to the other by changing the import path.
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
// Register it with a runner in a few lines (adkv2/examples/quickstart has
// the whole program):
//
//	sessions := session.InMemoryService()
//	guard := contextguard.New(nil, contextguard.WithSessionService(sessions)) // nil: the default registry
//	guard.Add("assistant", llm) // the agent's name and the model that summarizes
//	recall, err := guard.RecallTool() // add it to the agent's Tools
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
