package costbench

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tracesFlag is the folder of the recorded sessions; CONTEXTGUARD_TRACES
// when the flag is not given, else the shared folder beside the repository
// root (this package is two levels below it).
var tracesFlag = flag.String("traces", "", "folder of the recorded agent sessions (default $CONTEXTGUARD_TRACES, else ../shared/agent-traces beside the repository root)")

// maxRequestsFlag caps the model calls replayed per session (0: none).
var maxRequestsFlag = flag.Int("max-requests", 0, "replay at most this many model calls of each session (0: all)")

// sessionsFlag adds a table per configuration with a row per session.
var sessionsFlag = flag.Bool("sessions", false, "also print each configuration's sessions, one row each")

// defaultTraces is the shared traces folder seen from this package.
var defaultTraces = filepath.Join("..", "..", "..", "shared", "agent-traces")

// tracesDir returns the folder of the recorded sessions.
func tracesDir() string {
	if *tracesFlag != "" {
		return *tracesFlag
	}
	if d := os.Getenv("CONTEXTGUARD_TRACES"); d != "" {
		return d
	}
	return defaultTraces
}

// loadTraces returns the recorded sessions. Without them the benchmark
// fails in CI, which always has them, and is skipped elsewhere.
func loadTraces(b *testing.B) []*Trace {
	b.Helper()
	dir := tracesDir()
	traces, err := LoadTraces(dir)
	if err == nil && len(traces) == 0 {
		err = fmt.Errorf("no *.json session in %s", dir)
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			b.Fatalf("the recorded agent sessions are missing (%v): CI must provide ../shared/agent-traces beside the repository root, or set CONTEXTGUARD_TRACES", err)
		}
		// Printed as well: go test shows a benchmark's skip only with -v.
		msg := fmt.Sprintf("cost benchmark skipped: no recorded agent sessions (%v); set -traces or CONTEXTGUARD_TRACES to their folder", err)
		fmt.Println(msg)
		b.Skip(msg)
	}
	return traces
}

// BenchmarkCostOnRealSessions replays every recorded session at every
// configuration of Configs and prints the table (`make cost`). It measures
// the guard's effect on a provider's prompt cache, not time: run it once
// (-benchtime 1x).
func BenchmarkCostOnRealSessions(b *testing.B) {
	traces := loadTraces(b)
	requests := 0
	for _, tr := range traces {
		tr.Truncate(*maxRequestsFlag)
		requests += tr.Requests()
	}
	configs := Configs()
	start := time.Now()
	var rows []Row
	var perSession [][]Row
	for b.Loop() {
		rows, perSession = replayAll(b, traces, configs)
	}
	fmt.Printf("\nCost on %d recorded sessions (%d model calls with no guard), o200k tokens; replayed in %s\n\n",
		len(traces), requests, time.Since(start).Round(time.Second))
	require.NoError(b, WriteTable(os.Stdout, rows))
	fmt.Println()
	fmt.Printf("Every content accounted for at every later request; every compaction's request smaller than ADK's\n\n")
	require.NoError(b, WriteAccounting(os.Stdout, rows))
	fmt.Println()
	if os.Getenv("CI") == "true" {
		for _, r := range rows {
			if r.Accounting.Failed() {
				b.Fatalf("%s %s: %d contents lost, %d compaction events without a smaller request (see above)",
					r.Config.Name, windowName(r.Config.Window), r.Accounting.Lost, len(r.Accounting.Unshrunk))
			}
		}
	}
	if *sessionsFlag {
		for _, sessions := range perSession {
			require.NoError(b, WriteTable(os.Stdout, sessions))
			fmt.Println()
		}
	}
}

// replayAll replays every trace at every configuration, on as many
// goroutines as the machine has cores, and sums each configuration's
// sessions; it also returns each configuration's rows per session.
func replayAll(b *testing.B, traces []*Trace, configs []Config) ([]Row, [][]Row) {
	type job struct{ c, t int }
	jobs := make(chan job)
	stats := make([][]Stats, len(configs))
	accounts := make([][]Accounting, len(configs))
	for c := range stats {
		stats[c] = make([]Stats, len(traces))
		accounts[c] = make([]Accounting, len(traces))
	}
	errs := make(chan error, len(configs)*len(traces))
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for j := range jobs {
				s, err := Replay(context.Background(), traces[j.t], configs[j.c])
				if err != nil {
					errs <- err
					continue
				}
				for _, e := range s.Errors {
					b.Logf("%s %s: %v", configs[j.c].Name, windowName(configs[j.c].Window), e)
				}
				stats[j.c][j.t] = s.Stats(configs[j.c].Window)
				acc := s.Account()
				acc.Named(traces[j.t].File)
				accounts[j.c][j.t] = acc
			}
		})
	}
	for c := range configs {
		for t := range traces {
			jobs <- job{c, t}
		}
	}
	close(jobs)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(b, err)
	}
	rows := make([]Row, len(configs))
	perSession := make([][]Row, len(configs))
	for c, cfg := range configs {
		rows[c].Config = cfg
		for t, s := range stats[c] {
			rows[c].Stats.Add(s)
			rows[c].Accounting.Add(accounts[c][t])
			one := cfg
			one.Name += " / " + traces[t].File
			perSession[c] = append(perSession[c], Row{Config: one, Stats: s, Accounting: accounts[c][t]})
		}
	}
	return rows, perSession
}

