package core

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/coretest"
	"github.com/adk-contextguard/contextguard/core/internal/contentid"
	"github.com/adk-contextguard/contextguard/core/internal/convo"
	"github.com/adk-contextguard/contextguard/core/internal/estimate"
	"github.com/adk-contextguard/contextguard/core/internal/state"
	"github.com/adk-contextguard/contextguard/core/internal/textcut"
	"github.com/adk-contextguard/contextguard/core/internal/window"
)

func request(cs ...*genai.Content) *Request {
	return &Request{Model: "gemini-2.5-flash", Contents: cs, Config: &genai.GenerateContentConfig{}}
}

func TestBeforeModel_UnderThreshold(t *testing.T) {
	sum := fixedSummary("unused")
	g, _ := newTestGuard(t, sum, WithMaxTokens(100_000))
	ctx := newFakeCtx("a")
	req := request(coretest.History(3, 200)...)
	before := len(req.Contents)

	resp, err := g.beforeModel(ctx, req)
	require.NoError(t, err)
	assert.Nil(t, resp)
	assert.Len(t, req.Contents, before)
	assert.Zero(t, sum.Calls())
	assert.Equal(t, requestTokens(testEst, engineReq(req)), ctx.getInt(state.KeyLastEstimate))
}

func TestBeforeModel_UnknownAgentAndNilInput(t *testing.T) {
	g, _ := newTestGuard(t, fixedSummary("x"), WithMaxTokens(1_024))
	req := request(coretest.History(50, 400)...)
	n := len(req.Contents)
	_, err := g.beforeModel(newFakeCtx("other"), req)
	require.NoError(t, err)
	assert.Len(t, req.Contents, n, "agents not added pass through untouched")

	assert.NotPanics(t, func() {
		_, _ = g.beforeModel(newFakeCtx("a"), nil)
		_, _ = g.beforeModel(nil, req)
		_, _ = g.beforeModel(newFakeCtx("a"), &Request{})
		_, _ = g.beforeModel(newFakeCtx("a"), &Request{Contents: []*genai.Content{nil, {Parts: []*genai.Part{nil, {}}}}})
	})
}

// compactOnce drives one compaction of a 40-message history in an 8k window.
func compactOnce(t *testing.T, g *Guard, ctx *fakeCtx) (*Request, []*genai.Content) {
	t.Helper()
	raw := append(coretest.History(20, 300), userMsg("LATEST please fix the build"))
	ctx.withUser("LATEST please fix the build")
	req := request(raw...)
	_, err := g.beforeModel(ctx, req)
	require.NoError(t, err)
	return req, raw
}

func TestBeforeModel_CompactsAndPersists(t *testing.T) {
	sum := fixedSummary("SUMMARY-ONE: the user wants the build fixed.")
	g, _ := newTestGuard(t, sum, WithMaxTokens(8_000))
	ctx := newFakeCtx("a")
	req, raw := compactOnce(t, g, ctx)

	assert.Equal(t, 1, sum.Calls())
	require.Len(t, req.Contents, 1, "the threshold strategy sends one summary message")
	text := textcut.ContentText(req.Contents[0])
	assert.Contains(t, text, "SUMMARY-ONE")
	assert.Contains(t, text, "LATEST please fix the build", "the continuation carries the user's request")
	assert.Equal(t, genai.RoleUser, req.Contents[0].Role)
	assert.Contains(t, sum.lastInput(), "OLD-U0", "the summarizer sees the raw history")

	assert.Equal(t, "SUMMARY-ONE: the user wants the build fixed.", ctx.getStr(state.KeySummary))
	assert.Equal(t, len(raw), ctx.getInt(state.KeyWatermark))
	assert.Equal(t, contentid.Fingerprint(raw[len(raw)-1]), ctx.getStr(state.KeyFingerprint))
	assert.Zero(t, ctx.getInt(state.KeyRealTokens), "calibration reset")
	assert.Equal(t, requestTokens(testEst, engineReq(req)), ctx.getInt(state.KeyLastEstimate))
	assert.Equal(t, 1, ctx.getInt(state.KeyCompactions))
	assert.Positive(t, ctx.getInt(state.KeySummarizedAt))

	// Next step: the model answered and called a tool; ADK rebuilds the
	// contents from all events. The summary replaces what it covers.
	next := append(append([]*genai.Content{}, raw...), callMsg("build", map[string]any{"target": "all"}), respMsg("build", map[string]any{"output": "ok"}))
	req2 := request(next...)
	_, err := g.beforeModel(ctx, req2)
	require.NoError(t, err)
	assert.Equal(t, 1, sum.Calls(), "no second summary")
	require.Len(t, req2.Contents, 3)
	assert.Contains(t, textcut.ContentText(req2.Contents[0]), "SUMMARY-ONE")
	assert.NotNil(t, req2.Contents[1].Parts[0].FunctionCall)
	assert.NotContains(t, requestText(req2), "OLD-U0")
}

