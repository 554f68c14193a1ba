package plugintest

// The stress matrix (ARCHITECTURE.md, Tests): every scenario of the earlier guard's matrix (ARCHITECTURE.md, Origins) by its name, in
// two ground truths, through a real runner with the guard installed, plus
// scenarios for each bug of the earlier guard and a deliberately broken
// guard that proves the assertions can fail.
//
// The 91 TestStress_* / TestBrutal_* functions are generated into
// compaction_strategy_multiturn_gen_test.go from coretest.SeedMatrix;
// TestMatrixCoversSeedRows checks that they match the matrix exactly.
//
// `make stress` runs the matrix without -race and prints a table of every
// run (CONTEXTGUARD_STRESS_TABLE=1, printed by TestMain).

//go:generate go run ../matrixgen -o compaction_strategy_multiturn_gen_test.go

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/plugin"
	"google.golang.org/adk/runner"
	"google.golang.org/genai"

	. "github.com/adk-contextguard/contextguard"
	"github.com/adk-contextguard/contextguard/contextguardtest"
	"github.com/adk-contextguard/contextguard/contextguardtest/o200k"
	"github.com/adk-contextguard/contextguard/core/coretest"
)

// stressTableEnv makes TestMain print the table of matrix runs.
const stressTableEnv = "CONTEXTGUARD_STRESS_TABLE"

func TestMain(m *testing.M) {
	code := m.Run()
	if os.Getenv(stressTableEnv) != "" {
		stressRuns.print(os.Stdout)
	}
	os.Exit(code)
}

