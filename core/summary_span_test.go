package core

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/coretest"
	"github.com/adk-contextguard/contextguard/core/internal/convo"
	"github.com/adk-contextguard/contextguard/core/internal/estimate"
	"github.com/adk-contextguard/contextguard/core/internal/state"
	"github.com/adk-contextguard/contextguard/core/internal/textcut"
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

// TestRollingSummary_NoMessageLost: a conversation three times the
// summarizer's window is summarized in pieces, oldest first, each folding in
// the summary so far. Every message's marker reaches exactly one summarizer
// input, the last input holds the previous pieces' summary, and the extra
// calls are counted in the event and the log. Before the rolling summary,
// the oldest messages that did not fit one input were dropped.
func TestRollingSummary_NoMessageLost(t *testing.T) {
	tests := []struct {
		name string
		// agentWindow is the agent's window; summarizerWindow the
		// summarizer's (the agent's own model when equal).
		agentWindow, summarizerWindow int
	}{
		{"the agent's own model, 8k", 8_000, 8_000},
		{"the agent's own model, 32k", 32_000, 32_000},
		{"a smaller summarizer model, 8k beside 128k", 128_000, 8_000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// The conversation weighs three summarizer windows (and at
			// least the agent's trigger).
			raw, user := conversationOf(max(3*tc.summarizerWindow, tc.agentWindow*9/10), 600)
			want := swMarkers(flattenAll(raw[:len(raw)-1]))
			want[strings.Fields(user)[0]] = true

			var inputs []string // the transcript of each summarizer call
			var prevs []string  // the summary each call folds in
			llm := &fakeLLM{name: "small-summarizer"}
			llm.reply = func(_ context.Context, req *Request) (string, error) {
				text := textcut.ContentText(req.Contents[0])
				m := llmTranscript.FindStringSubmatch(text)
				require.NotNil(t, m, "the prompt holds a transcript")
				inputs = append(inputs, m[1])
				prevs = append(prevs, text[:strings.Index(text, "<conversation>")])
				return fmt.Sprintf("## Current State\nROLLING-SUMMARY-%d of the migration.", len(inputs)), nil
			}
			var events []CompactionEvent
			logs := &logBuffer{}
			reg := windowRegistry{"gemini-2.5-flash": tc.agentWindow, "small-summarizer": tc.summarizerWindow}
			g := newGuard(reg, WithLogger(logs.logger()), WithOnCompaction(func(_ context.Context, e CompactionEvent) { events = append(events, e) }))
			// As many calls as the span needs (WithMaxSummarizerCalls'
			// bound is TestRollingSummary_CallsBounded's); the largest
			// bound saturates.
			g.addModel("a", nil, WithSummarizer(llm), WithMaxTokens(tc.agentWindow), WithMaxSummarizerCalls(math.MaxInt))
			require.NoError(t, g.Err())
			ctx := newFakeCtx("a").withUser(user)
			req := request(raw...)
			_, err := g.beforeModel(ctx, req)
			require.NoError(t, err)

			// Every marker in exactly one summarizer input.
			seen := map[string]int{}
			for _, in := range inputs {
				for m := range swMarkers(in) {
					seen[m]++
				}
			}
			for m := range want {
				assert.Equal(t, 1, seen[m], "marker %s in %d summarizer inputs", m, seen[m])
			}
			assert.NotContains(t, strings.Join(inputs, ""), "omitted: they did not fit")

			// Pieces, oldest first, each folding in the summary so far.
			require.GreaterOrEqual(t, len(inputs), 3, "three windows need at least three pieces")
			for k := 1; k < len(inputs); k++ {
				assert.Contains(t, prevs[k], fmt.Sprintf("ROLLING-SUMMARY-%d", k), "call %d folds in the summary of call %d", k+1, k)
			}
			assert.Contains(t, textcut.ContentText(req.Contents[0]), fmt.Sprintf("ROLLING-SUMMARY-%d", len(inputs)), "the last summary is sent")

			// Every input within the summarizer's window.
			for k := range inputs {
				n := newCalibration(state.Agent{}, testEst).Scale(testEst.Text(prevs[k] + inputs[k]))
				assert.LessOrEqual(t, n, int(float64(tc.summarizerWindow)*summarizerInputShare), "call %d", k+1)
			}

			// Counted in the event and the log.
			require.Len(t, events, 1)
			assert.Equal(t, len(inputs), events[0].SummarizerCalls)
			assert.Equal(t, len(inputs)-1, events[0].RollingCalls)
			assert.False(t, events[0].Fallback)
			assert.Contains(t, logs.String(), fmt.Sprintf("rolling_calls=%d", len(inputs)-1))
			assert.LessOrEqual(t, events[0].TokensAfter, window.New(tc.agentWindow).Threshold)
			t.Logf("%d summarizer calls for a conversation of %d tokens (%.1fx the summarizer's window)",
				len(inputs), events[0].TokensBefore, float64(events[0].TokensBefore)/float64(tc.summarizerWindow))
		})
	}
}

