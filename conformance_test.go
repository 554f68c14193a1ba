package contextguard_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/adk-contextguard/contextguard"
	"github.com/adk-contextguard/contextguard/contextguardtest"
	"github.com/adk-contextguard/contextguard/core/coretest"
)

// conformanceTableEnv prints the suite's table when set.
const conformanceTableEnv = "CONTEXTGUARD_CONFORMANCE_TABLE"

// TestConformance plays the adapter-conformance suite (core/coretest,
// ConformanceCases) through ADK v1's real runner with this plugin; the ADK
// v2 plugin plays the same cases in adkv2's TestConformance.
func TestConformance(t *testing.T) {
	var mu sync.Mutex
	var rows []coretest.ConformanceRow
	t.Cleanup(func() {
		if os.Getenv(conformanceTableEnv) != "" {
			fmt.Print(coretest.FormatConformanceTable(sortedRows(rows)))
		}
	})
	for _, c := range coretest.ConformanceCases() {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			row := playConformance(t, c)
			mu.Lock()
			rows = append(rows, row)
			mu.Unlock()
		})
	}
}

// playConformance plays c's sessions concurrently on one guard, asserts
// each session's run, and returns the case's row. Each session is played by
// its own agent, added with its own summarizer, so the kit attributes every
// summarizer call to its session (a compaction step, a marker summarized).
func playConformance(t *testing.T, c coretest.ConformanceCase) coretest.ConformanceRow {
	t.Helper()
	sc := c.Scenario
	quiet := slog.New(slog.DiscardHandler)
	var compactions atomic.Int64
	g := contextguard.New(nil, contextguard.WithLogger(quiet),
		contextguard.WithOnCompaction(func(context.Context, contextguard.CompactionEvent) { compactions.Add(1) }))
	opts := []contextguard.AgentOption{contextguard.WithMaxTokens(sc.Window)}
	if c.SummaryTimeout > 0 {
		opts = append(opts, contextguard.WithSummaryTimeout(c.SummaryTimeout))
	}
	if c.Recovery {
		opts = append(opts, contextguard.WithRecoveryModel(contextguardtest.NewScriptedModel(contextguardtest.ScriptConfig{
			Window: sc.Window, Plan: sc.TurnPlan, Counter: contextguardtest.SeedCounter(sc.TokenRatio), NoUsage: sc.NoUsageMetadata,
		})))
	}
	sums := make([]*contextguardtest.SummarizerModel, c.SessionCount())
	for i := range sums {
		sums[i] = contextguardtest.NewSummarizerModel(contextguardtest.SummarizerConfig{})
		if c.Fault != nil {
			sums[i].InjectFaultFrom(1, *c.Fault)
		}
		g.Add(conformanceAgent(i), sums[i], opts...)
	}
	plugins := g.PluginConfig()

	results := make([]*contextguardtest.Result, c.SessionCount())
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() {
			res, err := contextguardtest.Run(t.Context(), c.SessionScenario(i), contextguardtest.RunConfig{
				Plugins: plugins, Summarizer: sums[i], AgentName: conformanceAgent(i), SessionID: fmt.Sprintf("%s-%d", sc.FullName(), i),
			})
			if assert.NoError(t, err) {
				results[i] = res
			}
		})
	}
	wg.Wait()
	calls := 0
	for i, res := range results {
		require.NotNil(t, res)
		assert.Empty(t, c.Violations(res), res.String())
		calls += sums[i].Calls()
	}
	row := coretest.NewConformanceRow("v1", c, int(compactions.Load()), calls, results)
	assert.Positive(t, row.Compactions, "the case compacts")
	t.Log(row)
	return row
}

// conformanceAgent names the agent of a case's session i.
func conformanceAgent(i int) string { return fmt.Sprintf("assistant_%d", i) }

// sortedRows orders the table as ConformanceCases does.
func sortedRows(rows []coretest.ConformanceRow) []coretest.ConformanceRow {
	var out []coretest.ConformanceRow
	for _, c := range coretest.ConformanceCases() {
		for _, r := range rows {
			if r.Case == c.Name {
				out = append(out, r)
			}
		}
	}
	return out
}
