// Package recallbench measures the recall tool on real recorded agent
// sessions: it replays each session through ADK v1's real runner with the
// guard and its recall tool at context windows that compact, draws
// queries by a fixed rule (queries.go) from what the final request no
// longer holds, has the model call recall_context with each, as a model
// would, through the runner, and reports per session how often the sought
// line is in the first or the first three excerpts, the answers' size as
// the guard counts it, and the tool's latency.
//
// `make recall-bench` at the repository root runs it (README.md,
// Developing). The sessions are read in place (costbench's reader) from a
// folder outside the repository (the -traces flag or CONTEXTGUARD_TRACES;
// by default ../shared/agent-traces beside the repository root); nothing
// of them is copied here. The package is test support only and has no API
// of its own.
package recallbench