// TestRollingSummary_CallsBounded: a span of about fifteen windows of an
// 8k summarizer (37 calls unbounded) is summarized within
// WithMaxSummarizerCalls' bound: its oldest contents are listed by the
// fallback summary, which the first summarizer input folds in as the
// summary so far, and the newest contents reach the summarizer whole.
// Nothing is lost: every content either reaches a summarizer input or is
// accounted for in the list (each user request listed or counted, each
// tool call counted), and the request fits. Before the bound, the same
// span took 37 calls inside one model call.
func TestRollingSummary_CallsBounded(t *testing.T) {
	tests := []struct {
		name string
		opt  []AgentOption
		max  int
	}{
		{"the default bound", nil, DefaultMaxSummarizerCalls},
		{"a bound of 3", []AgentOption{WithMaxSummarizerCalls(3)}, 3},
		{"a bound of 1: the last call only", []AgentOption{WithMaxSummarizerCalls(1)}, 1},
	}
	raw, user := conversationOf(115_000, 600)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var inputs, prevs []string
			llm := &fakeLLM{name: "small-summarizer"}
			llm.reply = func(_ context.Context, req *Request) (string, error) {
				text := textcut.ContentText(req.Contents[0])
				m := llmTranscript.FindStringSubmatch(text)
				require.NotNil(t, m, "the prompt holds a transcript")
				inputs = append(inputs, m[1])
				prevs = append(prevs, text[:strings.Index(text, "<conversation>")])
				return fmt.Sprintf("## Current State\nROLLING-SUMMARY-%d of the migration.", len(inputs)), nil
			}
			var events []CompactionEvent
			reg := windowRegistry{"gemini-2.5-flash": 128_000, "small-summarizer": 8_000}
			g := newGuard(reg, WithLogger(quietLog), WithOnCompaction(func(_ context.Context, e CompactionEvent) { events = append(events, e) }))
			g.addModel("a", nil, append([]AgentOption{WithSummarizer(llm), WithMaxTokens(128_000)}, tc.opt...)...)
			require.NoError(t, g.Err())
			req := request(raw...)
			_, err := g.beforeModel(newFakeCtx("a").withUser(user), req)
			require.NoError(t, err)

			require.Len(t, events, 1)
			e := events[0]
			assert.LessOrEqual(t, llm.Calls(), tc.max, "summarizer calls")
			assert.Equal(t, llm.Calls(), e.SummarizerCalls)
			assert.False(t, e.Fallback, "the summary sent is the summarizer's")
			assert.Contains(t, textcut.ContentText(req.Contents[0]), fmt.Sprintf("ROLLING-SUMMARY-%d", len(inputs)), "the last summary is sent")
			assert.LessOrEqual(t, e.TokensAfter, window.New(128_000).Threshold, "the request fits")

			// The contents no summarizer input shows are the oldest ones.
			shown := strings.Join(inputs, "")
			listed := 0
			for listed < len(raw) && firstMarkerIn(shown, raw[listed]) == "" {
				listed++
			}
			require.Positive(t, listed, "the oldest contents are listed, not summarized")
			for i := listed; i < len(raw); i++ {
				assert.NotEmpty(t, firstMarkerIn(shown, raw[i]), "content %d reaches a summarizer input", i)
			}

			// The list is the first input's summary so far, and accounts
			// for each of their user requests and tool calls.
			digest := prevs[0]
			assert.Contains(t, digest, "listed mechanically")
			requests, calls := 0, 0
			for _, c := range raw[:listed] {
				if convo.IsUserMessage(c) && textcut.ContentText(c) != "" {
					requests++
				}
				if c.Role == genai.RoleModel && len(c.Parts) > 0 && c.Parts[0].FunctionCall != nil {
					calls++
				}
			}
			n := len(listedRequest.FindAllString(digest, -1))
			if m := unlistedRequests.FindStringSubmatch(digest); m != nil {
				k, _ := strconv.Atoi(m[1])
				n += k
			}
			assert.Equal(t, requests, n, "each user request listed or counted")
			assert.Contains(t, digest, fmt.Sprintf("kubectl_logs x%d", calls), "each tool call counted")
			t.Logf("bound %d: %d calls, %d of %d contents listed mechanically", tc.max, llm.Calls(), listed, len(raw))
		})
	}
}