// quietLogger discards the guard's logs in the matrix.
var quietLogger = func() *slog.Logger {
	if os.Getenv("CONTEXTGUARD_MATRIX_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}()

// ---------------------------------------------------------------------------
// Ground truths
// ---------------------------------------------------------------------------

// matrixMode is one ground truth the matrix is played against.
type matrixMode struct {
	name string
	// counter returns the ground truth for a scenario; nil means the kit's
	// default, SeedCounter(TokenRatio) switching to LateTokenRatio from
	// UsageFromTurn.
	counter func(contextguardtest.Scenario) contextguardtest.Counter
}

var (
	// modeSeed is the seeds' definition: serialized bytes/4 x the row's ratio.
	modeSeed = matrixMode{name: "seed"}
	// modeTokenizer is exact o200k x 1.2 (a Claude-like provider factor).
	modeTokenizer = tokenizerMode("tokenizer", 1.2)
	// modeTokenizerGPT is exact o200k x 1.0 (a GPT-like provider).
	modeTokenizerGPT = tokenizerMode("tokenizer_1.0", 1.0)
)

func tokenizerMode(name string, factor float64) matrixMode {
	return matrixMode{name: name, counter: func(contextguardtest.Scenario) contextguardtest.Counter {
		return o200k.Counter(factor)
	}}
}

// groundTruth is the counter of mode for sc, resolved, for the probe and
// for sizing payloads. In seed mode a row whose ratio switches late is
// measured with the larger ratio, which favours the guard when an
// ErrIrreducible is judged.
func (m matrixMode) groundTruth(sc contextguardtest.Scenario) contextguardtest.Counter {
	if m.counter != nil {
		return m.counter(sc)
	}
	return contextguardtest.SeedCounter(max(sc.TokenRatio, sc.LateTokenRatio))
}

// ---------------------------------------------------------------------------
// The seed rows
// ---------------------------------------------------------------------------

var seedRows = sync.OnceValue(func() map[string]contextguardtest.Scenario {
	rows := map[string]contextguardtest.Scenario{}
	for _, sc := range coretest.SeedMatrix() {
		rows[sc.FullName()] = sc
	}
	return rows
})

// seedRow returns the matrix row named fullName (e.g.
// "Stress_200k_NormalConversation").
func seedRow(t testing.TB, fullName string) contextguardtest.Scenario {
	t.Helper()
	sc, ok := seedRows()[fullName]
	if !ok {
		t.Fatalf("no row %q in coretest.SeedMatrix()", fullName)
	}
	return sc
}

// runSeedRow is the body of every generated TestStress_* / TestBrutal_*
// function: the row in seed mode and in tokenizer mode, in parallel, with
// the guard configured as the README recommends for production: a recovery
// model (the agent's own model: here a second scripted model playing the
// same scenario against the same ground truth) answers a provider overflow
// from a compacted request, so an overflow the estimate could not foresee
// (no usage metadata and a tokenizer 2-3x heavier than the estimate, images
// charged by their base64 length) is recovered rather than surfaced.
// Recovered overflows are counted in the stress table.
func runSeedRow(t *testing.T, fullName string) {
	t.Parallel()
	sc := seedRow(t, fullName)
	for _, run := range matrixRuns {
		t.Run(run.name, func(t *testing.T) {
			t.Parallel()
			recovery := recoveryModelFor(sc, run.mode)
			opts := append([]AgentOption{WithRecoveryModel(recovery)}, run.opts...)
			out := runScenario(t, sc, scenarioRun{mode: run.mode, label: run.name, record: true, agentOpts: opts, fillBudget: run.fillBudget})
			assert.Empty(t, out.violations(), out.res.String())
			// A recovered request over the window is allowed only for a turn
			// that ended in ErrIrreducible, which violations has checked
			// against the ground truth (the user's request alone does not
			// fit, and the provider said so only when it saw it).
			irreducible := 0
			for _, err := range out.res.Errors {
				if errors.Is(err, ErrIrreducible) {
					irreducible++
				}
			}
			over := 0
			for _, rec := range recovery.Requests() {
				if rec.Tokens > sc.Window {
					over++
				}
				assert.NoError(t, rec.PairError, "recovered request %d", rec.Index)
			}
			assert.LessOrEqual(t, over, irreducible, "recovered requests over the window")
		})
	}
}

// matrixSlidingTurns is the sliding window's turn budget in the matrix:
// small enough that most rows compact by turns as well as by tokens.
const matrixSlidingTurns = 6

// matrixTailFraction is the tail-retention strategy's share of the window
// in the matrix: the newest contents up to 30% of it are kept verbatim.
const matrixTailFraction = 0.3

// matrixRuns are the ways every row is played: the threshold strategy and
// tail retention against both ground truths, and the sliding window
// against the seeds'.
// Each run asserts every violation (no overflow surfaced, no non-shrinking
// compaction, no marker neither sent nor summarized, pairs, the user's
// latest message).
var matrixRuns = []struct {
	name string
	mode matrixMode
	opts []AgentOption
	// fillBudget plays the summarizer as one that writes as long a summary
	// as it is asked for (contextguardtest.SummarizerConfig.FillBudget).
	fillBudget bool
}{
	{modeSeed.name, modeSeed, nil, false},
	{modeTokenizer.name, modeTokenizer, nil, false},
	{"sliding_" + modeSeed.name, modeSeed, []AgentOption{WithSlidingWindow(matrixSlidingTurns)}, true},
	{"tail_" + modeSeed.name, modeSeed, []AgentOption{WithTailRetention(matrixTailFraction)}, true},
	{"tail_" + modeTokenizer.name, modeTokenizer, []AgentOption{WithTailRetention(matrixTailFraction)}, true},
}

// matrixAgentModel is the name of the matrix's agent model (the kit's
// scripted model's default).
const matrixAgentModel = "scripted-model"

// cachedFormRows are the rows played with the summarizer on the agent's own
// model (TestMatrix_CachedSummary): small and large windows, tools and
// repeated compactions, each with whether every run of it uses the cached
// form at least once (the others mostly overshoot the trigger by more than
// the summary's room: every step past the window at 8k). Stress_200k_ToolHeavy's
// 10k-20k tool results push the request past that room too; its summaries
// are asked over the previous request (summarizer_cached.go).
var cachedFormRows = []struct {
	name   string
	cached bool
}{
	{"Stress_8k_NormalConversation", true}, {"Stress_8k_SmallToolCalls", true}, {"Stress_8k_RepeatedCompactions", true},
	{"Stress_200k_ToolHeavy", true}, {"Stress_200k_RepeatedCompactions", false}, {"Brutal_8k_CompactionEveryStep", false},
}

// TestMatrix_CachedSummary: a few rows of the matrix with the summarizer on
// the agent's own model, so the summary is asked as the agent's request
// plus an instruction wherever it fits, with the threshold strategy and,
// summarizing as long as asked, the sliding window and tail retention:
// every assertion of the matrix holds (no marker neither sent nor
// summarized, no overflow, pairs, the user's latest message), and the
// cached form is used.
func TestMatrix_CachedSummary(t *testing.T) {
	for _, row := range cachedFormRows {
		sc := seedRow(t, row.name)
		for _, run := range []struct {
			name       string
			opts       []AgentOption
			fillBudget bool
		}{
			{"threshold", nil, false},
			{"sliding", []AgentOption{WithSlidingWindow(matrixSlidingTurns)}, true},
			{"tail", []AgentOption{WithTailRetention(matrixTailFraction)}, true},
		} {
			t.Run(row.name+"/"+run.name, func(t *testing.T) {
				t.Parallel()
				opts := append([]AgentOption{WithRecoveryModel(recoveryModelFor(sc, modeSeed))}, run.opts...)
				out := runScenario(t, sc, scenarioRun{mode: modeSeed, agentOpts: opts, fillBudget: run.fillBudget, sharedModel: true})
				assert.Empty(t, out.violations(), out.res.String())
				tally := out.tally.get()
				t.Logf("%d compactions, %d in the cached form, %d summarizer calls (%d rolling)", tally.compactions, tally.cached, tally.calls, tally.rolling)
				if row.cached {
					assert.Positive(t, tally.cached, "the cached form is used")
				}
			})
		}
	}
}

// recoveryModelFor is a scripted model playing sc against mode's ground
// truth, to serve as the guard's recovery model.
func recoveryModelFor(sc contextguardtest.Scenario, mode matrixMode) *contextguardtest.ScriptedModel {
	return contextguardtest.NewScriptedModel(contextguardtest.ScriptConfig{
		Window:          sc.Window,
		Counter:         mode.groundTruth(sc),
		Plan:            sc.TurnPlan,
		NoUsage:         sc.NoUsageMetadata,
		UsageFromTurn:   sc.UsageFromTurn,
		ErrorStyle:      sc.ErrorStyle,
		ProviderCallIDs: sc.ProviderCallIDs,
		Seed:            sc.Seed,
	})
}

// ---------------------------------------------------------------------------
// Running a scenario
// ---------------------------------------------------------------------------

// scenarioRun says how to play a scenario.
type scenarioRun struct {
	mode matrixMode
	// guard selects the guard under test: guardOn (default), guardOff (no
	// plugin at all) or guardBlind (window set absurdly high).
	guard guardKind
	// agentOpts are extra options for the guarded agent.
	agentOpts []AgentOption
	// guardOpts are extra options for the guard.
	guardOpts []Option
	// fault, when set, is injected into every summarizer call.
	fault *coretest.Fault
	// record adds the run to the stress table.
	record bool
	// label names the run in the stress table (default: the mode's name).
	label string
	// reportUsage replaces the model's prompt-token counts
	// (contextguardtest.RunConfig.ReportUsage).
	reportUsage func(index, tokens int) int
	// fillBudget makes the summarizer write summaries as long as asked
	// (contextguardtest.SummarizerConfig.FillBudget).
	fillBudget bool
	// sharedModel names the summarizer's model as the agent's (the kit's
	// scripted model), so the guard asks for the summary in the cached
	// form (the agent's request plus an instruction) when it fits.
	sharedModel bool
	// summaryTimeout, when > 0, is the guard's WithSummaryTimeout. The
	// guard runs on a fake clock that only a summarizer call that blocks
	// (FaultSlow, FaultHang) moves, by summaryTimeout, once it has
	// recorded its input: the timeout fires then, whatever the machine's
	// load.
	summaryTimeout time.Duration
}

// matrixSummaryTimeout is the summary timeout of the matrix's blocking
// faults. An hour: only the fake clock reaches it, never a real timer.
const matrixSummaryTimeout = time.Hour

// summarizerReleaseBound is how long a run waits, at its end, for the
// summarizer calls the guard stopped waiting for to return once released:
// far beyond their return, a guard against a test that would hang.
const summarizerReleaseBound = 20 * time.Second

type guardKind int

const (
	guardOn guardKind = iota
	guardOff
	guardBlind
)

// blindWindow is the window of a guard that never triggers.
const blindWindow = 10_000_000

// scenarioOutcome is what a run produced.
type scenarioOutcome struct {
	res   *contextguardtest.Result
	sum   *contextguardtest.SummarizerModel
	probe *probe
	// minSummarizerCalls is the least number of summarizer calls expected
	// (the kit's estimate in seed mode).
	minSummarizerCalls int
	// tally adds up the guard's compaction events.
	tally eventTally
}

// eventTally adds up the guard's compaction events (recovery compactions
// included), safely from the hook.
type eventTally struct {
	mu sync.Mutex
	compactionTally
}

// compactionTally is what the stress table reports of a run's compactions.
type compactionTally struct {
	compactions, calls, rolling, discarded int
	// cached counts the compactions whose summary was asked in the cached
	// form (CompactionEvent.SummaryForm).
	cached int
	// timeouts counts the compactions that took the fallback because the
	// summary timeout passed.
	timeouts int
	// ran counts the compactions by how they ran (CompactionEvent.Ran).
	ran map[CompactionRun]int
	// allCalls is every summarizer call of the run, the speculative ones
	// no compaction used included; dropped and wasted count the prepared
	// summaries dropped (the history changed, another compaction came
	// first) and those a compaction could not use (the guard's log).
	allCalls, dropped, wasted int
	// fillsWindow marks a row whose single tool result or user message
	// fills the window: its compactions run inline by necessity;
	// inWindowRows and inlineInWindowRows count such rows' compactions
	// once tallies are added up (plus).
	fillsWindow                      bool
	inWindowRows, inlineInWindowRows int
	// window is a run's context window, 0 once tallies are added up;
	// byWindow counts the compactions of the rows that do not fill their
	// window by that window (plus).
	window   int
	byWindow coretest.WindowShare
	// inlineWhy counts the inline compactions of the rows that do not fill
	// the window by CompactionEvent.InlineReason ("": a compaction for
	// another reason than tokens).
	inlineWhy map[InlineReason]int
}

func (t *eventTally) add(e CompactionEvent) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.compactions++
	if t.ran == nil {
		t.ran = map[CompactionRun]int{}
	}
	t.ran[e.Ran]++
	if e.Ran == RanInline {
		if t.inlineWhy == nil {
			t.inlineWhy = map[InlineReason]int{}
		}
		t.inlineWhy[e.InlineReason]++
	}
	t.calls += e.SummarizerCalls
	t.rolling += e.RollingCalls
	if e.Discarded {
		t.discarded++
	}
	if e.SummaryForm == SummaryFormCached {
		t.cached++
	}
	if e.Fallback && strings.Contains(e.FallbackReason, "summary timeout") {
		t.timeouts++
	}
}

func (t *eventTally) get() compactionTally {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.compactionTally
	c.ran = maps.Clone(c.ran)
	c.inlineWhy = maps.Clone(c.inlineWhy)
	return c
}

// finish records what the run's end knows: every summarizer call, and
// what became of the prepared summaries.
func (t *eventTally) finish(allCalls int, logs *preparedLog) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.allCalls = allCalls
	t.dropped, t.wasted = int(logs.dropped.Load()), int(logs.wasted.Load())
}

