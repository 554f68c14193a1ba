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

	"github.com/adk-contextguard/contextguard/core/internal/calib"
	"github.com/adk-contextguard/contextguard/core/internal/contentid"
	"github.com/adk-contextguard/contextguard/core/internal/state"
	"github.com/adk-contextguard/contextguard/core/internal/textcut"
)

func TestOnModelError_PassThrough(t *testing.T) {
	overflow := &coretest.OverflowError{Style: coretest.ErrorGemini, Tokens: 9_000, Limit: 8_000}
	recovery := &fakeLLM{name: "gemini-2.5-flash", reply: func(context.Context, *Request) (string, error) { return "recovered", nil }}
	tests := []struct {
		name  string
		agent string
		err   error
	}{
		{"503", "a", genai.APIError{Code: 503, Status: "UNAVAILABLE", Message: "overloaded"}},
		{"timeout", "a", context.DeadlineExceeded},
		{"nil error", "a", nil},
		{"agent not added", "other", overflow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sum := fixedSummary("S")
			g, logs := newTestGuard(t, sum, WithMaxTokens(8_000), WithRecoveryModel(recovery))
			ctx := newFakeCtx(tt.agent).withUser("LATEST")
			req := request(append(coretest.History(20, 300), userMsg("LATEST"))...)
			n := len(req.Contents)
			resp, err := g.onModelError(ctx, req, tt.err)
			require.NoError(t, err)
			assert.Nil(t, resp)
			assert.Len(t, req.Contents, n, "the request is untouched")
			assert.Zero(t, sum.Calls())
			assert.Zero(t, recovery.Calls())
			assert.Empty(t, ctx.state.m, "no state written")
			assert.NotContains(t, logs.String(), "too long")
		})
	}
	t.Run("nil context", func(t *testing.T) {
		g, _ := newTestGuard(t, fixedSummary("S"))
		resp, err := g.onModelError(nil, request(userMsg("x")), overflow)
		assert.NoError(t, err)
		assert.Nil(t, resp)
	})
}

func TestOnModelError_WithoutRecoveryModel_NextCallCompactsFirst(t *testing.T) {
	for _, style := range []coretest.ErrorStyle{coretest.ErrorGemini, coretest.ErrorAnthropic, coretest.ErrorOpenAI} {
		t.Run(style.String(), func(t *testing.T) {
			sum := fixedSummary("SUMMARY-AFTER-OVERFLOW")
			var events []CompactionEvent
			logs := &logBuffer{}
			g := newGuard(NewCrushRegistry(WithRegistryLogger(logs.logger())), WithLogger(logs.logger()),
				WithOnCompaction(func(_ context.Context, e CompactionEvent) { events = append(events, e) }))
			g.addModel("a", sum, WithMaxTokens(100_000))
			require.NoError(t, g.Err())
			ctx := newFakeCtx("a").withUser("LATEST please fix the build")
			raw := append(coretest.History(20, 300), userMsg("LATEST please fix the build"))

			// Far under the guard's threshold by its estimate, yet rejected.
			req := request(raw...)
			_, err := g.beforeModel(ctx, req)
			require.NoError(t, err)
			require.Zero(t, sum.Calls())
			sent := requestTokens(testEst, engineReq(req))
			resp, err := g.onModelError(ctx, req, &coretest.OverflowError{Style: style, Tokens: 120_000, Limit: 100_000})
			require.NoError(t, err, "the provider's error is returned by ADK itself")
			assert.Nil(t, resp)
			assert.Contains(t, logs.String(), "rejected the request as too long")

			req2 := request(raw...)
			_, err = g.beforeModel(ctx, req2)
			require.NoError(t, err)
			assert.Equal(t, 1, sum.Calls(), "the next call compacts first")
			assert.Contains(t, logs.String(), "compacting first")
			require.Len(t, events, 1)
			assert.Equal(t, 120_000, events[0].TokensBefore, "the real count is the calibration signal")
			assert.Contains(t, requestText(req2), "LATEST please fix the build")
			assert.Contains(t, textcut.ContentText(req2.Contents[0]), "SUMMARY-AFTER-OVERFLOW")
			// The correction factor reflected reality during the compaction:
			// 120,000 real tokens for a request estimated at sent.
			assert.Greater(t, 120_000/sent, 1)

			// Consumed once: the call after does not compact again.
			req3 := request(append(append([]*genai.Content{}, raw...), modelMsg("done"))...)
			_, err = g.beforeModel(ctx, req3)
			require.NoError(t, err)
			assert.Equal(t, 1, sum.Calls())
		})
	}
}

