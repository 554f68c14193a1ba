package core

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/coretest"

	"github.com/adk-contextguard/contextguard/core/internal/contentid"
	"github.com/adk-contextguard/contextguard/core/internal/convo"
	"github.com/adk-contextguard/contextguard/core/internal/estimate"
	"github.com/adk-contextguard/contextguard/core/internal/pairs"
	"github.com/adk-contextguard/contextguard/core/internal/state"
	"github.com/adk-contextguard/contextguard/core/internal/textcut"
	"github.com/adk-contextguard/contextguard/core/internal/window"
)

// swTurn is one turn of a synthetic history: a user message, a tool call and
// its response, and the model's answer, each with its own marker.
func swTurn(i, size int) []*genai.Content {
	return []*genai.Content{
		userMsg(fmt.Sprintf("U%d-MARK %s", i, coretest.Filler(size, 10*i))),
		callMsg("kubectl_logs", map[string]any{"pod": fmt.Sprintf("C%d-MARK", i)}),
		respMsg("kubectl_logs", map[string]any{"output": fmt.Sprintf("R%d-MARK %s", i, coretest.Filler(size, 10*i+1))}),
		modelMsg(fmt.Sprintf("M%d-MARK %s", i, coretest.Filler(size/2, 10*i+2))),
	}
}

func swHistory(from, to, size int) []*genai.Content {
	var cs []*genai.Content
	for i := from; i < to; i++ {
		cs = append(cs, swTurn(i, size)...)
	}
	return cs
}

var swMarker = regexp.MustCompile(`[UCRM]\d+-MARK`)

// swMarkers lists the distinct synthetic markers in s.
func swMarkers(s string) map[string]bool {
	out := map[string]bool{}
	for _, m := range swMarker.FindAllString(s, -1) {
		out[m] = true
	}
	return out
}

// recordingSummarizer records every SummaryRequest and answers with reply.
type recordingSummarizer struct {
	mu    sync.Mutex
	reqs  []SummaryRequest
	reply func(n int, req SummaryRequest) (string, error)
}

func (r *recordingSummarizer) Summarize(_ context.Context, req SummaryRequest) (string, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	n := len(r.reqs)
	r.mu.Unlock()
	return r.reply(n, req)
}

func (r *recordingSummarizer) requests() []SummaryRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.reqs)
}

// contentsMarkers lists the synthetic markers of contents.
func contentsMarkers(cs []*genai.Content) map[string]bool {
	return swMarkers(coretest.FlattenText(cs))
}