// preparedLog counts the guard's log lines about prepared summaries
// (core's prepared_summary.go), passing every record on to next.
type preparedLog struct {
	next            slog.Handler
	dropped, wasted *atomic.Int64
}

func newPreparedLog(next slog.Handler) *preparedLog {
	return &preparedLog{next: next, dropped: new(atomic.Int64), wasted: new(atomic.Int64)}
}

func (h *preparedLog) Enabled(context.Context, slog.Level) bool { return true }

func (h *preparedLog) Handle(ctx context.Context, r slog.Record) error {
	switch {
	case strings.HasPrefix(r.Message, "contextguard: prepared summary dropped"):
		h.dropped.Add(1)
	case strings.HasPrefix(r.Message, "contextguard: prepared summary not used"):
		h.wasted.Add(1)
	}
	if h.next.Enabled(ctx, r.Level) {
		return h.next.Handle(ctx, r)
	}
	return nil
}

func (h *preparedLog) WithAttrs(as []slog.Attr) slog.Handler {
	return &preparedLog{next: h.next.WithAttrs(as), dropped: h.dropped, wasted: h.wasted}
}

func (h *preparedLog) WithGroup(name string) slog.Handler {
	return &preparedLog{next: h.next.WithGroup(name), dropped: h.dropped, wasted: h.wasted}
}

// runScenario plays sc through a real runner with a fresh guard.
func runScenario(t *testing.T, sc contextguardtest.Scenario, run scenarioRun) *scenarioOutcome {
	t.Helper()
	truth := run.mode.groundTruth(sc)
	// The summarizer's own counter stays the kit's cheap default: its
	// records' token counts are not asserted, and counting every transcript
	// exactly would dominate the tokenizer-mode runs.
	clock := contextguardtest.NewFakeClock(time.Time{})
	sumCfg := contextguardtest.SummarizerConfig{FillBudget: run.fillBudget,
		OnBlocked: func() { clock.Advance(cmp.Or(run.summaryTimeout, DefaultSummaryTimeout)) }}
	if run.sharedModel {
		sumCfg.Name = matrixAgentModel
	}
	sum := contextguardtest.NewSummarizerModel(sumCfg)
	if run.fault != nil {
		sum.InjectFaultFrom(1, *run.fault)
	}
	// Calls the guard stopped waiting for are released at the end, and
	// must then return: no goroutine outlives the run.
	t.Cleanup(func() {
		sum.Release()
		ctx, cancel := context.WithTimeout(context.Background(), summarizerReleaseBound)
		defer cancel()
		assert.NoError(t, sum.Wait(ctx), "the summarizer calls return once released")
	})
	pr := newProbe(truth)
	out := &scenarioOutcome{sum: sum, probe: pr}
	pp, err := plugin.New(plugin.Config{Name: "matrix-probe", BeforeModelCallback: pr.beforeModel})
	require.NoError(t, err)

	cfg := contextguardtest.RunConfig{Summarizer: sum, ReportUsage: run.reportUsage}
	if run.mode.counter != nil {
		cfg.Counter = run.mode.counter(sc)
	}
	var g *ContextGuard
	logs := newPreparedLog(quietLogger.Handler())
	if run.guard != guardOff {
		gopts := append([]Option{WithLogger(slog.New(logs)), WithClock(clock),
			WithOnCompaction(func(_ context.Context, e CompactionEvent) { out.tally.add(e) })}, run.guardOpts...)
		g = New(NewCrushRegistry(WithRegistryLogger(quietLogger)), gopts...)
		window := sc.Window
		if run.guard == guardBlind {
			window = blindWindow
		}
		opts := append([]AgentOption{WithMaxTokens(window)}, run.agentOpts...)
		if run.summaryTimeout > 0 {
			opts = append(opts, WithSummaryTimeout(run.summaryTimeout))
		}
		g.Add("assistant", sum, opts...)
		guard := g.PluginConfig()
		cfg.Plugins = runner.PluginConfig{Plugins: append([]*plugin.Plugin{pp}, guard.Plugins...)}
	} else {
		cfg.Plugins = runner.PluginConfig{Plugins: []*plugin.Plugin{pp}}
	}

	start := time.Now()
	res, err := contextguardtest.Run(context.Background(), sc, cfg)
	require.NoError(t, err, "scenario %s could not be run", sc.FullName())
	if g != nil {
		// A summary prepared at the run's last tool step may still be
		// running: once the guard is closed, none is, and every call is
		// counted.
		require.NoError(t, g.Close())
		res.SummarizerCalls = sum.Calls()
	}
	out.tally.finish(sum.Calls(), logs)
	out.tally.fillsWindow, out.tally.window = sc.FillsWindow(), sc.Window
	end := time.Now()
	t.Log(res.String())
	out.res = res
	if run.mode.counter == nil {
		out.minSummarizerCalls = sc.MinSummarizerCalls
	}
	if run.record {
		stressRuns.add(stressRun{scenario: sc.FullName(), mode: cmp.Or(run.label, run.mode.name), res: res, tally: out.tally.get(), start: start, end: end, failed: len(out.violations()) > 0})
	}
	return out
}

// probe is a plugin installed just before the guard: it hands every request
// as ADK built it to the matrix's ground-truth probe (coretest.Probe).
type probe struct{ *coretest.Probe }

// newProbe measures with counter, the run's ground truth.
func newProbe(counter contextguardtest.Counter) *probe {
	return &probe{coretest.NewProbe(func(contents []*genai.Content, config *genai.GenerateContentConfig) int {
		return counter.CountRequest(&model.LLMRequest{Contents: contents, Config: config})
	})}
}