func TestOnModelError_WithRecoveryModel(t *testing.T) {
	sum := fixedSummary("RECOVERY-SUMMARY")
	recovery := &fakeLLM{name: "gemini-2.5-flash", reply: func(context.Context, *Request) (string, error) { return "recovered answer", nil }}
	g, logs := newTestGuard(t, sum, WithMaxTokens(100_000), WithRecoveryModel(recovery))
	ctx := newFakeCtx("a").withUser("LATEST please fix the build")
	raw := append(coretest.History(20, 300), userMsg("LATEST please fix the build"))
	req := request(raw...)
	_, err := g.beforeModel(ctx, req)
	require.NoError(t, err)

	resp, err := g.onModelError(ctx, req, &coretest.OverflowError{Style: coretest.ErrorAnthropic, Tokens: 130_000, Limit: 100_000})
	require.NoError(t, err)
	require.NotNil(t, resp)
	assert.Equal(t, "recovered answer", textcut.ContentText(resp.Content))
	assert.Equal(t, 1, sum.Calls())
	require.Equal(t, 1, recovery.Calls())
	sent := recovery.last
	require.Len(t, sent.Contents, 1, "compacted to the summary message")
	assert.Contains(t, textcut.ContentText(sent.Contents[0]), "RECOVERY-SUMMARY")
	assert.Contains(t, textcut.ContentText(sent.Contents[0]), "LATEST please fix the build")
	assert.Len(t, req.Contents, len(raw), "ADK's request is not modified")

	// The compaction is in the call's state delta, so it rides on the
	// recovery response; its watermark covers ADK's contents.
	assert.Equal(t, "RECOVERY-SUMMARY", ctx.getStr(state.KeySummary))
	assert.Equal(t, len(raw), ctx.getInt(state.KeyWatermark))
	assert.Equal(t, contentid.Fingerprint(raw[len(raw)-1]), ctx.getStr(state.KeyFingerprint))
	assert.Contains(t, logs.String(), "compacting the rejected request to half the window")
	assert.Contains(t, logs.String(), "recovered from a context overflow")

	// The next call injects it.
	req2 := request(append(append([]*genai.Content{}, raw...), modelMsg("recovered answer"), userMsg("thanks"))...)
	ctx.withUser("thanks")
	_, err = g.beforeModel(ctx, req2)
	require.NoError(t, err)
	assert.Equal(t, 1, sum.Calls())
	require.Len(t, req2.Contents, 3)
	assert.Contains(t, textcut.ContentText(req2.Contents[0]), "RECOVERY-SUMMARY")
}

func TestOnModelError_RecoveryTargetsHalfTheProvidersLimit(t *testing.T) {
	sum := fixedSummary("S")
	recovery := &fakeLLM{name: "gemini-2.5-flash", reply: func(context.Context, *Request) (string, error) { return "ok", nil }}
	var events []CompactionEvent
	g := newGuard(nil, WithLogger((&logBuffer{}).logger()), WithOnCompaction(func(_ context.Context, e CompactionEvent) { events = append(events, e) }))
	// The guard believes in a 1M window; the provider says 8,000.
	g.addModel("a", sum, WithMaxTokens(1_000_000), WithRecoveryModel(recovery))
	ctx := newFakeCtx("a").withUser("go")
	req := request(append(coretest.History(20, 300), userMsg("go"))...)
	_, err := g.beforeModel(ctx, req)
	require.NoError(t, err)
	_, err = g.onModelError(ctx, req, &coretest.OverflowError{Style: coretest.ErrorGemini, Tokens: 9_000, Limit: 8_000})
	require.NoError(t, err)
	require.Len(t, events, 1)
	assert.Equal(t, "overflow", events[0].Reason)
	assert.Equal(t, 8_000, events[0].Window)
	assert.Equal(t, 4_000, events[0].Threshold)
	assert.LessOrEqual(t, events[0].TokensAfter, 4_000)
}