func TestSlidingWindow_SplitAndWatermark(t *testing.T) {
	rs := &recordingSummarizer{reply: func(n int, _ SummaryRequest) (string, error) {
		return fmt.Sprintf("SUMMARY-%d", n), nil
	}}
	g, _ := newTestGuard(t, nil, WithSummarizer(rs), WithSlidingWindow(4), WithMaxTokens(200_000))
	ctx := newFakeCtx("a")

	// Four turns: under the budget of 4, nothing happens.
	raw := swHistory(0, 4, 1_000)
	ctx.withUser(textcut.ContentText(raw[12]))
	req := request(raw...)
	_, err := g.beforeModel(ctx, req)
	require.NoError(t, err)
	assert.Empty(t, rs.requests())
	assert.Len(t, req.Contents, len(raw))

	// A fifth turn starts: 5 > 4 turns, compaction keeps the newest
	// keepTurns(4) = 2 turns verbatim.
	raw = append(raw, userMsg("U4-MARK what now?"))
	ctx.withUser("U4-MARK what now?")
	req = request(raw...)
	_, err = g.beforeModel(ctx, req)
	require.NoError(t, err)
	require.Len(t, rs.requests(), 1)
	split := 12 // turn 3 starts at 12; turn 4 at 16
	assert.Equal(t, split, ctx.getInt(state.KeyWatermark), "watermark = the split point, not the length")
	assert.Equal(t, contentid.Fingerprint(raw[split-1]), ctx.getStr(state.KeyFingerprint))
	require.Len(t, req.Contents, 1+len(raw)-split)
	assert.Contains(t, textcut.ContentText(req.Contents[0]), "SUMMARY-1")
	for i, c := range raw[split:] {
		assert.Same(t, c, req.Contents[1+i], "kept contents are sent verbatim")
	}
	in := contentsMarkers(rs.requests()[0].Contents)
	assert.Equal(t, contentsMarkers(raw[:split]), in, "the summarizer sees exactly the contents before the split")

	// The next steps: the model calls a tool, a sixth turn arrives. The
	// summary replaces [0, split) and the kept tail survives (the earlier
	// guard set the watermark to the length and lost it).
	raw = append(raw, callMsg("kubectl_logs", map[string]any{"pod": "C4-MARK"}),
		respMsg("kubectl_logs", map[string]any{"output": "R4-MARK ok"}), modelMsg("M4-MARK done"))
	raw = append(raw, swHistory(5, 7, 1_000)...)
	ctx.withUser(textcut.ContentText(raw[len(raw)-4]))
	req = request(raw...)
	_, err = g.beforeModel(ctx, req)
	require.NoError(t, err)
	require.Len(t, rs.requests(), 1, "4 turns since the watermark: no compaction")
	require.Len(t, req.Contents, 1+len(raw)-split)
	assert.Equal(t, contentsMarkers(raw[split:]), contentsMarkers(req.Contents[1:]), "the kept tail and everything after it")

	// Turn 7 starts: 5 turns since the watermark. The second summarizer input
	// holds the previous summary once and only the contents from the
	// watermark up to the new split, nothing from before the watermark.
	raw = append(raw, userMsg("U7-MARK and then?"))
	ctx.withUser("U7-MARK and then?")
	req = request(raw...)
	_, err = g.beforeModel(ctx, req)
	require.NoError(t, err)
	reqs := rs.requests()
	require.Len(t, reqs, 2)
	split2 := ctx.getInt(state.KeyWatermark)
	assert.Equal(t, len(raw)-1-4, split2, "turn 6 and the new request kept")
	assert.Equal(t, "SUMMARY-1", reqs[1].PreviousSummary)
	assert.Equal(t, contentsMarkers(raw[split:split2]), contentsMarkers(reqs[1].Contents))
	for m := range contentsMarkers(raw[:split]) {
		assert.NotContains(t, reqs[1].Transcript, m, "content before the previous watermark re-summarized")
	}
	assert.NotContains(t, reqs[1].Transcript, "SUMMARY-1", "the previous summary is not rendered as a message")
	assert.Equal(t, 1, strings.Count(requestText(req), summaryHeader))
	assert.Equal(t, 1, strings.Count(requestText(req), continuationLead))
	assert.Contains(t, requestText(req), "U7-MARK")
}