func (p *probe) beforeModel(_ agent.CallbackContext, req *model.LLMRequest) (*model.LLMResponse, error) {
	if req != nil {
		p.Observe(req.Contents, req.Config)
	}
	return nil, nil
}

// ---------------------------------------------------------------------------
// What every scenario must satisfy
// ---------------------------------------------------------------------------

// violations lists every property of the matrix (ARCHITECTURE.md, Tests)
// the run broke (coretest.MatrixRun); empty means the scenario passed. The
// matrix asserts it is empty; the broken-guard test asserts it is not.
func (o *scenarioOutcome) violations() []string {
	return coretest.MatrixRun{
		Result:             o.res,
		Probe:              o.probe.Probe,
		SummarizerCalls:    o.sum.Calls(),
		MinSummarizerCalls: o.minSummarizerCalls,
		Irreducible:        func(err error) bool { return errors.Is(err, ErrIrreducible) },
	}.Violations()
}

// violationsMatching returns the violations that contain substr.
func violationsMatching(vs []string, substr string) []string {
	var out []string
	for _, v := range vs {
		if strings.Contains(v, substr) {
			out = append(out, v)
		}
	}
	return out
}

// ---------------------------------------------------------------------------
// The stress table (make stress)
// ---------------------------------------------------------------------------

type stressRun struct {
	scenario, mode string
	res            *contextguardtest.Result
	tally          compactionTally
	start, end     time.Time
	failed         bool
}

type stressCollector struct {
	mu   sync.Mutex
	runs []stressRun
}

var stressRuns = &stressCollector{}

func (c *stressCollector) add(r stressRun) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r.res = &contextguardtest.Result{ // keep the aggregates, drop the records
		Scenario: r.res.Scenario, Window: r.res.Window, Turns: r.res.Turns, Steps: r.res.Steps,
		SummarizerCalls: r.res.SummarizerCalls, CompactionSteps: r.res.CompactionSteps,
		NonShrinkingCompactions: r.res.NonShrinkingCompactions,
		MaxRealTokens:           r.res.MaxRealTokens, MaxUtilization: r.res.MaxUtilization,
		MeanUtilizationAtTrigger: r.res.MeanUtilizationAtTrigger,
		OverflowsRejected:        r.res.OverflowsRejected, OverflowsSurfaced: r.res.OverflowsSurfaced,
		OverflowsRecovered: r.res.OverflowsRecovered, Duration: r.res.Duration,
	}
	c.runs = append(c.runs, r)
}

// print writes the table of runs, the matrix's wall time and the five
// slowest runs.
func (c *stressCollector) print(w io.Writer) {
	c.mu.Lock()
	runs := slices.Clone(c.runs)
	c.mu.Unlock()
	if len(runs) == 0 {
		fmt.Fprintln(w, "stress: no matrix runs recorded")
		return
	}
	slices.SortFunc(runs, func(a, b stressRun) int {
		if n := strings.Compare(a.scenario, b.scenario); n != 0 {
			return n
		}
		return strings.Compare(a.mode, b.mode)
	})
	fmt.Fprintf(w, "\n%-52s %-12s %6s %5s %5s %11s %17s %7s %6s %9s %9s %s\n",
		"scenario", "mode", "steps", "comp", "summ", "inl/pre/btw", "max real/window", "util%", "trig%", "surf/rec", "time", "")
	first, last := runs[0].start, runs[0].end
	var failed, surfaced, recovered int
	tallies := map[string]compactionTally{}
	for _, r := range runs {
		res := r.res
		mark := ""
		if r.failed {
			mark = "FAIL"
			failed++
		}
		surfaced += res.OverflowsSurfaced
		recovered += res.OverflowsRecovered
		tallies[r.mode] = tallies[r.mode].plus(r.tally)
		ran := fmt.Sprintf("%d/%d/%d", r.tally.ran[RanInline], r.tally.ran[RanPrepared], r.tally.ran[RanBetweenTurns])
		fmt.Fprintf(w, "%-52s %-12s %6d %5d %5d %11s %8d/%-8d %6.1f%% %5.1f%% %4d/%-4d %9s %s\n",
			res.Scenario, r.mode, res.Steps, res.CompactionSteps, res.SummarizerCalls, ran, res.MaxRealTokens, res.Window,
			100*res.MaxUtilization, 100*res.MeanUtilizationAtTrigger,
			res.OverflowsSurfaced, res.OverflowsRecovered, r.end.Sub(r.start).Round(time.Millisecond), mark)
		if r.start.Before(first) {
			first = r.start
		}
		if r.end.After(last) {
			last = r.end
		}
	}
	fmt.Fprintf(w, "\n%d runs, %d failed, overflows surfaced %d, recovered %d; matrix wall time %s\n",
		len(runs), failed, surfaced, recovered, last.Sub(first).Round(time.Millisecond))
	// Per compaction (the guard's events, recovery compactions included):
	// every summarizer call, and those that asked again for the summary
	// that goes into the request (neither its first ask nor a piece of a
	// rolling summary).
	var all compactionTally
	report := func(name string, t compactionTally) {
		if t.compactions == 0 {
			return
		}
		again := t.calls - t.rolling - t.compactions
		fmt.Fprintf(w, "summarizer calls per compaction (%s): %d / %d = %.2f; rolling pieces %d, asked again %d (%.2f per compaction), discarded %d\n",
			name, t.calls, t.compactions, float64(t.calls)/float64(t.compactions), t.rolling, again,
			float64(again)/float64(t.compactions), t.discarded)
		inline, rest := t.ran[RanInline], t.compactions-t.inWindowRows
		fills := t.inlineWhy[InlineStepFillsWindow]
		fmt.Fprintf(w, "  ran (%s): inline %d, prepared %d, between_turns %d; inline %.1f%% (%.1f%% of %d outside the rows that fill the window; "+
			"%.1f%% of %d outside the steps that fill it too); "+
			"summarizer calls per compaction with speculative ones %d / %d = %.2f; prepared summaries dropped %d, not used %d\n",
			name, inline, t.ran[RanPrepared], t.ran[RanBetweenTurns], pct(inline, t.compactions),
			pct(inline-t.inlineInWindowRows, rest), rest, pct(inline-t.inlineInWindowRows-fills, rest-fills), rest-fills,
			t.allCalls, t.compactions, float64(t.allCalls)/float64(t.compactions), t.dropped, t.wasted)
		fmt.Fprintf(w, "  inline outside those rows (%s), why: %s\n", name, coretest.TallyText(inlineWhyOrder, t.inlineWhy, "not for tokens"))
		fmt.Fprintf(w, "  inline outside those rows (%s), by window: %s\n", name, t.byWindow)
	}
	for _, mode := range slices.Sorted(maps.Keys(tallies)) {
		t := tallies[mode]
		report(mode, t)
		all = all.plus(t)
	}
	report("all", all)
	slices.SortFunc(runs, func(a, b stressRun) int { return cmp.Compare(b.end.Sub(b.start), a.end.Sub(a.start)) })
	fmt.Fprintln(w, "slowest:")
	for _, r := range runs[:min(5, len(runs))] {
		fmt.Fprintf(w, "  %-52s %-12s %s\n", r.scenario, r.mode, r.end.Sub(r.start).Round(time.Millisecond))
	}
}