func TestOnModelError_RecoveryImpossible(t *testing.T) {
	sum := fixedSummary("S")
	recovery := &fakeLLM{name: "gemini-2.5-flash", reply: func(context.Context, *Request) (string, error) { return "ok", nil }}
	g, logs := newTestGuard(t, sum, WithMaxTokens(8_000), WithRecoveryModel(recovery))
	ctx := newFakeCtx("a").withUser("hello")
	req := request(userMsg("old"), modelMsg("ok"), userMsg("hello"))
	req.Config.SystemInstruction = genai.NewContentFromText(strings.Repeat("rule ", 3_000), genai.RoleUser)
	_, err := g.beforeModel(ctx, req)
	require.NoError(t, err)
	overflow := &coretest.OverflowError{Style: coretest.ErrorGemini, Tokens: 9_000, Limit: 8_000}
	resp, err := g.onModelError(ctx, req, overflow)
	assert.Nil(t, resp)
	require.ErrorIs(t, err, ErrIrreducible, "a clear error")
	assert.True(t, coretest.IsOverflowError(err), "the provider's error is kept in the chain")
	assert.Zero(t, recovery.Calls())
	assert.Contains(t, logs.String(), "recovery impossible")
}

func TestOnModelError_RecoveryModelFails(t *testing.T) {
	sum := fixedSummary("PAID-SUMMARY")
	recovery := &fakeLLM{name: "gemini-2.5-flash", reply: func(context.Context, *Request) (string, error) { return "", errBoom }}
	g, logs := newTestGuard(t, sum, WithMaxTokens(100_000), WithRecoveryModel(recovery))
	ctx := newFakeCtx("a").withUser("LATEST")
	raw := append(coretest.History(20, 300), userMsg("LATEST"))
	req := request(raw...)
	_, err := g.beforeModel(ctx, req)
	require.NoError(t, err)
	// A fresh state view: the delta of the failed call is lost.
	ctx.state = newMapState()
	resp, err := g.onModelError(ctx, req, &coretest.OverflowError{Style: coretest.ErrorOpenAI, Tokens: 130_000, Limit: 100_000})
	require.NoError(t, err, "the provider's error surfaces")
	assert.Nil(t, resp)
	assert.Contains(t, logs.String(), "the recovery model failed")
	require.Equal(t, 1, sum.Calls())

	ctx.state = newMapState() // the delta is lost again
	req2 := request(append(append([]*genai.Content{}, raw...), userMsg("LATEST again"))...)
	ctx.withUser("LATEST again")
	_, err = g.beforeModel(ctx, req2)
	require.NoError(t, err)
	assert.Equal(t, 1, sum.Calls(), "the summary paid for in the recovery is reused")
	assert.Contains(t, textcut.ContentText(req2.Contents[0]), "PAID-SUMMARY")
	assert.Contains(t, requestText(req2), "LATEST again")
	assert.Equal(t, "PAID-SUMMARY", ctx.getStr(state.KeySummary), "and persisted again")
}

// turnSteps is one user turn of tool steps, as a session's first turn or a
// turn of an agent with IncludeContents "none" reaches the model: the
// user's request first, then steps read_file calls, each answered by a
// result of size bytes.
func turnSteps(request string, steps, size int) []*genai.Content {
	cs := []*genai.Content{userMsg(request)}
	for i := range steps {
		cs = append(cs,
			callMsg("read_file", map[string]any{"path": fmt.Sprintf("pkg/file%d.go", i)}),
			respMsg("read_file", map[string]any{"content": fmt.Sprintf("STEP-%d %s", i, coretest.Filler(size, i))}))
	}
	return cs
}

