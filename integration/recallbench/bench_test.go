package recallbench

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/adk-contextguard/contextguard/integration/costbench"
)

var tracesFlag = flag.String("traces", "", "folder of recorded agent sessions (default: CONTEXTGUARD_TRACES, else ../shared/agent-traces beside the repository root)")

// tracesDir is where the sessions are read from.
func tracesDir() string {
	if *tracesFlag != "" {
		return *tracesFlag
	}
	if d := os.Getenv("CONTEXTGUARD_TRACES"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "..", "shared", "agent-traces")
}

// BenchmarkRecallOnRealSessions replays every session at each
// configuration and at two windows that compact it (Windows), asks the
// drawn queries through the runner, and prints the table (README.md,
// Developing). Without the sessions it is skipped, and fails in CI.
func BenchmarkRecallOnRealSessions(b *testing.B) {
	traces, err := costbench.LoadTraces(tracesDir())
	if err == nil && len(traces) == 0 {
		err = os.ErrNotExist
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			b.Fatalf("recall benchmark: no recorded sessions in %s: %v", tracesDir(), err)
		}
		msg := fmt.Sprintf("recall benchmark: no recorded sessions in %s (%v); set -traces or CONTEXTGUARD_TRACES", tracesDir(), err)
		fmt.Println(msg) // go test shows a benchmark's skip only with -v
		b.Skip(msg)
	}
	var rows []Row
	total := Row{Name: "total"}
	for b.Loop() {
		rows, total = rows[:0], Row{Name: "total"}
		for _, tr := range traces {
			row := Row{Name: tr.File}
			for _, w := range Windows(tr) {
				for _, cfg := range Configs() {
					run, err := Replay(context.Background(), tr, cfg, w)
					require.NoError(b, err)
					for _, e := range run.Errors {
						b.Logf("%s %s %d: %v", tr.File, cfg.Name, w, e)
					}
					row.add(run)
					if os.Getenv("CONTEXTGUARD_RECALL_MISSES") != "" {
						printMisses(run)
					}
					total.add(run)
				}
			}
			rows = append(rows, row)
		}
	}
	fmt.Printf("\nRecall on %d recorded sessions (query rule: integration/recallbench/queries.go, seed %d); answer tokens as the guard counts them\n\n%s\n",
		len(traces), Seed, Table(append(rows, total)))
	b.ReportMetric(ratio(total.Top1, total.Queries), "top1")
	b.ReportMetric(ratio(total.Top3, total.Queries), "top3")
	b.ReportMetric(float64(total.Over), "over-budget")
	b.ReportMetric(float64(quantile(total.Latencies, 0.5).Microseconds())/1000, "median-ms")
	if total.Over > 0 {
		b.Errorf("%d answers over their budget as the guard counts them", total.Over)
	}
}

func ratio(n, d int) float64 {
	if d == 0 {
		return 0
	}
	return float64(n) / float64(d)
}

// printMisses prints the answers of run whose query missed the first
// excerpt (CONTEXTGUARD_RECALL_MISSES=1), with the rank it got (0: not on
// the page): what to look at when a change moves the table.
func printMisses(run *Run) {
	for _, a := range run.Answers {
		if rk := rank(a.Query, a.Text); rk != 1 {
			fmt.Printf("=== MISS rank %d %s %s %d %s query %q line %q call %q\n%s\n\n", rk, run.Session, run.Config, run.Window, a.Query.Kind, a.Query.Text, a.Query.Line, a.Query.CallID, a.Text)
		}
	}
}