// ---------------------------------------------------------------------------
// Coverage of the seed matrix
// ---------------------------------------------------------------------------

// TestMatrixCoversSeedRows parses the package's test files and checks that
// the TestStress_* / TestBrutal_* functions are exactly the rows of
// coretest.SeedMatrix(), each running its own row.
func TestMatrixCoversSeedRows(t *testing.T) {
	want := map[string]bool{}
	stress, brutal := 0, 0
	for _, sc := range coretest.SeedMatrix() {
		require.False(t, want["Test"+sc.FullName()], "duplicate row %s", sc.FullName())
		want["Test"+sc.FullName()] = true
		switch sc.Prefix {
		case "Stress":
			stress++
		case "Brutal":
			brutal++
		}
	}
	assert.Equal(t, 42, stress, "Stress rows in the seed matrix")
	assert.Equal(t, 49, brutal, "Brutal rows in the seed matrix")

	files, err := filepath.Glob("*_test.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	got := map[string]bool{}
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !(strings.HasPrefix(fn.Name.Name, "TestStress_") || strings.HasPrefix(fn.Name.Name, "TestBrutal_")) {
				continue
			}
			require.False(t, got[fn.Name.Name], "%s declared twice", fn.Name.Name)
			got[fn.Name.Name] = true
			assert.Equal(t, strings.TrimPrefix(fn.Name.Name, "Test"), runSeedRowArg(fn), "%s (%s) must be exactly runSeedRow(t, its own row name)", fn.Name.Name, fset.Position(fn.Pos()))
		}
	}
	assert.Equal(t, sortedKeys(want), sortedKeys(got), "test functions and seed rows differ; run go generate")
}

// runSeedRowArg returns the row name a test function passes to runSeedRow,
// or "" when its body is anything else.
func runSeedRowArg(fn *ast.FuncDecl) string {
	if fn.Body == nil || len(fn.Body.List) != 1 {
		return ""
	}
	st, ok := fn.Body.List[0].(*ast.ExprStmt)
	if !ok {
		return ""
	}
	call, ok := st.X.(*ast.CallExpr)
	if !ok || len(call.Args) != 2 {
		return ""
	}
	if id, ok := call.Fun.(*ast.Ident); !ok || id.Name != "runSeedRow" {
		return ""
	}
	lit, ok := call.Args[1].(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return ""
	}
	s, err := strconv.Unquote(lit.Value)
	if err != nil {
		return ""
	}
	return s
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// TestMatrix_TokenizerFactor1 plays a few rows against exact o200k counts
// with a provider factor of 1.0 (a GPT-like provider), beside the matrix's
// 1.2.
func TestMatrix_TokenizerFactor1(t *testing.T) {
	t.Parallel()
	for _, name := range []string{
		"Stress_4k_WithSmallTools",
		"Stress_8k_NoUsageMetadata",
		"Stress_8k_CodingAgent",
		"Stress_8k_HeavyToolDefinitions",
		"Brutal_8k_ToolResponseBiggerThanWindow",
		"Brutal_4k_SequentialEscalatingSizes",
		"Brutal_200k_ToolDefinitionsDominateWindow",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			out := runScenario(t, seedRow(t, name), scenarioRun{mode: modeTokenizerGPT})
			assert.Empty(t, out.violations(), out.res.String())
		})
	}
}

// ---------------------------------------------------------------------------
// The deliberately broken guard
// ---------------------------------------------------------------------------

// TestMatrix_BrokenGuardIsDetected plays a few small-window rows with no
// guard and with a guard whose window is absurdly large, and checks that the
// very assertions the matrix makes fail: the suite can detect a guard that
// does not work.
func TestMatrix_BrokenGuardIsDetected(t *testing.T) {
	t.Parallel()
	rows := []string{
		"Stress_4k_NormalConversation",
		"Stress_8k_LongRunning_40Turns",
		"Stress_8k_RepeatedCompactions",
		"Brutal_8k_EveryTurnExceedsWindow",
		"Brutal_4k_PureToolStorm",
	}
	for _, kind := range []struct {
		name  string
		guard guardKind
	}{{"no_guard", guardOff}, {"window_10M", guardBlind}} {
		for _, name := range rows {
			t.Run(kind.name+"/"+name, func(t *testing.T) {
				t.Parallel()
				out := runScenario(t, seedRow(t, name), scenarioRun{mode: modeSeed, guard: kind.guard})
				vs := out.violations()
				assert.Positive(t, out.res.OverflowsSurfaced, "a broken guard must surface overflows: %s", out.res)
				assert.NotEmpty(t, violationsMatching(vs, "surfaced to the caller"), "the matrix's assertions must fail: %v", vs)
				if kind.guard == guardOff {
					assert.Zero(t, out.res.SummarizerCalls, "nothing summarizes without a guard")
				}
			})
		}
	}
}

// ---------------------------------------------------------------------------
// The bugs of the earlier guard (ARCHITECTURE.md, Origins)
// ---------------------------------------------------------------------------

// bugScenario is a scenario outside the seed matrix.
func bugScenario(name string, window, turns int, ratio float64, plan func(int) contextguardtest.TurnPlan) contextguardtest.Scenario {
	sc := contextguardtest.Scenario{Prefix: "Bug", Name: name, Window: window, Turns: turns, TokenRatio: ratio, Plan: plan}
	sc.Seed = int64(len(name))*7919 + int64(window) + int64(turns)
	return sc
}

// eachTurn gives every turn the same plan.
func eachTurn(p contextguardtest.TurnPlan) func(int) contextguardtest.TurnPlan {
	return func(int) contextguardtest.TurnPlan { return p }
}

// bothModes runs fn as a parallel subtest per ground truth.
func bothModes(t *testing.T, fn func(t *testing.T, mode matrixMode)) {
	for _, mode := range []matrixMode{modeSeed, modeTokenizer} {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			fn(t, mode)
		})
	}
}

// inlineOnly has every compaction run in the model call that needs it
// (WithBetweenTurns(BetweenTurnsOff)), for the tests of the earlier guard's
// bugs in that call's compaction (its trigger, its watermark, its summary
// injection), which count and measure compaction steps.
var inlineOnly = []AgentOption{WithBetweenTurns(BetweenTurnsOff)}

// compactionSteps returns the indexes of the compaction steps of res.
func compactionSteps(res *contextguardtest.Result) []int {
	var idx []int
	for i, rec := range res.Requests {
		if rec.Compaction {
			idx = append(idx, i)
		}
	}
	return idx
}

// assertCompactionsSpaced checks that a compaction gets the conversation far
// enough below the trigger that the next one needs real growth: between two
// compaction steps the raw conversation grew by at least minGrowth
// ground-truth tokens. A summary injected without stripping the contents it
// covers, or a calibration that survives the compaction, compacts on every
// step instead.
func assertCompactionsSpaced(t *testing.T, res *contextguardtest.Result, minGrowth int) {
	t.Helper()
	steps := compactionSteps(res)
	for k := 1; k < len(steps); k++ {
		a, b := res.Requests[steps[k-1]], res.Requests[steps[k]]
		assert.GreaterOrEqual(t, b.RawTokens-a.RawTokens, minGrowth,
			"compactions at requests %d and %d only %d tokens of growth apart (%s)", steps[k-1], steps[k], b.RawTokens-a.RawTokens, res)
	}
}

