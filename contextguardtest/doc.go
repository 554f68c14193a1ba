// Package contextguardtest provides utilities for testing context-window
// guards for ADK-Go agents (ADK v1, google.golang.org/adk), in the spirit of
// net/http/httptest.
//
// It is deliberately independent of the guard it tests: nothing here imports
// the contextguard package, so the kit measures a guard from the outside,
// exactly as a provider and a user would see it.
//
// The kit is split in two. Its ADK-free parts live in
// [github.com/adk-contextguard/contextguard/core/coretest] and are shared
// with the kit of the ADK v2 plugin (package contextguardtest of the adkv2
// module); this package re-exports them under their old names and adds the
// ADK v1 glue:
//
//   - Ground-truth token counters ([Counter], [SeedCounter],
//     [TokenizerCounter]) that say how many tokens a provider would bill for
//     an [model.LLMRequest].
//   - Deterministic content generators ([Generate], [PNG], [PNGOfSize],
//     [PDF]) producing realistic tool payloads (JSON, YAML, kubectl tables,
//     logs, Go code, prose in several languages, images).
//   - A [ScriptedModel] that plays a scenario turn by turn (text replies,
//     parallel and sequential tool calls), reports usage from the ground
//     truth, and fails like a real provider when a request exceeds its
//     window; a [SummarizerModel] with fault injection; and fake tools
//     ([DataTool], [Tools], [MCPTools]). The two models are model.LLM
//     wrappers of coretest's Script and Summarizer.
//   - A driver, [Run], that plays a [Scenario] through a real runner.Runner
//     and llmagent with the guard's plugins installed, and measures what the
//     guard did: compactions, utilization, overflows, pair safety, and whether
//     the user's latest request survived every rewrite ([Result], measured by
//     coretest's Meter).
//   - [SeedMatrix], the 91 scenarios of the stress matrix.
//
// Sizes given to generators and scenarios are in bytes (characters for
// ASCII text), as in the seed matrix.
package contextguardtest
