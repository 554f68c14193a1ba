package coretest

import (
	"fmt"
	"strings"
	"time"
)

// The adapter-conformance suite: one list of cases, defined here without
// ADK, that each ADK line's tests play through that line's real runner
// (its kit's Run) with that line's plugin, so the two plugins are held to
// the same results. ARCHITECTURE.md, Tests.

// ConformanceCase is one case of the suite: a scenario, how the guard is
// configured for it, and how many sessions play it at once on one guard.
type ConformanceCase struct {
	// Name names the case in test names and the table.
	Name string
	// Scenario is played in each session.
	Scenario Scenario
	// Fault, when set, is injected into the summarizer from its first
	// call on (every compaction then takes the fallback summary).
	Fault *Fault
	// SummaryTimeout, when > 0, is the guard's WithSummaryTimeout. The
	// guard then runs on a [FakeClock] (WithClock) that the summarizer
	// advances by SummaryTimeout once a call blocks
	// ([SummarizerConfig.OnBlocked]): the timeout fires while the
	// summarizer is known to be waiting, whatever the machine's load.
	SummaryTimeout time.Duration
	// TailRetention, when > 0, selects the tail-retention strategy with
	// this fraction of the window (WithTailRetention).
	TailRetention float64
	// Recovery gives the guard a recovery model (WithRecoveryModel) that
	// plays the scenario against the same ground truth.
	Recovery bool
	// Sessions is how many sessions play the scenario concurrently on one
	// guard (0 or 1: one).
	Sessions int
}

// conformance windows: the smallest window of the seed matrix at which a
// tool-heavy agent compacts every few turns, and a frontier model's.
const (
	conformanceSmallWindow = Window8k
	conformanceLargeWindow = Window200k
	// conformanceTurns is the length of the tool-heavy sessions.
	conformanceTurns = 30
	// conformanceSummaryTimeout is the guard's bound on the summarizers
	// that block (FaultSlow, FaultHang), on a fake clock: every compaction
	// of those cases times out and takes the fallback. An hour, so that
	// only the fake clock reaches it.
	conformanceSummaryTimeout = time.Hour
	// conformanceTailFraction is the tail-retention case's share of the
	// window kept verbatim.
	conformanceTailFraction = 0.3
	// conformanceSessions is the number of concurrent sessions of the
	// concurrency case (the 20).
	conformanceSessions = 20
	// conformanceHeavyRatio is a provider whose tokenizer counts three
	// times the seeds' bytes/4 and that reports no usage: the guard's
	// estimate is far below the truth, so the provider rejects requests
	// and the guard must recover them.
	conformanceHeavyRatio = 3.0
)

// toolHeavy is a turn of a coding agent: a chain of two calls, then three in
// parallel, of the kinds real tools return, sized by scale (bytes per call
// at scale 1).
func toolHeavy(scale int) func(turn int) TurnPlan {
	kinds := []Kind{KindLogLines, KindGoCode, KindGrep, KindTestOutput, KindPrettyJSON, KindBase64, KindKubectlTable, KindSQLRows}
	return func(t int) TurnPlan {
		k := func(i int) Kind { return kinds[(t*5+i)%len(kinds)] }
		size := func(i int) int { return scale * vary(6, 14, t, i) / 10 }
		steps := Sequential(ToolCall{Name: "grep", Size: size(0), Kind: k(0)}, ToolCall{Name: "read_file", Size: size(1), Kind: k(1)})
		steps = append(steps, Parallel(
			ToolCall{Name: "run_tests", Size: size(2), Kind: k(2)},
			ToolCall{Name: "http_get", Size: size(3), Kind: k(3)},
			ToolCall{Name: "sql_query", Size: size(4), Kind: k(4)},
		)...)
		return TurnPlan{UserTextSize: 400, ResponseSize: 500, Steps: steps}
	}
}

// conformanceScenario is a tool-heavy scenario of the suite.
func conformanceScenario(name string, window, turns, scale int, ratio float64) Scenario {
	return Scenario{Prefix: "Conformance", Name: name, Window: window, Turns: turns, TokenRatio: ratio,
		Plan: toolHeavy(scale), SystemPromptSize: 2_000, Seed: int64(len(name))}
}

// ConformanceCases returns the suite: 30-turn tool-heavy sessions at 8k
// and 200k (at 8k with tail retention too), the summarizer failing in each way a summarizer fails,
// recovery from a provider's overflow errors, and 20 concurrent sessions on
// one guard.
func ConformanceCases() []ConformanceCase {
	small := conformanceScenario("ToolHeavy_30Turns_8k", conformanceSmallWindow, conformanceTurns, 1_000, 1.0)
	faulty := func(name string, f Fault) ConformanceCase {
		sc := conformanceScenario("SummarizerFault_"+name, conformanceSmallWindow, 20, 1_000, 1.0)
		return ConformanceCase{Name: sc.Name, Scenario: sc, Fault: &f}
	}
	heavy := conformanceScenario("ProviderOverflow_Recovered", conformanceSmallWindow, 20, 1_000, conformanceHeavyRatio)
	heavy.NoUsageMetadata = true
	slow := faulty("Slow", FaultSlow)
	slow.SummaryTimeout = conformanceSummaryTimeout
	hang := faulty("Hang", FaultHang)
	hang.SummaryTimeout = conformanceSummaryTimeout
	concurrent := conformanceScenario("Concurrent_20Sessions_8k", conformanceSmallWindow, 12, 1_000, 1.0)
	return []ConformanceCase{
		{Name: small.Name, Scenario: small},
		{Name: "ToolHeavy_30Turns_200k", Scenario: conformanceScenario("ToolHeavy_30Turns_200k", conformanceLargeWindow, conformanceTurns, 24_000, 1.0)},
		{Name: "TailRetention_30Turns_8k", Scenario: conformanceScenario("TailRetention_30Turns_8k", conformanceSmallWindow, conformanceTurns, 1_000, 1.0),
			TailRetention: conformanceTailFraction},
		faulty("Error", FaultError),
		faulty("Empty", FaultEmpty),
		faulty("Panic", FaultPanic),
		slow,
		hang,
		{Name: heavy.Name, Scenario: heavy, Recovery: true},
		{Name: concurrent.Name, Scenario: concurrent, Sessions: conformanceSessions},
	}
}

