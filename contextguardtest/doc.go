// Package contextguardtest provides utilities for testing context-window
// guards for ADK-Go agents (ADK v1, google.golang.org/adk), in the spirit of
// net/http/httptest.
//
// It is deliberately independent of the guard it tests: nothing here imports
// the contextguard package, so the kit measures a guard from the outside,
// exactly as a provider and a user would see it.
//
// The package holds what a test of a user's own agent needs:
//
//   - A driver, [Run], that plays a [Scenario] (a [TurnPlan] per user turn,
//     built with [Call], [Parallel] and [Sequential]) through a real
//     runner.Runner and llmagent with the guard's plugins installed, and
//     measures what the guard did: compactions, utilization, overflows, pair
//     safety, and whether the user's latest request survived every rewrite
//     ([Result]).
//   - A [ScriptedModel] that plays a scenario turn by turn, reports usage
//     from the ground truth, and fails like a real provider when a request
//     exceeds its window; a [SummarizerModel] with fault injection; and fake
//     tools ([DataTool], [Tools]).
//   - Ground-truth token counters ([Counter], [SeedCounter],
//     [CoreCounter], [CountContents]) that say how many tokens a provider
//     would bill for an [model.LLMRequest]; the exact o200k_base one is
//     o200k.Counter in the package o200k below this one, which alone
//     downloads a tokenizer.
//   - A [FakeClock] for the guard's WithClock, and the checks a test asserts
//     ([CheckPairs], [FlattenText], [Marker], [MarkerPattern],
//     [IsOverflowError]).
//
// Everything else (content generators, fault values, providers' error
// styles, the seed matrix, window sizes) is in the ADK-free
// [github.com/adk-contextguard/contextguard/core/coretest], shared with the
// kit of the ADK v2 plugin (package contextguardtest of the adkv2 module);
// the few coretest names above are re-exported here as aliases and thin
// wrappers.
//
// Sizes given to generators and scenarios are in bytes (characters for
// ASCII text), as in the seed matrix.
package contextguardtest