// handMadeTrace is a two-turn session of a shell agent whose outputs are
// large enough that an 8k window compacts.
func handMadeTrace(t *testing.T) *Trace {
	t.Helper()
	out := strings.Repeat("drwxr-xr-x 2 user user 4096 Jan  1 00:00 some-directory-name\n", 100)
	data := fmt.Sprintf(`{"system": "You are a shell agent. Use {braces} freely.",
 "tools": [{"name": "bash", "description": "Run a command.", "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}}}],
 "turns": [
  {"user": "List the files, please.", "steps": [
    {"text": "Listing.", "calls": [{"id": "c1", "name": "bash", "args": {"cmd": "ls -l"}, "output": %[1]q}]},
    {"text": "", "calls": [{"id": "c1", "name": "bash", "args": "ls -la", "output": %[1]q}, {"id": "", "name": "grep", "args": {}, "output": "none"}]}
  ], "final": "Here they are."},
  {"user": "And again, the long way.", "steps": [
    {"text": "Again.", "calls": [{"id": "c3", "name": "bash", "args": {"cmd": "ls -lR"}, "output": %[1]q}]},
    {"text": "Once more.", "calls": [{"id": "c4", "name": "bash", "args": {"cmd": "ls -lR /"}, "output": %[1]q}]}
  ], "final": ""}
 ]}`, out)
	tr, err := ParseTrace([]byte(data))
	require.NoError(t, err)
	tr.File = "hand-made.json"
	return tr
}

func TestReplay_PlaysTheRecordedStepsThroughTheRunner(t *testing.T) {
	tr := handMadeTrace(t)
	s, err := Replay(context.Background(), tr, Config{Name: "default", Window: 1_000_000})
	require.NoError(t, err)
	require.Empty(t, s.Errors)
	require.Len(t, s.Requests, tr.Requests(), "one agent request per step and per final text, nothing summarized")
	for i, r := range s.Requests {
		assert.False(t, r.Summarizer, "request %d", i)
		assert.False(t, r.LostUser, "request %d", i)
	}
	// Each request extends the previous one: ADK rebuilds the same history
	// and appends the step and its results.
	for i := 1; i < len(s.Requests); i++ {
		assert.Equal(t, s.Requests[i-1].Tokens, SharedPrefix(&s.Requests[i-1], &s.Requests[i]), "request %d", i)
	}
	st := s.Stats(1_000_000)
	assert.Zero(t, st.Rewrites)
	assert.Zero(t, st.Overflows)
}

func TestReplay_SummarizerRequestsAreTold(t *testing.T) {
	tr := handMadeTrace(t)
	for _, cfg := range []Config{
		{Name: "default", Window: 8_000},
		{Name: "sliding + pruning", Window: 8_000, Options: Configs()[2].Options},
	} {
		t.Run(cfg.Name, func(t *testing.T) {
			s, err := Replay(context.Background(), tr, cfg)
			require.NoError(t, err)
			require.Empty(t, s.Errors)
			st := s.Stats(cfg.Window)
			assert.Positive(t, st.Compactions)
			assert.Positive(t, st.SummarizerRequests, "the guard's summarizer called the agent's model")
			assert.Equal(t, tr.Requests(), st.AgentRequests, "every recorded step played once")
			assert.Zero(t, st.LostUser)
			assert.LessOrEqual(t, st.Floor[0], st.Cost[0])
		})
	}
}

func TestTrace_Truncate(t *testing.T) {
	for _, tc := range []struct {
		max, want int
	}{{0, 6}, {100, 6}, {6, 6}, {5, 5}, {3, 3}, {2, 2}, {1, 1}} {
		tr := handMadeTrace(t)
		tr.Truncate(tc.max)
		assert.Equal(t, tc.want, tr.Requests(), "max %d", tc.max)
	}
}

func TestParseTrace_UniqueIDsAndArgs(t *testing.T) {
	tr := handMadeTrace(t)
	ids := map[string]bool{}
	for _, turn := range tr.Turns {
		for _, st := range turn.Steps {
			for _, c := range st.Calls {
				assert.False(t, ids[c.ID], "duplicate %q", c.ID)
				ids[c.ID] = true
			}
		}
	}
	assert.Equal(t, map[string]any{"cmd": "ls -l"}, tr.Turns[0].Steps[0].Calls[0].ArgsMap())
	assert.Equal(t, map[string]any{"input": "ls -la"}, tr.Turns[0].Steps[1].Calls[0].ArgsMap())
	_, err := ParseTrace([]byte(`{"turns": 3}`))
	require.Error(t, err)
}
