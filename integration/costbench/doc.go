// Package costbench measures what the guard costs at a provider's prompt
// cache on real recorded agent sessions: it replays each session through
// ADK v1's real runner with the guard installed, captures every request the
// model receives, and reports how much of each request's prefix equals the
// previous request's (what a provider bills as a cache read), the rewrites
// that happened with no compaction, how much of a summarizer request a
// cache could serve, and an input-cost index at two price models.
//
// It also accounts for every content (accounting.go): at every agent
// request, each earlier content of the conversation must be in the request
// (kept, or pruned to a placeholder that names it), in the input of a
// summarizer call that finished before the request and whose summary
// reached it (summarized; summaries are written while tools run and
// between turns, not only in the model call they serve), or listed
// mechanically by the fallback summary; any other is lost. Every
// compaction the guard reports must make the request it precedes smaller
// than the one ADK built. With CI=true a loss, or such an event, fails the
// run.
//
// `make cost` at the repository root runs it (README.md, Developing). The
// sessions are read in place from a folder outside the repository (the
// -traces flag or CONTEXTGUARD_TRACES; by default ../shared/agent-traces
// beside the repository root); nothing of them is copied here. The package
// is test support only and has no API of its own.
package costbench
