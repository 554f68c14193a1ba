package plugintest

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/plugin"
	"google.golang.org/adk/runner"

	. "github.com/adk-contextguard/contextguard"
	"github.com/adk-contextguard/contextguard/contextguardtest"
	"github.com/adk-contextguard/contextguard/contextguardtest/o200k"
	"github.com/adk-contextguard/contextguard/core/coretest"
)

// swPlan is a 40-turn mix of text-only turns, single calls, parallel calls
// and sequential chains; every user message, call and tool result carries a
// marker. unit is the size of one tool result in bytes.
func swPlan(unit int) func(turn int) contextguardtest.TurnPlan {
	return func(turn int) contextguardtest.TurnPlan {
		size := func(i int) int { return unit/2 + (turn*131+i*71)%unit }
		p := contextguardtest.TurnPlan{UserTextSize: 300, ResponseSize: 200}
		switch turn % 4 {
		case 1:
			p.Steps = contextguardtest.Parallel(contextguardtest.Call("kubectl_logs", size(0)))
		case 2:
			p.Steps = contextguardtest.Parallel(contextguardtest.Call("http_get", size(0)), contextguardtest.Call("sql_query", size(1)))
		case 3:
			p.Steps = contextguardtest.Sequential(contextguardtest.Call("read_file", size(0)), contextguardtest.Call("grep", size(1)))
		}
		return p
	}
}

// swRun is what a sliding-window run through the kit's driver recorded.
type swRun struct {
	res      *contextguardtest.Result
	sum      *contextguardtest.SummarizerModel
	events   []CompactionEvent
	raw      [][]string          // markers of the contents ADK built, per step
	requests []*model.LLMRequest // what the model received, per step
	logs     *logBuffer
}

// runSlidingAgainst plays sc through a real runner against the ground truth
// truth, with a guard configured by opts for the driver's agent. The
// summarizer model is named after a model the registry knows (a 1M window),
// so its input is never trimmed to fit and every summarized marker reaches
// it. A plugin installed before the guard records the markers of the
// contents ADK built at each step.
func runSlidingAgainst(t *testing.T, sc contextguardtest.Scenario, truth contextguardtest.Counter, sum *contextguardtest.SummarizerModel, opts ...AgentOption) *swRun {
	t.Helper()
	return runSlidingOn(t, sc, truth, contextguardtest.NewFakeClock(time.Time{}), sum, opts...)
}

// runSlidingOn is runSlidingAgainst with the guard on clock (WithClock);
// the others' guards run on a fake clock no one moves, so no timeout fires.
func runSlidingOn(t *testing.T, sc contextguardtest.Scenario, truth contextguardtest.Counter, clock Clock, sum *contextguardtest.SummarizerModel, opts ...AgentOption) *swRun {
	t.Helper()
	return runSlidingWith(t, sc, truth, clock, sum, nil, opts...)
}

// runSlidingWith is runSlidingOn with guardOpts added to the guard's.
func runSlidingWith(t *testing.T, sc contextguardtest.Scenario, truth contextguardtest.Counter, clock Clock, sum *contextguardtest.SummarizerModel, guardOpts []Option, opts ...AgentOption) *swRun {
	t.Helper()
	run := &swRun{sum: sum, logs: &logBuffer{}}
	var mu sync.Mutex
	g := New(NewCrushRegistry(WithRegistryLogger(run.logs.logger())), append([]Option{WithLogger(run.logs.logger()), WithClock(clock),
		WithOnCompaction(func(_ context.Context, e CompactionEvent) {
			mu.Lock()
			defer mu.Unlock()
			run.events = append(run.events, e)
		})}, guardOpts...)...)
	g.Add("assistant", sum, append([]AgentOption{WithMaxTokens(sc.Window)}, opts...)...)
	guard, err := g.Plugin()
	require.NoError(t, err)
	rawObserver, err := plugin.New(plugin.Config{
		Name: "raw-markers",
		BeforeModelCallback: func(_ agent.CallbackContext, req *model.LLMRequest) (*model.LLMResponse, error) {
			ms := contextguardtest.MarkerPattern.FindAllString(contextguardtest.FlattenText(req.Contents), -1)
			mu.Lock()
			defer mu.Unlock()
			run.raw = append(run.raw, ms)
			return nil, nil
		},
	})
	require.NoError(t, err)

	res, err := contextguardtest.Run(context.Background(), sc, contextguardtest.RunConfig{
		Counter:    truth,
		Plugins:    runner.PluginConfig{Plugins: []*plugin.Plugin{rawObserver, guard}},
		Summarizer: sum,
		OnRequest: func(_ int, req *model.LLMRequest) {
			cp := *req
			cp.Contents = slices.Clone(req.Contents)
			mu.Lock()
			defer mu.Unlock()
			run.requests = append(run.requests, &cp)
		},
	})
	require.NoError(t, err)
	run.res = res
	t.Log(res)
	return run
}

