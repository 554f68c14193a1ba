// Package contextguard is the contextguard plugin for ADK-Go v2
// (google.golang.org/adk/v2): the same constructor, options and session-state
// keys as the plugin for ADK-Go v1, over the same engine (module core).
package contextguard