func TestSlidingWindow_Reasons(t *testing.T) {
	tests := []struct {
		name       string
		opts       []AgentOption
		raw        []*genai.Content
		wantReason string
	}{
		{"under both triggers", []AgentOption{WithSlidingWindow(10), WithMaxTokens(200_000)}, swHistory(0, 10, 100), ""},
		{"turns", []AgentOption{WithSlidingWindow(10), WithMaxTokens(200_000)}, swHistory(0, 11, 600), "turns"},
		{"turns too short to be worth a summary", []AgentOption{WithSlidingWindow(10), WithMaxTokens(200_000)}, swHistory(0, 11, 5), ""},
		{"short turns, once they weigh enough", []AgentOption{WithSlidingWindow(10), WithMaxTokens(200_000)}, swHistory(0, 80, 5), "turns"},
		{"tokens before turns", []AgentOption{WithSlidingWindow(10), WithMaxTokens(8_000)}, swHistory(0, 6, 1_200), "tokens"},
		{"function responses are not turns", []AgentOption{WithSlidingWindow(2), WithMaxTokens(200_000)},
			append(swHistory(0, 2, 100), swHistory(2, 4, 100)[1:3]...), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var events []CompactionEvent
			g := newGuard(nil, WithLogger(quietTestLogger()), WithOnCompaction(func(_ context.Context, e CompactionEvent) { events = append(events, e) }))
			g.addModel("a", fixedSummary("S"), tt.opts...)
			require.NoError(t, g.Err())
			ctx := newFakeCtx("a")
			req := request(tt.raw...)
			_, err := g.beforeModel(ctx, req)
			require.NoError(t, err)
			if tt.wantReason == "" {
				assert.Empty(t, events)
				return
			}
			require.Len(t, events, 1)
			assert.Equal(t, tt.wantReason, events[0].Reason)
			assert.Equal(t, StrategySlidingWindow, events[0].Strategy)
			assert.NoError(t, coretest.CheckPairs(req.Contents))
			assert.LessOrEqual(t, events[0].TokensAfter, events[0].Threshold)
		})
	}
}

func quietTestLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// fillerOf returns filler text whose calibrated count (at the default
// factor) is as close to target tokens as possible without exceeding it.
func fillerOf(target, seed int) string {
	cal := newCalibration(state.Agent{}, testEst)
	lo, hi := 1, target*8
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if cal.Scale(testEst.Text(coretest.Filler(mid, seed))) <= target {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return coretest.Filler(lo, seed)
}

// TestSlidingWindow_TailShrinks sets up the narrow case where the first
// summary, long but within its length tolerance, does not fit beside the
// kept turns: the next attempt keeps one turn fewer and summarizes one more,
// and the request still holds one summary and one continuation. Since the
// summary asked is bounded by half of what it replaces, a turn-triggered
// compaction always fits; this takes a token-triggered one, with a system
// prompt that leaves little room under the threshold.
func TestSlidingWindow_TailShrinks(t *testing.T) {
	const win = 100_000 // threshold 80k, buffer 20k
	lim := window.New(win)
	cal := newCalibration(state.Agent{}, testEst)
	user := "U4-MARK go on"

	// A system prompt that leaves about 11k tokens under the threshold:
	// 8.8k for the summary, the kept turns may take half the rest.
	system := genai.NewContentFromText(fillerOf(68_800, 5), genai.RoleUser)
	probe := request(userMsg(user))
	probe.Config.SystemInstruction = system
	bare := cal.Scale(requestTokens(testEst, engineReq(probe)) - estimate.Contents(testEst, probe.Contents) + testEst.Content(summaryContent("", user, false)))
	budget := summaryBudget(lim, bare, 0)
	room := lim.Threshold - bare - budget
	share := int(float64(room) * slidingTailShare)

	// Three large turns to summarize (at least twice the budget, so the
	// full budget is asked), then a fourth turn and the new request, which
	// keepTurns(4) = 2 keeps: about 80% of their share.
	var raw []*genai.Content
	for size := 50; ; size += 10 {
		raw = append(swHistory(3, 4, size), userMsg(user))
		if cal.Scale(estimate.Contents(testEst, raw)) >= share*8/10 {
			break
		}
	}
	tail2 := cal.Scale(estimate.Contents(testEst, raw))
	for size := 2_000; ; size += 500 {
		head := swHistory(0, 3, size)
		if cal.Scale(estimate.Contents(testEst, head)) >= 2*budget+2_000 {
			raw = append(head, raw...)
			break
		}
	}
	// The summarizer writes the length it is told (in uncalibrated tokens)
	// and a little more, within the tolerance.
	long := func(asked int) string {
		want := int(float64(asked) * (oversizeTolerance - 0.015))
		for n := asked; ; n += max(asked/200, 1) {
			if s := fillerOf(n, 77); testEst.Text(s) >= want {
				return s
			}
		}
	}
	told := cal.Unscale(budget)
	predicted := bare + cal.Scale(testEst.Text(long(told))) + tail2
	t.Logf("bare %d, budget %d, room %d, share %d, kept %d, predicted %d, threshold %d", bare, budget, room, share, tail2, predicted, lim.Threshold)
	require.LessOrEqual(t, tail2, share, "test setup: two turns must fit their share")
	require.Greater(t, predicted, lim.Threshold+200, "test setup: the long summary must not fit beside two turns")

	rs := &recordingSummarizer{reply: func(n int, req SummaryRequest) (string, error) {
		if n == 1 {
			return long(req.SummaryTokens), nil
		}
		return "SHORT-SUMMARY", nil
	}}
	var events []CompactionEvent
	logs := &logBuffer{}
	g := newGuard(NewCrushRegistry(WithRegistryLogger(logs.logger())), WithLogger(logs.logger()),
		WithOnCompaction(func(_ context.Context, e CompactionEvent) { events = append(events, e) }))
	g.addModel("a", nil, WithSummarizer(rs), WithSlidingWindow(4), WithMaxTokens(win))
	require.NoError(t, g.Err())
	ctx := newFakeCtx("a").withUser(user)
	req := request(raw...)
	req.Config.SystemInstruction = system
	_, err := g.beforeModel(ctx, req)
	require.NoError(t, err)

	reqs := rs.requests()
	require.Len(t, reqs, 2, "a second summary keeping fewer turns")
	require.Len(t, events, 1)
	assert.Equal(t, "tokens", events[0].Reason)
	assert.Equal(t, told, reqs[0].SummaryTokens, "the span is large enough for the full budget")
	assert.Equal(t, 2, events[0].SummarizerCalls)
	assert.False(t, events[0].Fallback)
	assert.Contains(t, logs.String(), "keeping fewer")
	assert.Len(t, reqs[0].Contents, 12, "first attempt: turns 0-2")
	assert.Len(t, reqs[1].Contents, 16, "retry: turns 0-3")
	w := ctx.getInt(state.KeyWatermark)
	assert.Equal(t, len(raw)-1, w, "only the newest turn (the new request) kept")
	assert.Equal(t, contentid.Fingerprint(raw[w-1]), ctx.getStr(state.KeyFingerprint))
	text := requestText(req)
	assert.Equal(t, 1, strings.Count(text, summaryHeader))
	assert.Equal(t, 1, strings.Count(text, continuationLead), "one continuation after a retry")
	assert.Contains(t, text, "SHORT-SUMMARY")
	assert.NotContains(t, text, long(told)[:100])
	assert.LessOrEqual(t, events[0].TokensAfter, lim.Threshold)
}

// TestSlidingWindow_FullSummaryWhenNewestTurnTooLarge: when even the newest
// turn does not fit its share, everything is summarized (threshold
// behaviour): one message, watermark at the end.
func TestSlidingWindow_FullSummaryWhenNewestTurnTooLarge(t *testing.T) {
	sum := fixedSummary("FULL")
	g, _ := newTestGuard(t, sum, WithSlidingWindow(6), WithMaxTokens(8_000))
	ctx := newFakeCtx("a").withUser("U9-MARK look at this")
	raw := append(swHistory(0, 3, 200), userMsg("U9-MARK look at this"),
		callMsg("kubectl_logs", nil), respMsg("kubectl_logs", map[string]any{"output": coretest.Filler(14_000, 3)}))
	req := request(raw...)
	_, err := g.beforeModel(ctx, req)
	require.NoError(t, err)
	assert.Equal(t, 1, sum.Calls())
	require.Len(t, req.Contents, 1)
	assert.Contains(t, textcut.ContentText(req.Contents[0]), "FULL")
	assert.Contains(t, textcut.ContentText(req.Contents[0]), "U9-MARK", "the continuation quotes the request")
	assert.Equal(t, len(raw), ctx.getInt(state.KeyWatermark))
}

func TestSlidingWindow_NothingToSummarizeAfterWatermark(t *testing.T) {
	// One huge turn right after the watermark: no split leaves anything to
	// summarize before the newest turn, so the full summary is taken.
	sum := fixedSummary("S2")
	g, _ := newTestGuard(t, sum, WithSlidingWindow(3), WithMaxTokens(8_000))
	ctx := newFakeCtx("a").withUser("U1-MARK next")
	base := swHistory(0, 1, 100)
	ctx.set(state.KeySummary, "S1")
	ctx.set(state.KeyWatermark, len(base))
	ctx.set(state.KeyFingerprint, contentid.Fingerprint(base[len(base)-1]))
	raw := append(base, userMsg("U1-MARK next"), callMsg("kubectl_logs", nil),
		respMsg("kubectl_logs", map[string]any{"output": coretest.Filler(20_000, 4)}))
	req := request(raw...)
	_, err := g.beforeModel(ctx, req)
	require.NoError(t, err)
	require.Equal(t, 1, sum.Calls())
	assert.Contains(t, sum.lastInput(), "S1", "previous summary passed on")
	assert.NotContains(t, sum.lastInput(), "U0-MARK", "nothing before the watermark")
	assert.Len(t, req.Contents, 1)
	assert.Equal(t, len(raw), ctx.getInt(state.KeyWatermark))
}

func TestPairSafeSplit(t *testing.T) {
	call := func(ids ...string) *genai.Content {
		c := &genai.Content{Role: genai.RoleModel}
		for _, id := range ids {
			name, callID, _ := strings.Cut(id, "#")
			c.Parts = append(c.Parts, &genai.Part{FunctionCall: &genai.FunctionCall{Name: name, ID: callID}})
		}
		return c
	}
	resp := func(ids ...string) *genai.Content {
		c := &genai.Content{Role: genai.RoleUser}
		for _, id := range ids {
			name, callID, _ := strings.Cut(id, "#")
			c.Parts = append(c.Parts, &genai.Part{FunctionResponse: &genai.FunctionResponse{Name: name, ID: callID}})
		}
		return c
	}
	tests := []struct {
		name  string
		cs    []*genai.Content
		split int
		want  int
		// odd marks histories ADK does not produce (a late response), which
		// the kit's checker rejects whatever the split.
		odd bool
	}{
		{"at a turn start", []*genai.Content{userMsg("a"), call("x"), resp("x"), modelMsg("m"), userMsg("b")}, 4, 4, false},
		{"between call and response", []*genai.Content{userMsg("a"), call("x"), resp("x"), modelMsg("m")}, 2, 1, false},
		{"parallel calls", []*genai.Content{userMsg("a"), call("x", "y"), resp("y", "x"), modelMsg("m")}, 2, 1, false},
		{"by id", []*genai.Content{userMsg("a"), call("x#1", "x#2"), resp("x#2", "x#1")}, 2, 1, false},
		{"same name answered twice: by name in order", []*genai.Content{
			userMsg("a"), call("x"), modelMsg("m"), call("x"), resp("x"), resp("x"),
		}, 3, 1, true},
		{"chain of steps", []*genai.Content{userMsg("a"), call("x"), resp("x"), call("y"), resp("y"), modelMsg("m")}, 4, 3, false},
		{"orphan with no call anywhere is left alone", []*genai.Content{userMsg("a"), resp("z"), modelMsg("m")}, 1, 1, true},
		{"start", []*genai.Content{call("x"), resp("x")}, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := pairs.SafeStart(tt.cs, tt.split)
			assert.Equal(t, tt.want, got)
			if got > 0 && got < len(tt.cs) && !tt.odd {
				kept := append([]*genai.Content{userMsg("summary")}, tt.cs[got:]...)
				assert.NoError(t, coretest.CheckPairs(kept), "the kept contents pass the kit's checker")
			}
		})
	}
}