// SessionCount is the number of sessions the case plays (at least one).
func (c ConformanceCase) SessionCount() int { return max(c.Sessions, 1) }

// SessionScenario is the scenario session i of the case plays: the case's,
// with its own seed, so every session's payloads and markers are its own
// and a marker one session lost cannot be found in another's summaries.
func (c ConformanceCase) SessionScenario(i int) Scenario {
	sc := c.Scenario
	sc.Seed += int64(i) * sessionSeedStride
	return sc
}

// sessionSeedStride separates the seeds of a case's sessions.
const sessionSeedStride = 7_919

// Violations lists what a run of one session of the case broke: an
// overflow reaching the caller, a rejected request not recovered, a request
// the model accepted over the window, a compaction that did not shrink the
// request, a broken call/response pair, a request without the user's
// latest message, a marker neither sent nor summarized, an error of a turn.
// A summarizer that fails (an error, a timeout) has seen its input, which
// counts as summarized: what the fallback summary keeps is the engine's
// tests' to check (core's summarizer_call_test.go).
func (c ConformanceCase) Violations(res *Result) []string {
	var v []string
	add := func(format string, args ...any) { v = append(v, fmt.Sprintf(format, args...)) }
	if res.OverflowsSurfaced > 0 {
		add("%d overflows reached the caller", res.OverflowsSurfaced)
	}
	if res.OverflowsRejected != res.OverflowsRecovered+res.OverflowsSurfaced {
		add("%d rejected, %d recovered, %d surfaced", res.OverflowsRejected, res.OverflowsRecovered, res.OverflowsSurfaced)
	}
	for _, r := range res.Requests {
		if !r.Rejected && r.Tokens > res.Window {
			add("request %d accepted at %d tokens over the %d window", r.Index, r.Tokens, res.Window)
		}
	}
	if res.NonShrinkingCompactions > 0 {
		add("%d compactions did not shrink the request", res.NonShrinkingCompactions)
	}
	if res.PairViolations > 0 {
		add("%d requests with a broken call/response pair", res.PairViolations)
	}
	if res.MissingLatestUser > 0 {
		add("%d requests without the user's latest message", res.MissingLatestUser)
	}
	if res.LostMarkers > 0 {
		add("%d markers neither sent nor summarized", res.LostMarkers)
	}
	for _, err := range res.Errors {
		add("turn error: %v", err)
	}
	return v
}

// ConformanceRow is one line of the suite's table: a case as one ADK line
// played it, summed over its sessions.
type ConformanceRow struct {
	Line, Case string
	// Requests the model received; Rejected, Surfaced and Recovered
	// overflow errors; Compactions the guard applied (its OnCompaction
	// events, recoveries included); SummarizerCalls made.
	Requests, Rejected, Surfaced, Recovered, Compactions, SummarizerCalls int
	// MaxUtilization is the largest request the model accepted over the
	// window (ground truth).
	MaxUtilization float64
}

// NewConformanceRow sums the results of the case's sessions as played by
// line, with the compactions the guard reported and the calls its
// summarizer received (one summarizer serves all the sessions of a case).
func NewConformanceRow(line string, c ConformanceCase, compactions, summarizerCalls int, results []*Result) ConformanceRow {
	row := ConformanceRow{Line: line, Case: c.Name, Compactions: compactions, SummarizerCalls: summarizerCalls}
	for _, res := range results {
		row.Requests += res.Steps
		row.Rejected += res.OverflowsRejected
		row.Surfaced += res.OverflowsSurfaced
		row.Recovered += res.OverflowsRecovered
		for _, r := range res.Requests {
			if !r.Rejected && res.Window > 0 {
				row.MaxUtilization = max(row.MaxUtilization, float64(r.Tokens)/float64(res.Window))
			}
		}
	}
	return row
}

// FormatConformanceTable renders rows as a Markdown table.
func FormatConformanceTable(rows []ConformanceRow) string {
	var b strings.Builder
	b.WriteString("| ADK line | case | requests | overflows rejected / surfaced / recovered | compactions | summarizer calls | max utilization |\n")
	b.WriteString("|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %d | %d / %d / %d | %d | %d | %.1f%% |\n",
			r.Line, r.Case, r.Requests, r.Rejected, r.Surfaced, r.Recovered, r.Compactions, r.SummarizerCalls, 100*r.MaxUtilization)
	}
	return b.String()
}