// TestMatrixBug_SummaryReplacesCoveredContents is the earlier guard's
// production bug: the summary was prepended without stripping the events it
// covers, so every later request was larger than the raw one and compacted
// again, every turn. After a compaction each request must be smaller than
// what ADK built, carry no more than the effective input (summary plus what
// was appended since), and compactions must be spaced by real growth.
func TestMatrixBug_SummaryReplacesCoveredContents(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"Brutal_8k_150Turns", "Stress_8k_RepeatedCompactions", "Stress_200k_RepeatedCompactions"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			sc := seedRow(t, name)
			bothModes(t, func(t *testing.T, mode matrixMode) {
				out := runScenario(t, sc, scenarioRun{mode: mode, agentOpts: inlineOnly})
				res := out.res
				assert.Empty(t, out.violations(), res.String())
				steps := compactionSteps(res)
				require.NotEmpty(t, steps, "the scenario must compact: %s", res)
				for i := steps[0]; i < len(res.Requests); i++ {
					rec := res.Requests[i]
					assert.Less(t, rec.Contents, rec.RawContents, "request %d after the first compaction carries every raw content", i)
					assert.Less(t, rec.Tokens, rec.RawTokens, "request %d after the first compaction is not smaller than the raw one", i)
					if !rec.Compaction {
						assert.LessOrEqual(t, rec.Tokens, rec.EffectiveInput+sc.Window/50,
							"request %d sent more than the previous request plus what was appended since", i)
					}
				}
				assertCompactionsSpaced(t, res, sc.Window/4)
			})
		})
	}
}

// TestMatrixBug_NothingLostAtTheWatermark is the watermark bug: a watermark
// set past what the summary covers silently drops contents. Every marker of
// a raw request (user messages, tool calls, tool results) must be in the
// request sent or in the input of a summarizer call made up to that step
// (Result.LostMarkers, a violation in every matrix run); sequential tool
// chains compact in the middle of a turn.
func TestMatrixBug_NothingLostAtTheWatermark(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"Stress_8k_CodingAgent", "Brutal_8k_SequentialToolChain", "Brutal_4k_KubeAgent", "Brutal_200k_SequentialToolChain_LargeResponses"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			sc := seedRow(t, name)
			bothModes(t, func(t *testing.T, mode matrixMode) {
				out := runScenario(t, sc, scenarioRun{mode: mode, agentOpts: inlineOnly})
				res := out.res
				assert.Empty(t, out.violations(), res.String())
				require.NotZero(t, res.CompactionSteps, "the scenario must compact: %s", res)
				raw := 0
				for _, rec := range res.Requests {
					raw += len(rec.RawMarkers)
				}
				require.NotZero(t, raw, "the raw requests carry markers")
				assert.Zero(t, res.LostMarkers, "markers lost")
			})
		})
	}
}

// TestMatrixBug_CalibrationResetAfterCompaction is the loop of the earlier
// guard: a correction factor (or real count) from before a compaction kept
// the compacted request over the trigger, so it compacted on every step. At
// high token ratios the correction is large; compactions must still be
// spaced by real growth and shrink the request. Compacting inline, they
// never fall on consecutive requests in these rows; with summaries prepared
// while tools run, a step that leaves no room beside the prepared summary
// brings the next compaction on the next request, after that step's growth.
func TestMatrixBug_CalibrationResetAfterCompaction(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"Stress_8k_HighTokenRatio", "Brutal_8k_JSON_Heavy_ToolResponses", "Brutal_200k_TokenRatio_5x", "Stress_8k_LongRunning_40Turns"} {
		for _, run := range []struct {
			name        string
			guardOpts   []Option
			consecutive bool // compactions may fall on consecutive requests
		}{
			{name: "inline", guardOpts: []Option{WithPreparedSummaries(PreparedSummariesOff)}},
			{name: "prepared", consecutive: true},
		} {
			t.Run(name+"/"+run.name, func(t *testing.T) {
				t.Parallel()
				sc := seedRow(t, name)
				bothModes(t, func(t *testing.T, mode matrixMode) {
					out := runScenario(t, sc, scenarioRun{mode: mode, guardOpts: run.guardOpts})
					res := out.res
					assert.Empty(t, out.violations(), res.String())
					steps := compactionSteps(res)
					for k := 1; k < len(steps) && !run.consecutive; k++ {
						assert.Greater(t, steps[k]-steps[k-1], 1, "compactions on consecutive requests %d and %d", steps[k-1], steps[k])
					}
					// The largest single addition in these rows is a tool result
					// or a message well under a quarter of the window.
					assertCompactionsSpaced(t, res, sc.Window/5)
				})
			})
		}
	}
}

// TestMatrixBug_SummarizerFailureNeverPassesThrough is the earlier guard's
// pass-through: when the summarizer failed, the bloated request went to the
// provider. With every summarizer call failing (error, empty, oversize,
// panic, a timeout while the summarizer waits for its context, and one the
// guard stops waiting for while the summarizer ignores its context), the
// fallback summary must keep every request inside the window: nothing may
// even be rejected. The timeouts fire on the guard's fake clock once the
// summarizer is called, never by wall-clock time.
func TestMatrixBug_SummarizerFailureNeverPassesThrough(t *testing.T) {
	t.Parallel()
	faults := []coretest.Fault{
		coretest.FaultError,
		coretest.FaultEmpty,
		coretest.FaultHuge,
		coretest.FaultPanic,
		coretest.FaultSlow,
		coretest.FaultHang,
	}
	rows := []string{"Brutal_8k_ToolResponseBiggerThanWindow", "Stress_8k_RepeatedCompactions", "Brutal_4k_EveryTurnExceedsWindow"}
	for _, fault := range faults {
		names := rows
		if fault == coretest.FaultError {
			// One large window, with the plainest fault.
			names = append(slices.Clone(rows), "Stress_200k_ToolHeavy")
		}
		for _, name := range names {
			t.Run(fault.String()+"/"+name, func(t *testing.T) {
				t.Parallel()
				sc := seedRow(t, name)
				bothModes(t, func(t *testing.T, mode matrixMode) {
					f := fault
					out := runScenario(t, sc, scenarioRun{mode: mode, fault: &f, summaryTimeout: matrixSummaryTimeout})
					if f == coretest.FaultSlow || f == coretest.FaultHang {
						assert.Positive(t, out.tally.get().timeouts, "the summary timeout fired")
					}
					res := out.res
					assert.Empty(t, out.violations(), res.String())
					assert.Positive(t, res.SummarizerCalls, "the summarizer was never tried")
					for _, c := range out.sum.Records() {
						assert.Equal(t, f, c.Fault)
					}
					assert.Zero(t, res.OverflowsRejected, "a request over the window was sent after a summarizer failure")
					assert.LessOrEqual(t, res.MaxRealTokens, sc.Window)
				})
			})
		}
	}
}