// TestOnModelError_InsideATurn: the provider rejects a request made of the
// user's request and the turn's own tool steps, with nothing before the
// request (a session's first turn, or any turn of an agent with
// IncludeContents "none"). The steps may be summarized: with a recovery
// model the rejected request is compacted, pair-safe and with the request
// whole, and answered; without one the provider's error is returned, and
// the next call compacts first. Either way the session learns the
// provider's ratio, and nothing reports ErrIrreducible.
func TestOnModelError_InsideATurn(t *testing.T) {
	const request = "REQUEST-7 please fix the failing build"
	for _, recover := range []bool{true, false} {
		t.Run(fmt.Sprintf("recovery model %v", recover), func(t *testing.T) {
			sum := fixedSummary("TURN-SUMMARY")
			recovery := &fakeLLM{name: "gemini-2.5-flash", reply: func(context.Context, *Request) (string, error) { return "recovered answer", nil }}
			opts := []AgentOption{WithMaxTokens(8_000)}
			if recover {
				opts = append(opts, WithRecoveryModel(recovery))
			}
			g, logs := newTestGuard(t, sum, opts...)
			ctx := newFakeCtx("a").withUser(request)
			raw := turnSteps(request, 6, 800)
			req := requestOf(raw)
			_, err := g.beforeModel(ctx, req)
			require.NoError(t, err)
			require.Zero(t, sum.Calls(), "under the threshold by the guard's estimate")
			sent := requestTokens(testEst, engineReq(req))

			resp, err := g.onModelError(ctx, req, &coretest.OverflowError{Style: coretest.ErrorGemini, Tokens: 9_000, Limit: 8_000})
			require.NoError(t, err, "the turn's steps can be compacted: not irreducible")
			assert.NotContains(t, logs.String(), "nothing before it")
			wantRatio := calib.PerMille(9_000 / float64(sent))
			if recover {
				require.NotNil(t, resp)
				assert.Equal(t, "recovered answer", textcut.ContentText(resp.Content))
				require.Equal(t, 1, recovery.Calls())
				assert.Equal(t, 1, sum.Calls())
				got := recovery.last.Contents
				require.NoError(t, coretest.CheckPairs(got))
				assert.Contains(t, requestText(recovery.last), request, "the user's request whole")
				assert.Contains(t, requestText(recovery.last), "TURN-SUMMARY")
				assert.Less(t, requestTokens(testEst, recovery.last), sent/2)
				assert.Equal(t, wantRatio, ctx.getInt(state.KeyProviderRatio), "the ratio is learned, riding on the recovery response")
				assert.Equal(t, "TURN-SUMMARY", ctx.getStr(state.KeySummary))
				return
			}
			assert.Nil(t, resp, "the provider's error is returned")
			assert.Zero(t, sum.Calls())

			// The failed call's state delta is lost; the next turn's first
			// call compacts first and persists the ratio learned.
			ctx.state = newMapState()
			ctx.withUser("and run the tests")
			req2 := requestOf(append(append([]*genai.Content{}, raw...), userMsg("and run the tests")))
			_, err = g.beforeModel(ctx, req2)
			require.NoError(t, err)
			assert.Equal(t, 1, sum.Calls(), "the next call compacts first")
			assert.Contains(t, logs.String(), "compacting first")
			assert.NoError(t, coretest.CheckPairs(req2.Contents))
			assert.Contains(t, requestText(req2), "and run the tests")
			assert.Equal(t, wantRatio, ctx.getInt(state.KeyProviderRatio))
		})
	}
}

// TestOnModelError_OnlyTheRequest_IsIrreducible: a rejected request that
// holds nothing but the user's request (and the adapter's continuation)
// has nothing a compaction may cover: ErrIrreducible, with or without a
// recovery model.
func TestOnModelError_OnlyTheRequest_IsIrreducible(t *testing.T) {
	for _, recover := range []bool{true, false} {
		t.Run(fmt.Sprintf("recovery model %v", recover), func(t *testing.T) {
			sum := fixedSummary("S")
			recovery := &fakeLLM{name: "gemini-2.5-flash", reply: func(context.Context, *Request) (string, error) { return "ok", nil }}
			opts := []AgentOption{WithMaxTokens(8_000)}
			if recover {
				opts = append(opts, WithRecoveryModel(recovery))
			}
			g, _ := newTestGuard(t, sum, opts...)
			text := "HUGE " + coretest.Filler(3_000, 1)
			ctx := newFakeCtx("a").withUser(text)
			req := requestOf([]*genai.Content{userMsg(text)})
			_, err := g.beforeModel(ctx, req)
			require.NoError(t, err)
			resp, err := g.onModelError(ctx, req, &coretest.OverflowError{Style: coretest.ErrorGemini, Tokens: 30_000, Limit: 8_000})
			assert.Nil(t, resp)
			require.ErrorIs(t, err, ErrIrreducible)
			assert.Zero(t, recovery.Calls())
			assert.Zero(t, sum.Calls())
		})
	}
}

// requestOf is request over a slice.
func requestOf(cs []*genai.Content) *Request { return request(cs...) }