// TestRollingSummary_FallbackKeepsPieces: when the summarizer fails or its
// calls run out after pieces of a rolling summary were summarized, the
// fallback summary keeps the last piece's summary and lists the contents
// after it, within its budget: what the summarizer already wrote is not
// thrown away, and each later user request and tool call is accounted for.
func TestRollingSummary_FallbackKeepsPieces(t *testing.T) {
	raw, _ := conversationOf(20_000, 600)
	tests := []struct {
		name   string
		rolled []rolledPiece
		// from is where the contents the fallback lists start.
		from int
	}{
		{"no piece: the fallback of the whole span", nil, 0},
		{"two pieces: the last one kept", []rolledPiece{{end: 12, summary: "PIECE-1 summary"}, {end: 40, summary: "PIECE-2 summary"}}, 40},
		{"a piece past the span's end: not used", []rolledPiece{{end: 12, summary: "PIECE-1 summary"}, {end: len(raw), summary: "PIECE-X summary"}}, 12},
	}
	const budget = 2_000
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			turn := newTestTurn(request(raw...), state.Agent{}, quietLog)
			turn.Cal = newCalibration(state.Agent{}, testEst)
			c := &compaction{callView: callView{measure: turn.measure}, first: 0, prevSummary: "EARLIER-SUMMARY", rolled: tc.rolled}
			s := c.fallbackAfterPieces(len(raw)-1, budget)

			assert.LessOrEqual(t, turn.Cal.Scale(testEst.Text(s)), budget, "within its budget")
			if tc.from > 0 {
				kept := tc.rolled[0].summary
				for _, p := range tc.rolled {
					if p.end < len(raw)-1 {
						kept = p.summary
					}
				}
				assert.Contains(t, s, kept, "the last piece's summary is kept")
				assert.Contains(t, s, fmt.Sprintf("first %d messages", tc.from))
			} else {
				assert.Contains(t, s, "EARLIER-SUMMARY", "the previous summary is kept")
			}
			calls := 0
			var newest string
			for _, c := range raw[tc.from : len(raw)-1] {
				if c.Parts[0].FunctionCall != nil {
					calls++
				}
				if convo.IsUserMessage(c) && textcut.ContentText(c) != "" {
					newest = strings.Fields(textcut.ContentText(c))[0]
				}
			}
			assert.Contains(t, s, fmt.Sprintf("kubectl_logs x%d", calls), "each later tool call counted")
			assert.Contains(t, s, newest, "the newest user request listed")
		})
	}
}