// TestMatrixBug_BufferAt200k is the earlier guard's boundary bug: a window
// of exactly 200k got the 20% buffer (threshold 160k) instead of the fixed
// 20k one (threshold 180k). Small steps let the conversation approach the
// trigger closely: every compaction must happen above 170k real tokens, and
// none above the window.
func TestMatrixBug_BufferAt200k(t *testing.T) {
	t.Parallel()
	sc := bugScenario("BufferAt200k", coretest.Window200k, 50, 2.0, eachTurn(contextguardtest.TurnPlan{
		UserTextSize: 300, ResponseSize: 300,
		Steps: contextguardtest.Parallel(contextguardtest.Call("kubectl_logs", 8_000)),
	}))
	bothModes(t, func(t *testing.T, mode matrixMode) {
		out := runScenario(t, sc, scenarioRun{mode: mode, agentOpts: inlineOnly})
		res := out.res
		assert.Empty(t, out.violations(), res.String())
		require.NotEmpty(t, res.UtilizationAtTrigger, "the scenario must compact: %s", res)
		for i, u := range res.UtilizationAtTrigger {
			assert.Greater(t, u, 0.85, "compaction %d triggered at %.1f%% of the window: the 200k buffer is not 20k", i, 100*u)
		}
		assert.Greater(t, res.MaxRealTokens, 170_000, "the conversation never got past 170k: the threshold is below 180k")
	})
}

// TestMatrixBug_ToolDefinitionsAndInlineDataCounted is the earlier guard's
// production overflow: tool declarations and inline data were not counted,
// so the trigger was never reached. Without usage metadata (no calibration
// to hide the gap), the guard's own count must keep every request inside
// the window when declarations take a third of it or more, and with images
// every turn.
// The ground truth is exact o200k (images by their dimensions).
func TestMatrixBug_ToolDefinitionsAndInlineDataCounted(t *testing.T) {
	t.Parallel()
	mcp := func(defs, size int) func(int) contextguardtest.TurnPlan {
		return func(turn int) contextguardtest.TurnPlan {
			return contextguardtest.TurnPlan{UserTextSize: 200, ResponseSize: 300, Steps: contextguardtest.Parallel(
				contextguardtest.ToolCall{Name: coretest.MCPToolName(turn % defs), Size: size, Kind: coretest.KindPrettyJSON})}
		}
	}
	defs8k := bugScenario("ToolDefinitions_8k", coretest.Window8k, 20, 1, mcp(12, 1_200))
	defs8k.ToolDefs, defs8k.ToolDefSchemaSize = 12, 1_000
	defs200k := bugScenario("ToolDefinitions_200k", coretest.Window200k, 20, 1, mcp(50, 16_000))
	defs200k.ToolDefs, defs200k.ToolDefSchemaSize = 50, 6_000
	// ADK deep-copies inline data byte by byte (by reflection) on every
	// step, which the race detector makes slow: the images stay small.
	images8k := bugScenario("InlineImages_8k", coretest.Window8k, 20, 1, eachTurn(contextguardtest.TurnPlan{UserTextSize: 200, ResponseSize: 300, Images: []int{12_000}}))
	for _, sc := range []contextguardtest.Scenario{defs8k, defs200k, images8k} {
		sc.NoUsageMetadata = true
		for _, mode := range []matrixMode{modeTokenizerGPT, modeTokenizer} {
			t.Run(sc.Name+"/"+mode.name, func(t *testing.T) {
				t.Parallel()
				out := runScenario(t, sc, scenarioRun{mode: mode})
				res := out.res
				assert.Empty(t, out.violations(), res.String())
				assert.Positive(t, res.SummarizerCalls, "the scenario must compact: %s", res)
				assert.Zero(t, res.OverflowsRejected, "the guard's count missed part of the request")
				if sc.ToolDefs > 0 {
					assert.Greater(t, out.probe.FixedTokens(), sc.Window/4, "tool declarations must weigh a large part of the window")
				}
			})
		}
	}
}

// bytesForTokens returns the size of a payload of kind whose ground truth
// under mode is about tokens.
func bytesForTokens(mode matrixMode, sc contextguardtest.Scenario, kind coretest.Kind, tokens int) int {
	if mode.counter == nil {
		return int(float64(tokens) * 4 / sc.TokenRatio)
	}
	const sample = 256 << 10
	text := coretest.Generate(kind, sample, 1)
	n := contextguardtest.CountContents(mode.groundTruth(sc), []*genai.Content{{Role: genai.RoleUser, Parts: []*genai.Part{{Text: text}}}})
	return int(float64(tokens) * float64(sample) / float64(n))
}

// TestMatrix_ToolResultFiveTimesTheWindow: one tool result five times the
// window, in 4k, 8k and 200k windows.
func TestMatrix_ToolResultFiveTimesTheWindow(t *testing.T) {
	t.Parallel()
	for _, window := range []int{coretest.Window4k, coretest.Window8k, coretest.Window200k} {
		t.Run(strconv.Itoa(window/1000)+"k", func(t *testing.T) {
			t.Parallel()
			bothModes(t, func(t *testing.T, mode matrixMode) {
				sc := bugScenario("ToolResult5x_"+strconv.Itoa(window/1000)+"k", window, 4, 2.0, nil)
				size := bytesForTokens(mode, sc, coretest.KindLogLines, 5*window)
				sc.Plan = func(turn int) contextguardtest.TurnPlan {
					p := contextguardtest.TurnPlan{UserTextSize: 200, ResponseSize: 300}
					if turn == 1 {
						p.Steps = contextguardtest.Parallel(contextguardtest.Call("kubectl_logs", size))
					}
					return p
				}
				out := runScenario(t, sc, scenarioRun{mode: mode})
				res := out.res
				assert.Empty(t, out.violations(), res.String())
				maxRaw := 0
				for _, rec := range res.Requests {
					maxRaw = max(maxRaw, rec.RawTokens)
				}
				assert.GreaterOrEqual(t, maxRaw, 5*window*9/10, "the tool result must be about five times the window")
				assert.Positive(t, res.SummarizerCalls)
			})
		})
	}
}

// TestMatrix_1MWindowWith100kToolResults: a 1M window overflowed by tool
// results of 100k tokens each, in seed mode: exact o200k counts of 1.2M
// tokens of distinct payloads cost minutes under -race, and the matrix's 1M
// rows already play 1M windows against the tokenizer.
func TestMatrix_1MWindowWith100kToolResults(t *testing.T) {
	t.Parallel()
	sc := bugScenario("1M_100kToolResults", coretest.Window1M, 12, 2.0, nil)
	size := bytesForTokens(modeSeed, sc, coretest.KindCompactJSON, 100_000)
	sc.Plan = eachTurn(contextguardtest.TurnPlan{UserTextSize: 300, ResponseSize: 500, Steps: contextguardtest.Parallel(contextguardtest.Call("http_get", size))})
	out := runScenario(t, sc, scenarioRun{mode: modeSeed})
	res := out.res
	assert.Empty(t, out.violations(), res.String())
	assert.Positive(t, res.SummarizerCalls, "1.2M tokens through a 1M window need a compaction (between turns or inline)")
	assert.Greater(t, res.MaxRealTokens, 800_000, "the window is used")
	for _, rec := range res.Requests {
		if rec.Step == 1 && rec.Turn == 0 {
			assert.GreaterOrEqual(t, rec.RawTokens-res.Requests[0].RawTokens, 100_000, "a tool result of 100k tokens")
		}
	}
}