func TestSecondCompaction_PreviousSummaryOnce(t *testing.T) {
	sum := fixedSummary("")
	n := 0
	sum.reply = func(context.Context, *Request) (string, error) {
		n++
		return fmt.Sprintf("PREV-SUMMARY-%d", n), nil
	}
	g, _ := newTestGuard(t, sum, WithMaxTokens(8_000))
	ctx := newFakeCtx("a")
	_, raw := compactOnce(t, g, ctx)

	grown := append(append([]*genai.Content{}, raw...), coretest.History(20, 300)...)
	grown = append(grown, userMsg("NEWEST question"))
	ctx.withUser("NEWEST question")
	req := request(grown...)
	_, err := g.beforeModel(ctx, req)
	require.NoError(t, err)
	require.Equal(t, 2, sum.Calls())
	in := sum.lastInput()
	assert.Equal(t, 1, strings.Count(in, "PREV-SUMMARY-1"), "previous summary exactly once in the summarizer input")
	assert.Equal(t, 0, strings.Count(in, summaryHeader), "the summary message itself is not rendered again")
	assert.Contains(t, textcut.ContentText(req.Contents[0]), "PREV-SUMMARY-2")
	assert.Equal(t, len(grown), ctx.getInt(state.KeyWatermark))
}

func TestWatermark(t *testing.T) {
	base := coretest.History(4, 100)
	synthetic := userMsg(convo.SyntheticContinuations[0])
	tests := []struct {
		name     string
		st       func(raw []*genai.Content) state.Agent
		raw      []*genai.Content
		wantCut  int
		wantLog  string
		wantInj  bool
		wantSize int
	}{
		{
			name: "fingerprint matches at the watermark",
			raw:  base,
			st: func(raw []*genai.Content) state.Agent {
				return state.Agent{Watermark: 4, Fingerprint: contentid.Fingerprint(raw[3])}
			},
			wantCut: 4, wantInj: true, wantSize: 5,
		},
		{
			name: "content inserted before the watermark: found by fingerprint",
			raw:  append([]*genai.Content{userMsg("inserted")}, base...),
			st: func(raw []*genai.Content) state.Agent {
				return state.Agent{Watermark: 4, Fingerprint: contentid.Fingerprint(raw[4])}
			},
			wantCut: 5, wantInj: true, wantSize: 5,
		},
		{
			name:    "changed prefix: no blind cut",
			raw:     base,
			st:      func([]*genai.Content) state.Agent { return state.Agent{Watermark: 4, Fingerprint: "0000000000000000"} },
			wantLog: "fingerprint mismatch", wantSize: 8,
		},
		{
			name:    "watermark beyond the contents is ignored",
			raw:     base,
			st:      func([]*genai.Content) state.Agent { return state.Agent{Watermark: 40, Fingerprint: "0000000000000000"} },
			wantLog: "watermark beyond the contents", wantSize: 8,
		},
		{
			name:    "earlier guard's state without fingerprint, beyond the contents",
			raw:     base,
			st:      func([]*genai.Content) state.Agent { return state.Agent{Watermark: 40} },
			wantLog: "watermark beyond the contents", wantSize: 8,
		},
		{
			name:    "earlier guard's state without fingerprint",
			raw:     base,
			st:      func([]*genai.Content) state.Agent { return state.Agent{Watermark: 6} },
			wantCut: 6, wantInj: true, wantSize: 3,
		},
		{
			name: "synthetic trailing message does not shift the watermark",
			raw:  append(append([]*genai.Content{}, base...), synthetic),
			st: func(raw []*genai.Content) state.Agent {
				return state.Agent{Watermark: 8, Fingerprint: contentid.Fingerprint(raw[7])}
			},
			wantCut: 8, wantInj: true, wantSize: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs := &logBuffer{}
			st := tt.st(tt.raw)
			st.Summary = "S"
			req := request(tt.raw...)
			tr := newTestTurn(req, st, logs.logger())
			inj, cs := injectSummary(tr)
			assert.Equal(t, tt.wantInj, inj.injected)
			assert.Equal(t, tt.wantCut, inj.cut)
			assert.Len(t, cs, tt.wantSize)
			if tt.wantLog != "" {
				assert.Contains(t, logs.String(), tt.wantLog)
				assert.Contains(t, logs.String(), "level=WARN")
			}
		})
	}
}