// TestOnModelError_IncludeContentsNone_NextTurnLearnsTheRatio: without a
// recovery model, an overflow in a turn of an agent with IncludeContents
// "none" is returned; the next turn's request holds none of the rejected
// one, so it is not compacted on the rejected request's count (a summary
// of the lone new request would buy nothing), but it is judged with the
// ratio learned, which is persisted.
func TestOnModelError_IncludeContentsNone_NextTurnLearnsTheRatio(t *testing.T) {
	sum := fixedSummary("S")
	g, _ := newTestGuard(t, sum, WithMaxTokens(8_000))
	ctx := newFakeCtx("a").withUser("REQUEST-1 fix the build")
	raw := turnSteps("REQUEST-1 fix the build", 6, 800)
	req := requestOf(raw)
	_, err := g.beforeModel(ctx, req)
	require.NoError(t, err)
	sent := requestTokens(testEst, engineReq(req))
	_, err = g.onModelError(ctx, req, &coretest.OverflowError{Style: coretest.ErrorGemini, Tokens: 9_000, Limit: 8_000})
	require.NoError(t, err)

	ctx.state = newMapState()
	ctx.withUser("REQUEST-2 run the tests")
	req2 := requestOf([]*genai.Content{userMsg("REQUEST-2 run the tests")})
	_, err = g.beforeModel(ctx, req2)
	require.NoError(t, err)
	assert.Zero(t, sum.Calls(), "nothing of the rejected request to compact")
	require.Len(t, req2.Contents, 1)
	assert.Equal(t, "REQUEST-2 run the tests", textcut.ContentText(req2.Contents[0]))
	assert.Equal(t, calib.PerMille(9_000/float64(sent)), ctx.getInt(state.KeyProviderRatio), "the ratio learned is persisted")
}

// TestOnModelError_BogusCountCostsOneSummary: a ten-turn session of a
// 128,000 window without usage metadata, with a recovery model, each turn
// about 16,000 tokens, meets in its second turn an overflow error whose
// count no request could have: 2^40 tokens (OpenAI's wording), more than
// any model's window, or more than five times the window (and the guard's
// estimate of the request). The guard recovers from it as from an overflow of unknown size and
// learns nothing from it, so the session calls the summarizer at most once
// more (the recovery's compaction) than the same session without the
// error.
func TestOnModelError_BogusCountCostsOneSummary(t *testing.T) {
	const window = 128_000
	play := func(t *testing.T, bogus error) (summaries, ratio int) {
		t.Helper()
		sum := fixedSummary("SUMMARY of the work so far")
		recovery := &fakeLLM{name: "gpt-4o", reply: func(context.Context, *Request) (string, error) { return "recovered answer", nil }}
		g, _ := newTestGuard(t, sum, WithMaxTokens(window), WithRecoveryModel(recovery))
		ctx := newFakeCtx("a")
		var raw []*genai.Content
		for turn := range 10 {
			text := fmt.Sprintf("LATEST turn %d %s", turn, coretest.Filler(24_000, 3*turn))
			ctx.withUser(text)
			raw = append(raw, userMsg(text))
			req := request(raw...)
			_, err := g.beforeModel(ctx, req)
			require.NoError(t, err)
			answer := fmt.Sprintf("answer %d %s", turn, coretest.Filler(24_000, 3*turn+1))
			if turn == 1 && bogus != nil {
				resp, err := g.onModelError(ctx, req, bogus)
				require.NoError(t, err)
				require.NotNil(t, resp, "recovered")
				answer = textcut.ContentText(resp.Content)
			}
			raw = append(raw, modelMsg(answer))
		}
		return sum.Calls(), ctx.getInt(state.KeyProviderRatio)
	}
	base, baseRatio := play(t, nil)
	require.Positive(t, base, "the session compacts on its own")
	t.Logf("without the error: %d summarizer calls", base)
	for _, tt := range []struct {
		name string
		err  error
	}{
		{"2^40 tokens", &coretest.OverflowError{Style: coretest.ErrorOpenAI, Tokens: 1 << 40, Limit: window}},
		{"above every known window", &coretest.OverflowError{Style: coretest.ErrorGemini, Tokens: 900_000_000, Limit: window}},
		{"past five times the window", &coretest.OverflowError{Style: coretest.ErrorAnthropic, Tokens: 1_400_000, Limit: window}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			calls, ratio := play(t, tt.err)
			t.Logf("%d summarizer calls", calls)
			assert.LessOrEqual(t, calls, base+1, "at most the recovery's compaction more")
			assert.Equal(t, baseRatio, ratio, "nothing learned from the count")
		})
	}
}
