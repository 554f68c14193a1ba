// Package costbench measures what the guard costs at a provider's prompt
// cache on real recorded agent sessions: it replays each session through
// ADK v1's real runner with the guard installed, captures every request the
// model receives, and reports how much of each request's prefix equals the
// previous request's (what a provider bills as a cache read), the rewrites
// that happened with no compaction, how much of a summarizer request a
// cache could serve, and an input-cost index at two price models.
//
// `make cost` at the repository root runs it (README.md, Developing). The
// sessions are read in place from a folder outside the repository (the
// -traces flag or CONTEXTGUARD_TRACES; by default ../shared/agent-traces
// beside the repository root); nothing of them is copied here. The package
// is test support only and has no API of its own.
package costbench