func TestWatermark_SyntheticTrailingMessageNotCovered(t *testing.T) {
	sum := fixedSummary("S1")
	g, _ := newTestGuard(t, sum, WithMaxTokens(8_000))
	ctx := newFakeCtx("a").withUser("do it")
	raw := append(coretest.History(20, 300), userMsg("do it"), modelMsg("calling"), userMsg(convo.SyntheticContinuations[0]))
	_, err := g.beforeModel(ctx, request(raw...))
	require.NoError(t, err)
	require.Equal(t, 1, sum.Calls())
	assert.Equal(t, len(raw)-1, ctx.getInt(state.KeyWatermark), "the synthetic message is not counted")

	// The adapter's message is not in the event log; the next real content
	// takes its place and must survive the cut.
	next := append(append([]*genai.Content{}, raw[:len(raw)-1]...), userMsg("REAL follow-up"))
	req := request(next...)
	_, err = g.beforeModel(ctx, req)
	require.NoError(t, err)
	require.Len(t, req.Contents, 2)
	assert.Contains(t, textcut.ContentText(req.Contents[1]), "REAL follow-up")
}

func TestSystemPromptLargerThanWindow(t *testing.T) {
	sum := fixedSummary("S")
	g, logs := newTestGuard(t, sum, WithMaxTokens(8_000))
	ctx := newFakeCtx("a").withUser("hello")
	system := genai.NewContentFromText(strings.Repeat("rule ", 16_000), genai.RoleUser) // ~20k tokens
	var raw []*genai.Content
	for step := range 5 {
		raw = append(raw, userMsg(fmt.Sprintf("hello %d", step)))
		req := request(raw...)
		req.Config.SystemInstruction = system
		_, err := g.beforeModel(ctx, req)
		require.ErrorIs(t, err, ErrIrreducible, "step %d", step)
		raw = append(raw, modelMsg("ok"))
	}
	assert.Zero(t, sum.Calls(), "no summary can help; none is paid for")
	assert.Equal(t, 1, strings.Count(logs.String(), "alone exceed the context window"), "one clear log line")
}

func TestSystemPromptOverThreshold_NoCompactionLoop(t *testing.T) {
	sum := fixedSummary("S")
	g, logs := newTestGuard(t, sum, WithMaxTokens(8_000))
	ctx := newFakeCtx("a").withUser("hello")
	// A system prompt of about 6,800 calibrated tokens: over the 6,400
	// threshold, under the window; sized by the estimator so a refit of its
	// weights does not move it across either line.
	size := 4_000
	for float64(testEst.Text(coretest.Filler(size, 99)))*estimate.DefaultCorrection < 6_800 {
		size += 100
	}
	system := genai.NewContentFromText(coretest.Filler(size, 99), genai.RoleUser)
	var raw []*genai.Content
	for step := range 30 {
		raw = append(raw, userMsg(fmt.Sprintf("hello %d", step)), modelMsg("ok"))
		req := request(raw...)
		req.Config.SystemInstruction = system
		_, err := g.beforeModel(ctx, req)
		require.NoError(t, err)
	}
	assert.LessOrEqual(t, sum.Calls(), 3, "compacting again only after real growth; got %d summaries", sum.Calls())
	assert.Positive(t, sum.Calls())
	assert.Equal(t, 1, strings.Count(logs.String(), "still over the threshold"), "one clear log line")
}

// maxSteadyCallAllocs bounds the allocations of a call that adds one new
// message to a session the guard served before and compacts nothing: the
// state delta's values, the new message's count and the prefix record.
// Building the per-agent state key names on every call took it from 15 to
// 33.
const maxSteadyCallAllocs = 20