// TestCheckPairs_CatchesBrokenSplits shows that the kit's checker, which the
// driver runs on every request of every multi-turn test, catches what a bad
// split produces; contextguardtest's TestCheckPairs covers its full table.
func TestCheckPairs_CatchesBrokenSplits(t *testing.T) {
	cs := []*genai.Content{userMsg("a"), callMsg("x", nil), respMsg("x", nil), modelMsg("m")}
	orphanedResponse := append([]*genai.Content{userMsg("summary")}, cs[2:]...)
	assert.ErrorContains(t, coretest.CheckPairs(orphanedResponse), "has no preceding call")
	unansweredCall := []*genai.Content{userMsg("summary"), callMsg("x", nil), userMsg("next")}
	assert.ErrorContains(t, coretest.CheckPairs(unansweredCall), "not answered")
	assert.NoError(t, coretest.CheckPairs(append([]*genai.Content{userMsg("summary")}, cs[pairs.SafeStart(cs, 2):]...)))
}

func TestKeepTurnsAndTurnCount(t *testing.T) {
	for maxTurns, want := range map[int]int{1: 1, 2: 1, 3: 2, 6: 3, 20: 10} {
		assert.Equal(t, want, keepTurns(maxTurns), "maxTurns %d", maxTurns)
	}
	cs := []*genai.Content{
		userMsg("a"), callMsg("x", nil), respMsg("x", nil), modelMsg("m"),
		userMsg(convo.SyntheticContinuations[0]),
		{Role: genai.RoleUser, Parts: []*genai.Part{{Text: "thinking", Thought: true}}},
		{Role: genai.RoleUser, Parts: []*genai.Part{nil, {Text: "b"}}},
		nil,
	}
	starts := 0
	for _, c := range cs {
		if convo.IsUserMessage(c) {
			starts++
		}
	}
	assert.Equal(t, 2, starts, "a user's text starts a turn; calls, responses, continuations, thoughts and nil do not")
}

