// Package contextguardtest provides utilities for testing context-window
// guards for ADK-Go v2 agents (google.golang.org/adk/v2), in the spirit of
// net/http/httptest. It is the ADK v2 twin of the root module's
// contextguardtest package, with the same names and behaviour: code written
// against one compiles against the other once the ADK imports change.
//
// It is deliberately independent of the guard it tests: nothing here imports
// the contextguard package, so the kit measures a guard from the outside,
// exactly as a provider and a user would see it.
//
// It holds what a test of a user's own agent needs, on ADK v2: [Run], which
// plays a [Scenario] (a [TurnPlan] per user turn, built with [Call],
// [Parallel] and [Sequential]) through v2's runner.Runner and llmagent with
// the guard's plugins ([RunConfig].Plugins is v2's runner.PluginConfig) and
// returns a [Result]; [ScriptedModel] and [SummarizerModel] (model.LLM
// wrappers); the fake tools ([DataTool], [Tools], on v2's functiontool and
// tool packages); the ground-truth counters ([Counter], [SeedCounter],
// [CoreCounter], [CountContents]; the exact o200k_base one is o200k.Counter
// in the package o200k below this one, which alone downloads a tokenizer);
// a [FakeClock]; and the checks a
// test asserts ([CheckPairs], [FlattenText], [Marker], [MarkerPattern],
// [IsOverflowError]). Everything else (content generators, fault values,
// providers' error styles, the seed matrix, window sizes) is in the
// ADK-free [github.com/adk-contextguard/contextguard/core/coretest].
//
// # ADK v2's synthetic message
//
// When the contents ADK v2 builds from the session end with a model content,
// it appends a user message "Continue processing previous requests as
// instructed. …" before any plugin runs. The driver's observer plugin and the
// guard see it; the scripted model receives it and the ground truth counts
// it (a provider is sent it). It carries no turn tag and no marker, so it
// never moves the scripted model's position, never counts as the user's
// latest request, and never makes a marker lost. Since it is not in the
// session's log, the effective input of the next request (the request sent
// before, plus what the log gained since) correctly drops it. In the runs
// [Run] plays, every turn starts with a user message and every step within
// a turn ends with function responses (role user), so the message never
// appears: Run's measurements of a scenario equal the ADK v1 driver's,
// request for request.
//
// Sizes given to generators and scenarios are in bytes (characters for
// ASCII text), as in the seed matrix.
package contextguardtest