// TestMatrix_SystemPromptLargerThanWindow: a system prompt larger than the
// window is a clear error: every turn fails with ErrIrreducible and no
// request is sent. The prompt is three windows of ground truth, so that even
// in seed mode (where the truth is about twice what a tokenizer counts) the
// guard's uncalibrated count of it is over the window.
func TestMatrix_SystemPromptLargerThanWindow(t *testing.T) {
	t.Parallel()
	bothModes(t, func(t *testing.T, mode matrixMode) {
		sc := bugScenario("SystemPromptLargerThanWindow", coretest.Window8k, 4, 2.0, nil)
		sc.SystemPromptSize = bytesForTokens(mode, sc, coretest.KindProseEnglish, 3*sc.Window)
		out := runScenario(t, sc, scenarioRun{mode: mode})
		res := out.res
		assert.Empty(t, out.violations(), res.String())
		require.Len(t, res.Errors, sc.Turns, "every turn must fail")
		for _, err := range res.Errors {
			assert.ErrorIs(t, err, ErrIrreducible)
		}
		assert.Zero(t, res.Steps, "no request may be sent")
		assert.Zero(t, res.SummarizerCalls, "no summary is paid for a request that cannot fit")
	})
}

// TestMatrix_UserMessageLargerThanWindow: one user message larger than the
// window, in the middle of a conversation. The guard may quote it cut in
// the summary's continuation or refuse it with ErrIrreducible; it may not
// send it, and the conversation goes on afterwards.
func TestMatrix_UserMessageLargerThanWindow(t *testing.T) {
	t.Parallel()
	for _, window := range []int{coretest.Window8k, coretest.Window200k} {
		t.Run(strconv.Itoa(window/1000)+"k", func(t *testing.T) {
			t.Parallel()
			bothModes(t, func(t *testing.T, mode matrixMode) {
				sc := bugScenario("UserMessageLargerThanWindow_"+strconv.Itoa(window/1000)+"k", window, 5, 2.0, nil)
				size := bytesForTokens(mode, sc, coretest.KindProseEnglish, 3*window/2)
				sc.Plan = func(turn int) contextguardtest.TurnPlan {
					p := contextguardtest.TurnPlan{UserTextSize: 300, ResponseSize: 300, Steps: contextguardtest.Parallel(contextguardtest.Call("grep", 1_000))}
					if turn == 2 {
						p.UserTextSize = size
					}
					return p
				}
				out := runScenario(t, sc, scenarioRun{mode: mode})
				res := out.res
				assert.Empty(t, out.violations(), res.String())
				truth, ok := out.probe.IrreducibleAt(2)
				require.True(t, ok)
				assert.Greater(t, truth, window, "the user message must exceed the window")
				assert.Zero(t, res.OverflowsRejected)
				for _, err := range res.Errors {
					turn, _ := coretest.ErrorTurn(err)
					assert.Equal(t, 2, turn, "only the oversized turn may fail: %v", err)
				}
				last := res.Requests[len(res.Requests)-1]
				assert.Equal(t, sc.Turns-1, last.Turn, "the conversation goes on after the oversized message")
			})
		})
	}
}

// TestKnownLimitation_WithRecoveryModel plays the seeds' known limitation
// (no usage metadata, ratio 3.0 beyond any default factor) with the guard's
// reactive recovery given a recovery model: a second scripted model playing
// the same scenario, as the agent's own model would. The provider's
// rejection must be recovered, not surfaced, and the recovered requests
// must fit and keep call/response pairs.
func TestKnownLimitation_WithRecoveryModel(t *testing.T) {
	t.Parallel()
	sc := seedRow(t, "Brutal_8k_NoUsageMetadata_BeyondDefault")
	recovery := contextguardtest.NewScriptedModel(contextguardtest.ScriptConfig{
		Window:        sc.Window,
		Counter:       contextguardtest.SeedCounter(sc.TokenRatio),
		Plan:          sc.TurnPlan,
		NoUsage:       sc.NoUsageMetadata,
		UsageFromTurn: sc.UsageFromTurn,
		ErrorStyle:    sc.ErrorStyle,
		Seed:          sc.Seed,
	})
	out := runScenario(t, sc, scenarioRun{mode: modeSeed, agentOpts: []AgentOption{WithRecoveryModel(recovery)}})
	res := out.res
	recs := recovery.Requests()
	t.Logf("recovery model: %d request(s), %d rejected", len(recs), recovery.Rejected())
	assert.Empty(t, out.violations(), res.String())
	for _, rec := range recs {
		assert.LessOrEqual(t, rec.Tokens, sc.Window, "recovered request %d", rec.Index)
		assert.NoError(t, rec.PairError, "recovered request %d", rec.Index)
	}
	if res.OverflowsRejected > 0 {
		assert.NotEmpty(t, recs, "rejections were recovered without the recovery model")
	}
}

// plus adds the tallies of two runs, or of a mode's runs; a run whose row
// fills the window counts its compactions apart (inWindowRows).
func (t compactionTally) plus(o compactionTally) compactionTally {
	t.compactions += o.compactions
	t.calls += o.calls
	t.rolling += o.rolling
	t.discarded += o.discarded
	t.allCalls += o.allCalls
	t.dropped += o.dropped
	t.wasted += o.wasted
	t.inWindowRows += o.inWindowRows
	t.inlineInWindowRows += o.inlineInWindowRows
	if o.fillsWindow {
		t.inWindowRows += o.compactions
		t.inlineInWindowRows += o.ran[RanInline]
	}
	ran := maps.Clone(t.ran)
	if ran == nil {
		ran = map[CompactionRun]int{}
	}
	for k, n := range o.ran {
		ran[k] += n
	}
	t.ran = ran
	why := maps.Clone(t.inlineWhy)
	if why == nil {
		why = map[InlineReason]int{}
	}
	if !o.fillsWindow {
		for k, n := range o.inlineWhy {
			why[k] += n
		}
	}
	t.inlineWhy = why
	t.byWindow = t.byWindow.Merge(o.byWindow)
	if !o.fillsWindow && o.window > 0 {
		t.byWindow = t.byWindow.Plus(o.window, coretest.WindowCount{Compactions: o.compactions, Inline: o.ran[RanInline], InlineNotForTokens: o.inlineWhy[""]})
	}
	t.fillsWindow, t.window = false, 0
	return t
}

// inlineWhyOrder are the inline compactions' reasons in the order the table
// prints them; "" is a compaction for another reason than tokens.
var inlineWhyOrder = []InlineReason{InlineStepFillsWindow, InlineStepTooLarge, InlineNotPredicted, InlinePreparedUnusable, InlineNotPrepared, ""}

// pct is n as a percentage of of, 0 for none.
func pct(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return 100 * float64(n) / float64(of)
}