// assertHealthy checks what every run must show: no overflow, no error, pair
// safety and the user's latest message in every request (the driver runs
// contextguardtest.CheckPairs on every request it receives), and at most one
// summary message, first, with at most one continuation.
func (r *swRun) assertHealthy(t *testing.T) {
	t.Helper()
	res := r.res
	assert.Zero(t, res.OverflowsRejected, "overflows")
	assert.Zero(t, res.OverflowsSurfaced)
	assert.LessOrEqual(t, res.MaxRealTokens, res.Window)
	assert.Empty(t, res.Errors)
	assert.Zero(t, res.PairViolations, "pair violations")
	assert.Zero(t, res.MissingLatestUser, "requests without the latest user message")
	assert.Zero(t, res.NonShrinkingCompactions, "compactions that did not shrink the request")
	require.Len(t, r.requests, res.Steps)
	for i, req := range r.requests {
		flat := contextguardtest.FlattenText(req.Contents)
		assert.LessOrEqual(t, strings.Count(flat, summaryHeader), 1, "request %d holds two summaries", i)
		assert.LessOrEqual(t, strings.Count(flat, continuationLead), 1, "request %d holds two continuations", i)
		for j, c := range req.Contents {
			if j > 0 {
				assert.False(t, strings.HasPrefix(contentText(c), summaryHeader), "request %d: summary message at position %d", i, j)
			}
		}
	}
}

// conversationMarkers returns the markers of the <conversation> section of a
// summarizer input (the transcript of the contents summarized now), and the
// number of <previous_summary> sections.
func conversationMarkers(text string) (markers []string, prevSections int) {
	prevSections = strings.Count(text, "<previous_summary>")
	if i := strings.Index(text, "<conversation>"); i >= 0 {
		text = text[i:]
		if j := strings.Index(text, "</conversation>"); j >= 0 {
			text = text[:j]
		}
		markers = contextguardtest.MarkerPattern.FindAllString(text, -1)
	}
	return markers, prevSections
}

// TestSlidingWindow_40Turns_ThroughRunner plays 40 tool-heavy turns through a
// real runner with WithSlidingWindow(6) in a 200k window (compactions
// triggered by turns) and a 12k window (by tokens, and by turns). At every
// step each marker ADK put in the request is still in the request sent, or
// was in a summarizer input before it; never in neither. The k-th summarizer
// input holds nothing from before the (k-1)-th watermark except through the
// previous summary, which it holds once.
func TestSlidingWindow_40Turns_ThroughRunner(t *testing.T) {
	tests := []struct {
		name        string
		window      int
		unit        int
		wantReasons []string
	}{
		{"200k_turns", 200_000, 3_000, []string{"turns"}},
		{"12k_tokens_and_turns", 12_000, 4_000, []string{"tokens", "turns"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sum := contextguardtest.NewSummarizerModel(contextguardtest.SummarizerConfig{
				Name: "gemini-2.5-flash", Counter: o200k.Counter(1.0), KeepText: true,
			})
			// Summaries are written in the model call or between turns: a
			// summary prepared while tools ran that a larger step left
			// unused covers contents the next one summarizes again, which
			// the disjoint spans below would count against the strategy
			// (prepared_summary_test.go covers those).
			sc := contextguardtest.Scenario{
				Name: "Sliding40_" + tt.name, Window: tt.window, Turns: 40, Plan: swPlan(tt.unit), Seed: int64(tt.window),
			}
			run := runSlidingWith(t, sc, o200k.Counter(1.0), contextguardtest.NewFakeClock(time.Time{}), sum,
				[]Option{WithPreparedSummaries(PreparedSummariesOff)}, WithSlidingWindow(6))
			run.assertHealthy(t)
			res := run.res

			// Compactions happened, for the expected reasons, and kept a
			// verbatim tail.
			require.NotEmpty(t, run.events)
			reasons := map[string]bool{}
			for _, e := range run.events {
				reasons[e.Reason] = true
				assert.Equal(t, StrategySlidingWindow, e.Strategy)
				assert.False(t, e.Fallback, e.FallbackReason)
			}
			for _, r := range tt.wantReasons {
				assert.True(t, reasons[r], "no compaction triggered by %s: %v", r, reasons)
			}
			assert.Equal(t, sum.Calls(), res.SummarizerCalls)
			t.Logf("%d compactions, %d summarizer calls, reasons %v", len(run.events), sum.Calls(), reasons)

			// Never in neither.
			require.Len(t, run.raw, res.Steps)
			calls := sum.Records()
			summarized := map[string]bool{}
			seen := 0
			kept := 0
			for i, rec := range res.Requests {
				for ; seen < sumCallsBefore(res.Requests, i); seen++ {
					for _, m := range calls[seen].Markers {
						summarized[m] = true
					}
				}
				inRequest := map[string]bool{}
				for _, m := range rec.Markers {
					inRequest[m] = true
				}
				for _, m := range run.raw[i] {
					if !inRequest[m] && !summarized[m] {
						t.Errorf("step %d: marker %s is neither in the request nor in any summarizer input", i, m)
					}
				}
				if strings.HasPrefix(contentText(run.requests[i].Contents[0]), summaryHeader) && len(run.requests[i].Contents) > 1 {
					kept++
				}
			}
			assert.Positive(t, kept, "no request kept verbatim contents beside the summary")

			// The k-th input: only new contents in its transcript (spans are
			// disjoint, so nothing before the previous watermark comes back),
			// the previous summary once.
			before := map[string]int{}
			for k, c := range calls {
				ms, prev := conversationMarkers(c.Text)
				require.NotEmpty(t, ms, "summarizer call %d has an empty transcript", k)
				for _, m := range ms {
					if j, ok := before[m]; ok {
						t.Errorf("summarizer call %d re-summarizes %s, summarized by call %d", k, m, j)
					}
				}
				for _, m := range ms {
					before[m] = k
				}
				if k == 0 {
					assert.Zero(t, prev, "no previous summary at the first compaction")
				} else {
					assert.Equal(t, 1, prev, "summarizer call %d: the previous summary exactly once", k)
				}
			}
		})
	}
}

