package core

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/coretest"

	"github.com/adk-contextguard/contextguard/core/internal/estimate"
	"github.com/adk-contextguard/contextguard/core/internal/state"
	"github.com/adk-contextguard/contextguard/core/internal/window"
)

// windowRegistry is a ModelRegistry with fixed windows, so a test can give
// the summarizer a smaller window than the agent's model.
type windowRegistry map[string]int

func (r windowRegistry) ContextWindow(m string) int { return r[m] }

// conversationOf builds swTurn turns of size bytes until the history weighs
// at least tokens (calibrated, as the guard counts it before any real
// count), then the user's new request; every message carries a marker.
func conversationOf(tokens, size int) (raw []*genai.Content, user string) {
	cal := newCalibration(state.Agent{}, testEst)
	i := 0
	for cal.Scale(estimate.Contents(testEst, raw)) < tokens {
		raw = append(raw, swTurn(i, size)...)
		i++
	}
	user = fmt.Sprintf("U%d-MARK carry on with the migration", i)
	return append(raw, userMsg(user)), user
}

// llmTranscript is the <conversation> part of a rendered summary prompt.
var llmTranscript = regexp.MustCompile(`(?s)<conversation>\n(.*)\n</conversation>`)

// flattenAll is the text of cs as the kit flattens it.
func flattenAll(cs []*genai.Content) string {
	var b strings.Builder
	for _, c := range cs {
		b.WriteString(renderContent(c, excerptLimits{text: 1 << 30, toolArgs: 1 << 30, toolResult: 1 << 30}))
	}
	return b.String()
}

// listedRequest and unlistedRequests read the fallback summary's list of
// user requests: a listed request's marker, and the count of those it had
// no room for.
var (
	listedRequest    = regexp.MustCompile(`(?m)^- (U\d+-MARK)`)
	unlistedRequests = regexp.MustCompile(`\((\d+) earlier requests not listed`)
)

// firstMarkerIn is the first marker of c that s holds, or "".
func firstMarkerIn(s string, c *genai.Content) string {
	for m := range swMarkers(flattenAll([]*genai.Content{c})) {
		if strings.Contains(s, m) {
			return m
		}
	}
	return ""
}

// TestSummaryBudget: the length asked of a summary is about half the
// buffer, less when the irreducible part leaves less room, and stays so for
// windows up to math.MaxInt (WithMaxTokens(math.MaxInt), "no limit").
func TestSummaryBudget(t *testing.T) {
	cases := []struct {
		name   string
		window int
		bare   int
		want   int
	}{
		{name: "8k window: half the buffer", window: 8_000, bare: 1_000, want: 800},
		{name: "8k window, the irreducible part leaves little room: 80% of it", window: 8_000, bare: 5_900, want: 400},
		{name: "8k window, no room under the threshold: from the window", window: 8_000, bare: 6_500, want: 256},
		{name: "200k window: half the 20k buffer", window: 200_000, bare: 1_000, want: 10_000},
		{name: "a window of MaxInt/8", window: math.MaxInt / 8, bare: 1_000, want: 10_000},
		{name: "a window of MaxInt", window: math.MaxInt, bare: 1_000, want: 10_000},
		{name: "a window of MaxInt, an irreducible part near it", window: math.MaxInt, bare: math.MaxInt - 30_000, want: 8_000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, summaryBudget(window.New(tc.window), tc.bare, 0))
		})
	}
}

// TestRequestedCompaction_UnboundedWindow: with WithMaxTokens(math.MaxInt)
// the trigger is never reached, and a requested compaction summarizes the
// conversation; it used to get a summary budget of 0 from an overflowed
// product and keep only the user's current request.
func TestRequestedCompaction_UnboundedWindow(t *testing.T) {
	rs := &recordingSummarizer{reply: func(int, SummaryRequest) (string, error) { return "SUMMARY", nil }}
	var events []CompactionEvent
	// No option declares such a window (WithMaxTokens stops at 100M); a
	// registry may still report one.
	g := newGuard(windowRegistry{"gemini-2.5-flash": math.MaxInt}, WithLogger(quietLogger),
		WithOnCompaction(func(_ context.Context, ev CompactionEvent) { events = append(events, ev) }))
	g.addModel("a", nil, WithSummarizer(rs))
	require.NoError(t, g.Err())
	ctx := newFakeCtx("a").withUser("go on")
	require.NoError(t, g.RequestCompactionInState(ctx.State(), "a", ""))

	resp, err := g.beforeModel(ctx, request(append(coretest.History(6, 300), userMsg("go on"))...))
	require.NoError(t, err)
	assert.Nil(t, resp)
	require.Len(t, rs.requests(), 1, "the summarizer is asked")
	assert.Positive(t, rs.requests()[0].SummaryTokens)
	require.Len(t, events, 1)
	assert.Equal(t, ReasonRequested, events[0].Reason)
	assert.Equal(t, 13, events[0].ContentsSummarized, "every content is summarized, none dropped")
}