// TestBeforeModel_SteadyCallAllocations: the hot path allocates a bounded
// number of times per call, whatever the history's size.
func TestBeforeModel_SteadyCallAllocations(t *testing.T) {
	if raceEnabled {
		// The race detector changes allocation counts; make test runs this
		// test without it too.
		return
	}
	for _, n := range []int{10, 200} {
		g, _ := newTestGuard(t, fixedSummary("unused"), WithMaxTokens(10_000_000))
		ctx := newFakeCtx("a").withUser("go on")
		hist := append(coretest.History(n, 300), userMsg("go on"))
		_, err := g.beforeModel(ctx, request(hist...))
		require.NoError(t, err)
		const runs = 50
		fresh := coretest.History(runs+1, 200)
		i := 0
		allocs := testing.AllocsPerRun(runs, func() {
			hist = append(hist, fresh[i])
			i++
			if _, err := g.beforeModel(ctx, request(hist[:len(hist):len(hist)]...)); err != nil {
				t.Fatal(err)
			}
		})
		assert.LessOrEqual(t, allocs, float64(maxSteadyCallAllocs), "history of %d exchanges", n)
		t.Logf("history of %d exchanges: %.0f allocations per call", n, allocs)
	}
}

// TestDecide_Trigger: a call compacts past the threshold, or, after a
// compaction that could not get below it, only once the request has grown
// halfway from where that compaction got to the room left.
func TestDecide_Trigger(t *testing.T) {
	lim := window.New(10_000) // threshold 8,000; no output room kept
	cases := []struct {
		name  string
		floor int
		want  int
	}{
		{name: "no floor: the threshold", want: 8_000},
		{name: "a floor below the threshold: the threshold", floor: 7_000, want: 8_000},
		{name: "a floor past the threshold: halfway to the room", floor: 9_000, want: 9_500},
		{name: "a floor at the room: the threshold", floor: 10_000, want: 8_000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTestTurn(request(userMsg("hi")), state.Agent{Floor: tc.floor}, quietLogger)
			tr.lim = lim
			assert.Equal(t, tc.want, tokenTrigger(tr.lim, tr.prev.Floor))
		})
	}
}

// dueStrategy is a strategy whose own trigger (the sliding window's turns)
// says a compaction is due.
type dueStrategy struct{ thresholdStrategy }

func (dueStrategy) due(callView, []*genai.Content) (string, []any) {
	return ReasonTurns, []any{"turns", 3}
}

// TestDecide_CompactionReason: why a call compacts, in the order the
// reasons are weighed: a guard switched off for the session never does; a
// requested compaction comes first, then the token trigger, then the stop
// at the output limit, then the strategy's own trigger.
func TestDecide_CompactionReason(t *testing.T) {
	const trigger = 8_000
	cases := []struct {
		name   string
		mode   callMode
		prev   state.Agent
		count  int
		policy compactionStrategy
		want   string
	}{
		{name: "under the trigger, nothing due", count: 100, policy: thresholdStrategy{}, want: ""},
		{name: "over the trigger", count: trigger + 1, policy: thresholdStrategy{}, want: ReasonTokens},
		{name: "at the trigger is not over it", count: trigger, policy: thresholdStrategy{}, want: ""},
		{name: "a requested compaction, under the trigger", count: 100, prev: state.Agent{Request: state.Request{Pending: true}}, policy: thresholdStrategy{}, want: ReasonRequested},
		{name: "a requested compaction before the token trigger", count: trigger + 1, prev: state.Agent{Request: state.Request{Pending: true}}, policy: thresholdStrategy{}, want: ReasonRequested},
		{name: "the output-limit stop", count: 100, prev: state.Agent{CompactNext: 1}, policy: thresholdStrategy{}, want: ReasonOutputLimit},
		{name: "the token trigger before the output-limit stop", count: trigger + 1, prev: state.Agent{CompactNext: 1}, policy: thresholdStrategy{}, want: ReasonTokens},
		{name: "the strategy's own trigger", count: 100, policy: dueStrategy{}, want: ReasonTurns},
		{name: "switched off: nothing, even over the trigger and requested", mode: modeApplyOnly, count: trigger + 1, prev: state.Agent{Request: state.Request{Pending: true}}, policy: dueStrategy{}, want: ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTestTurn(request(userMsg("hi")), tc.prev, quietLogger)
			tr.mode, tr.cfg.policy = tc.mode, tc.policy
			reason, why := tr.compactionReason(tc.count, trigger, tr.Raw)
			assert.Equal(t, tc.want, reason)
			if tc.want == ReasonTurns {
				assert.Equal(t, []any{"turns", 3}, why, "the strategy's log fields")
			}
		})
	}
}