// TestSlidingWindow_SummarizerFaults_ThroughRunner makes every summarizer
// call fail (error, empty, oversize, a timeout, panic): the fallback summary
// is used, every request fits, the latest user message is present and pairs
// are intact. The slow summarizer times out on the guard's fake clock,
// which it moves past the summary timeout once called.
func TestSlidingWindow_SummarizerFaults_ThroughRunner(t *testing.T) {
	faults := []struct {
		fault coretest.Fault
		want  string
	}{
		{coretest.FaultError, "injected summarizer failure"},
		{coretest.FaultEmpty, "empty summary"},
		{coretest.FaultHuge, "exceeds its budget"},
		{coretest.FaultSlow, "summary timeout"},
		{coretest.FaultPanic, "summarizer panicked"},
	}
	for _, f := range faults {
		t.Run(f.fault.String(), func(t *testing.T) {
			t.Parallel()
			clock := contextguardtest.NewFakeClock(time.Time{})
			sum := contextguardtest.NewSummarizerModel(contextguardtest.SummarizerConfig{Name: "gemini-2.5-flash",
				OnBlocked: func() { clock.Advance(matrixSummaryTimeout) }})
			sum.InjectFaultFrom(1, f.fault)
			run := runSlidingOn(t, contextguardtest.Scenario{
				Name: "SlidingFaults_" + f.fault.String(), Window: 12_000, Turns: 16, Plan: swPlan(2_000), Seed: 7,
			}, o200k.Counter(1.0), clock, sum, WithSlidingWindow(6), WithSummaryTimeout(matrixSummaryTimeout))
			sum.Release()
			require.NoError(t, sum.Wait(t.Context()), "no summarizer call is left")
			run.assertHealthy(t)
			require.NotEmpty(t, run.events)
			for _, e := range run.events {
				assert.True(t, e.Fallback, "compaction without fallback")
				assert.Contains(t, e.FallbackReason, f.want)
				assert.LessOrEqual(t, e.SummarizerCalls, DefaultMaxCompactionAttempts)
			}
			assert.Contains(t, run.logs.String(), "using the fallback summary")
			last := run.requests[len(run.requests)-1]
			assert.Contains(t, contentText(last.Contents[0]), "(Automatic summary", "the fallback summary is sent")
		})
	}
}

// ---------------------------------------------------------------------------
// Unit tests: split, watermark, tail shrinking, continuation
// ---------------------------------------------------------------------------