// TestSlidingWindow_Observability: a sliding-window compaction reports
// through the same hook, span and log line as the threshold strategy, with
// its strategy and reason.
func TestSlidingWindow_Observability(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	var events []CompactionEvent
	logs := &logBuffer{}
	g := newGuard(NewCrushRegistry(WithRegistryLogger(logs.logger())), WithLogger(logs.logger()), WithTracerProvider(tp),
		WithOnCompaction(func(_ context.Context, e CompactionEvent) { events = append(events, e) }))
	g.addModel("a", fixedSummary("S"), WithSlidingWindow(2), WithMaxTokens(200_000))
	require.NoError(t, g.Err())
	raw := swHistory(0, 3, 2_000)
	_, err := g.beforeModel(newFakeCtx("a"), request(raw...))
	require.NoError(t, err)

	require.Len(t, events, 1)
	ev := events[0]
	assert.Equal(t, StrategySlidingWindow, ev.Strategy)
	assert.Equal(t, "turns", ev.Reason)
	assert.Equal(t, 8, ev.ContentsSummarized, "turns 0 and 1; keepTurns(2) = 1 kept")
	assert.Equal(t, 1, ev.SummarizerCalls)
	assert.Less(t, ev.TokensAfter, ev.TokensBefore)
	ended := spans.Ended()
	require.Len(t, ended, 1)
	attrs := map[attribute.Key]attribute.Value{}
	for _, kv := range ended[0].Attributes() {
		attrs[kv.Key] = kv.Value
	}
	assert.Equal(t, "sliding_window", attrs["contextguard.strategy"].AsString())
	assert.Equal(t, "turns", attrs["contextguard.reason"].AsString())
	assert.Contains(t, logs.String(), "strategy=sliding_window")
	assert.Contains(t, logs.String(), "reason=turns")
	assert.NotContains(t, logs.String(), "not implemented", "the stub's warning is gone")
}