// TestSummarizerFaults_FallbackPerStrategy: whatever way the summarizer
// fails (an error, an empty or oversize summary, the summary timeout, a
// panic), the threshold strategy and the sliding window alike take the
// fallback summary, within the attempts, with the user's latest request
// quoted and the request under the threshold; the raw history is never
// passed through.
func TestSummarizerFaults_FallbackPerStrategy(t *testing.T) {
	clock := coretest.NewFakeClock(time.Time{})
	faults := []struct {
		name string
		llm  func() *fakeLLM
		opts []AgentOption
		want string
	}{
		{"error", func() *fakeLLM { return failingSummarizer(errBoom) }, nil, "boom"},
		{"empty text", func() *fakeLLM { return fixedSummary("   ") }, nil, "empty summary"},
		{"200k-char output", func() *fakeLLM { return fixedSummary(strings.Repeat("very long summary ", 200_000/18)) }, nil, "exceeds its budget"},
		{"context deadline", func() *fakeLLM { return slowSummarizer(clock) }, []AgentOption{WithSummaryTimeout(testSummaryTimeout)}, "summary timeout"},
		{"panic", func() *fakeLLM {
			return &fakeLLM{name: "s", reply: func(context.Context, *Request) (string, error) { panic("summarizer bug") }}
		}, nil, "summarizer panicked"},
	}
	strategies := []struct {
		name   string
		opts   []AgentOption
		raw    []*genai.Content
		latest string
		// old is a mark of the history no fallback summary lists.
		old string
	}{
		{"threshold", nil, coretest.History(20, 300), "LATEST please fix the build", "OLD-M0 "},
		{"sliding window", []AgentOption{WithSlidingWindow(4)}, swHistory(0, 6, 300), "U9-MARK latest", "R0-MARK"},
	}
	for _, s := range strategies {
		for _, f := range faults {
			t.Run(s.name+"/"+f.name, func(t *testing.T) {
				var events []CompactionEvent
				logs := &logBuffer{}
				llm := f.llm()
				g := newGuard(NewCrushRegistry(WithRegistryLogger(logs.logger())), WithLogger(logs.logger()), WithClock(clock),
					WithOnCompaction(func(_ context.Context, e CompactionEvent) { events = append(events, e) }))
				opts := append(append([]AgentOption{WithMaxTokens(8_000)}, s.opts...), f.opts...)
				g.addModel("a", llm, opts...)
				require.NoError(t, g.Err())
				req := request(append(slices.Clone(s.raw), userMsg(s.latest))...)
				_, err := g.beforeModel(newFakeCtx("a").withUser(s.latest), req)
				require.NoError(t, err)

				require.Len(t, events, 1)
				assert.True(t, events[0].Fallback)
				assert.Contains(t, events[0].FallbackReason, f.want)
				assert.LessOrEqual(t, llm.Calls(), DefaultMaxCompactionAttempts)
				tokens := newCalibration(state.Agent{}, testEst).Count(requestTokens(testEst, engineReq(req)))
				assert.LessOrEqual(t, tokens, window.New(8_000).Threshold, "the request fits under the threshold")
				assert.Contains(t, requestText(req), s.latest)
				assert.Equal(t, 1, strings.Count(requestText(req), continuationLead))
				assert.NoError(t, coretest.CheckPairs(req.Contents))
				assert.NotContains(t, requestText(req), s.old, "the raw history is never passed through")
				assert.Contains(t, logs.String(), "using the fallback summary")
			})
		}
	}
}
