// Package coretest is the ADK-free part of contextguard's public test kit,
// shared by the kits of both ADK lines (package contextguardtest of the root
// module for ADK v1 and of the adkv2 module for ADK v2, which re-export it
// and add the ADK glue). It imports no ADK package: it works on genai
// contents and configurations.
//
// It holds:
//
//   - Scenarios ([Scenario], [TurnPlan], [ToolStep], [ToolCall]) and
//     [SeedMatrix], the 91 scenarios of the stress matrix.
//   - Ground-truth token counters ([Counter], [SeedCounter],
//     [TextCounter]) that say how many tokens a provider would bill for a
//     request's contents and configuration; the exact o200k_base one is in
//     package o200k, the only part of the kit that needs a tokenizer.
//   - Deterministic content generators ([Generate], [PNG], [PNGOfSize],
//     [PDF]) and the fake tools' outputs ([Produce], [MCPSchema]).
//   - [CheckPairs], the structural pair check strict providers enforce.
//   - [Script], the scripted provider's logic: turn plans, its position in a
//     rewritten request, markers, provider-shaped overflow errors and the
//     [Reply] it makes, which each ADK line's ScriptedModel turns into its
//     response type; and [Summarizer], the summarizer model's logic (faults,
//     recorded calls).
//   - [FakeClock], a clock for the guard's WithClock whose timers fire only
//     when the test advances it, and [GoroutinesLeft], a check that a test
//     left no goroutine behind. With the summarizer's [FaultSlow] and
//     [FaultHang], which block until released, no test needs wall-clock
//     timing.
//   - [Meter] and [Result], the driver's measurement: effective input,
//     utilization at trigger, compactions that do not shrink, markers lost
//     without being summarized. Each ADK line's Run is the glue: a runner,
//     an agent, an observer plugin that calls [Meter.Raw], and the scripted
//     model that calls [Meter.Observe].
//
// Sizes given to generators and scenarios are in bytes (characters for
// ASCII text), as in the seed matrix.
package coretest
