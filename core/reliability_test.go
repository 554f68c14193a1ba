package core

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/coretest"

	"github.com/adk-contextguard/contextguard/core/internal/state"
	"github.com/adk-contextguard/contextguard/core/internal/textcut"
)

// badInput is one row of TestBadInput.
type badInput struct {
	name string
	// build returns the request and sets up ctx (user content, state).
	build func(ctx *fakeCtx) *Request
	// opts configure the agent; the window is 8,000 unless opts set it.
	opts []AgentOption
	// summarizer replaces fixedSummary("SUMMARY").
	summarizer *fakeLLM
	// log must appear in the guard's log.
	log string
	// irreducible: the outcome is a clear ErrIrreducible instead of a request.
	irreducible bool
	// latest is the user's latest request, which must survive ("" skips).
	latest string
}

const latestRequest = "LATEST please fix the failing deployment"

// overThreshold is a history well over an 8k window's threshold, ending
// with the user's latest request.
func overThreshold() []*genai.Content {
	return append(coretest.History(20, 300), userMsg(latestRequest))
}

func TestBadInput(t *testing.T) {
	rows := []badInput{
		{
			name: "nil and empty contents",
			build: func(ctx *fakeCtx) *Request {
				return &Request{Model: "gemini-2.5-flash"}
			},
			log: "the request has no contents",
		},
		{
			name: "empty contents with a system prompt larger than the window",
			build: func(ctx *fakeCtx) *Request {
				req := request()
				req.Contents = []*genai.Content{}
				req.Config.SystemInstruction = genai.NewContentFromText(strings.Repeat("rule ", 16_000), genai.RoleUser)
				return req
			},
			log:         "alone exceed the context window",
			irreducible: true,
		},
		{
			name: "nil contents, nil parts and nil fields",
			build: func(ctx *fakeCtx) *Request {
				ctx.withUser(latestRequest)
				raw := coretest.History(20, 300)
				raw = append(raw,
					nil,
					&genai.Content{Role: genai.RoleUser},
					&genai.Content{Parts: []*genai.Part{nil, {}}},
					&genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{Name: "get"}}}},
					&genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{Name: "get"}}}},
					&genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{InlineData: &genai.Blob{}}, {FileData: &genai.FileData{}}}},
					userMsg(latestRequest),
				)
				req := request(raw...)
				req.Config.Tools = []*genai.Tool{nil, {FunctionDeclarations: []*genai.FunctionDeclaration{nil, {}}}}
				req.Config.SystemInstruction = &genai.Content{Parts: []*genai.Part{nil}}
				return req
			},
			log:    "contextguard: compacted",
			latest: latestRequest,
		},
		{
			name: "nil config",
			build: func(ctx *fakeCtx) *Request {
				ctx.withUser(latestRequest)
				return &Request{Model: "gemini-2.5-flash", Contents: overThreshold()}
			},
			log:    "contextguard: compacted",
			latest: latestRequest,
		},
		{
			name: "empty user content: the newest user text in the contents is quoted",
			build: func(ctx *fakeCtx) *Request {
				ctx.user = &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: ""}}}
				raw := append(overThreshold(), callMsg("get", map[string]any{"q": "x"}), respMsg("get", map[string]any{"out": "ok"}))
				return request(raw...)
			},
			log:    "contextguard: compacted",
			latest: latestRequest,
		},
		{
			name: "no user text anywhere",
			build: func(ctx *fakeCtx) *Request {
				var raw []*genai.Content
				for i := range 20 {
					raw = append(raw, callMsg("get", map[string]any{"i": i}), respMsg("get", map[string]any{"out": coretest.Filler(600, i)}))
				}
				return request(raw...)
			},
			log: "contextguard: compacted",
		},
		{
			name: "non-UTF-8 text",
			build: func(ctx *fakeCtx) *Request {
				bad := "LATEST \xff\xfe\xfd please fix \xc3\x28 the build"
				ctx.withUser(bad)
				raw := coretest.History(20, 300)
				raw = append(raw, modelMsg("broken \x80\x81 bytes"), respMsg("cat", map[string]any{"out": "\xed\xa0\x80 surrogate"}), userMsg(bad))
				return request(raw...)
			},
			log:    "contextguard: compacted",
			latest: "LATEST \uFFFD please fix",
		},
		{
			name: "a single message larger than the window",
			build: func(ctx *fakeCtx) *Request {
				huge := latestRequest + " " + coretest.Filler(60_000, 7) + " END-OF-HUGE"
				ctx.withUser(huge)
				return request(append(coretest.History(3, 300), userMsg(huge))...)
			},
			log:    "contextguard: compacted",
			latest: latestRequest,
		},
		{
			name: "a single tool result larger than the window",
			build: func(ctx *fakeCtx) *Request {
				ctx.withUser(latestRequest)
				raw := append(coretest.History(3, 300), userMsg(latestRequest),
					callMsg("read_file", map[string]any{"path": "big.log"}),
					respMsg("read_file", map[string]any{"out": coretest.Filler(60_000, 8)}))
				return request(raw...)
			},
			log:    "contextguard: compacted",
			latest: latestRequest,
		},
		{
			name: "a system prompt larger than the window",
			build: func(ctx *fakeCtx) *Request {
				ctx.withUser(latestRequest)
				req := request(overThreshold()...)
				req.Config.SystemInstruction = genai.NewContentFromText(strings.Repeat("rule ", 16_000), genai.RoleUser)
				return req
			},
			log:         "alone exceed the context window",
			irreducible: true,
		},
		{
			name: "wrong-typed state",
			build: func(ctx *fakeCtx) *Request {
				ctx.withUser(latestRequest)
				ctx.set(state.KeySummary, 42)
				ctx.set(state.KeyWatermark, "seven")
				ctx.set(state.KeyFingerprint, []any{"x"})
				ctx.set(state.KeyRealTokens, true)
				ctx.set(state.KeyLastEstimate, math.NaN())
				ctx.set(state.KeyCompactions, 1.5)
				ctx.set(state.KeyIrreducibleFloor, map[string]any{})
				_ = ctx.state.Set(todosKey, "not a list")
				return request(overThreshold()...)
			},
			log:    "session state has the wrong type",
			latest: latestRequest,
		},
		{
			name: "impossible state: negative and huge counts, watermark beyond the contents",
			build: func(ctx *fakeCtx) *Request {
				ctx.withUser(latestRequest)
				ctx.set(state.KeySummary, "an old summary")
				ctx.set(state.KeyWatermark, 10_000)
				ctx.set(state.KeyFingerprint, "0123456789abcdef")
				ctx.set(state.KeyRealTokens, -5)
				ctx.set(state.KeyLastEstimate, float64(1<<50))
				return request(overThreshold()...)
			},
			log:    "watermark beyond the contents",
			latest: latestRequest,
		},
		{
			name: "impossible state: the summary covers the latest message without quoting it",
			build: func(ctx *fakeCtx) *Request {
				ctx.withUser(latestRequest)
				raw := append(coretest.History(2, 100), userMsg(latestRequest))
				ctx.set(state.KeySummary, "an old summary")
				ctx.set(state.KeyWatermark, len(raw))
				ctx.set(state.KeyUserRequest, "something else entirely")
				return request(raw...)
			},
			log:    "does not quote the user's latest message",
			latest: latestRequest,
		},
		{
			name: "unknown model",
			build: func(ctx *fakeCtx) *Request {
				ctx.withUser(latestRequest)
				req := request(append(coretest.History(120, 2_500), userMsg(latestRequest))...)
				req.Model = "acme-llm-9000"
				return req
			},
			opts:   []AgentOption{},
			log:    "unknown model",
			latest: latestRequest,
		},
		{
			name: "cancelled context",
			build: func(ctx *fakeCtx) *Request {
				c, cancel := context.WithCancel(context.Background())
				cancel()
				ctx.withContext(c).withUser(latestRequest)
				return request(overThreshold()...)
			},
			// Its clock is not the guard's: only the cancelled context
			// can end its call.
			summarizer: slowSummarizer(coretest.NewFakeClock(time.Time{})),
			log:        "using the fallback summary",
			latest:     latestRequest,
		},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			sum := row.summarizer
			if sum == nil {
				sum = fixedSummary("SUMMARY of the earlier work")
			}
			opts := row.opts
			if opts == nil {
				opts = []AgentOption{WithMaxTokens(8_000)}
			}
			g, logs := newTestGuard(t, sum, opts...)
			ctx := newFakeCtx("a")
			req := row.build(ctx)
			raw := append([]*genai.Content(nil), req.Contents...)

			var resp *Response
			var err error
			require.NotPanics(t, func() { resp, err = g.beforeModel(ctx, req) })
			assert.Nil(t, resp)
			assert.Contains(t, logs.String(), row.log)
			if row.irreducible {
				require.ErrorIs(t, err, ErrIrreducible, "a clear error")
				assert.Zero(t, sum.Calls(), "no summary is paid for a request that cannot fit")
				return
			}
			require.NoError(t, err)
			window := g.limits(g.agent("a"), req.Model).Window
			count := newCalibration(state.Agent{}, testEst).Count(requestTokens(estimatorFor(req.Model), engineReq(req)))
			assert.LessOrEqual(t, count, window, "the request fits the window")
			if row.latest != "" {
				assert.Contains(t, requestText(req), row.latest, "the user's latest request is kept")
			}
			for _, c := range req.Contents {
				if c != nil && strings.HasPrefix(textcut.ContentText(c), summaryHeader) {
					assert.True(t, utf8.ValidString(textcut.ContentText(c)), "the summary message is valid UTF-8")
				}
			}
			if coretest.CheckPairs(raw) == nil {
				assert.NoError(t, coretest.CheckPairs(req.Contents))
			}
			if sum.Calls() > 0 {
				assert.True(t, utf8.ValidString(sum.lastInput()), "the summarizer's input is valid UTF-8")
			}
		})
	}
}

// TestBadInput_NilRequest: ADK never passes a nil request, but the guard's
// callbacks must not panic on one, and must say so.
func TestBadInput_NilRequest(t *testing.T) {
	sum := fixedSummary("S")
	g, logs := newTestGuard(t, sum, WithMaxTokens(8_000))
	ctx := newFakeCtx("a").withUser(latestRequest)
	require.NotPanics(t, func() {
		resp, err := g.beforeModel(ctx, nil)
		assert.NoError(t, err)
		assert.Nil(t, resp)
		resp, err = g.beforeModel(nil, request(userMsg("x")))
		assert.NoError(t, err)
		assert.Nil(t, resp)
		resp, err = g.afterModel(ctx, nil, nil)
		assert.NoError(t, err)
		assert.Nil(t, resp)
		overflow := &coretest.OverflowError{Style: coretest.ErrorGemini, Tokens: 9_000, Limit: 8_000}
		resp, err = g.onModelError(ctx, nil, overflow)
		assert.NoError(t, err)
		assert.Nil(t, resp)
	})
	assert.Contains(t, logs.String(), "without a request")
	assert.Empty(t, ctx.state.m, "nothing written")

	// The overflow reported with a nil request still makes the next call
	// compact first.
	req := request(append(coretest.History(3, 100), userMsg(latestRequest))...)
	_, err := g.beforeModel(ctx, req)
	require.NoError(t, err)
	assert.Equal(t, 1, sum.Calls())
	assert.Contains(t, logs.String(), "compacting first")
	assert.Contains(t, requestText(req), latestRequest)
}

// ---------------------------------------------------------------------------
// Concurrency (ARCHITECTURE.md, Concurrency)
// ---------------------------------------------------------------------------

// gateSummarizer holds every call at a gate until it opens: once opensAt
// calls are in flight at once (0: never by itself), or when the test calls
// open. It counts its calls and the most in flight at once, and signals
// each call that reaches the gate (entered). A gate that never opens fails
// its calls after hangBound, so a guard that serializes sessions fails the
// test instead of hanging it.
type gateSummarizer struct {
	opensAt           int64
	calls             atomic.Int64
	active, maxActive atomic.Int64
	entered           chan struct{}
	gate              chan struct{}
	once              sync.Once
}

func newGateSummarizer(opensAt int64) *gateSummarizer {
	return &gateSummarizer{opensAt: opensAt, entered: make(chan struct{}, 1024), gate: make(chan struct{})}
}

func (b *gateSummarizer) open() { b.once.Do(func() { close(b.gate) }) }

func (b *gateSummarizer) Summarize(ctx context.Context, _ SummaryRequest) (string, error) {
	b.calls.Add(1)
	n := b.active.Add(1)
	defer b.active.Add(-1)
	for {
		m := b.maxActive.Load()
		if n <= m || b.maxActive.CompareAndSwap(m, n) {
			break
		}
	}
	if b.opensAt > 0 && n >= b.opensAt {
		b.open()
	}
	select {
	case b.entered <- struct{}{}:
	default:
	}
	select {
	case <-b.gate:
		return "summary", nil
	case <-ctx.Done():
		return "", ctx.Err()
	case <-time.After(hangBound):
		return "", errors.New("the gate never opened")
	}
}

// compactSessions has n sessions compact at once, each on its own
// goroutine, and returns the wall time.
func compactSessions(tb testing.TB, g *Guard, n int, round int) time.Duration {
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := newFakeCtx("a").withUser(latestRequest)
			ctx.sessionID = fmt.Sprintf("r%d-s%d", round, i)
			req := request(overThreshold()...)
			if _, err := g.beforeModel(ctx, req); err != nil {
				tb.Error(err)
			}
		}()
	}
	wg.Wait()
	return time.Since(start)
}

// TestConcurrency_SessionsCompactInParallel: compactions of different
// sessions hold only their own session's lock, so their summarizer calls
// overlap; calls of one session never do.
func TestConcurrency_SessionsCompactInParallel(t *testing.T) {
	baseline := runtime.NumGoroutine()
	// One compaction of overThreshold takes perCompaction calls (the
	// history is larger than one summarizer input: a rolling summary).
	single := newGateSummarizer(1)
	g0, _ := newTestGuard(t, nil, WithMaxTokens(8_000), WithSummarizer(single))
	compactSessions(t, g0, 1, 0)
	perCompaction := single.calls.Load()
	require.Positive(t, perCompaction)

	// The summarizer answers only once two calls are in flight at once:
	// sessions that compacted one after the other would never get there.
	sum := newGateSummarizer(2)
	g, _ := newTestGuard(t, nil, WithMaxTokens(8_000), WithSummarizer(sum))
	const n = 16
	compactSessions(t, g, n, 0)
	assert.EqualValues(t, n*perCompaction, sum.calls.Load())
	assert.GreaterOrEqual(t, sum.maxActive.Load(), int64(2), "compactions of different sessions overlap")

	// One session: concurrent calls queue on its lock while the first
	// compacts; the others then find its summary and do not pay again.
	one := newGateSummarizer(0)
	g1, _ := newTestGuard(t, nil, WithMaxTokens(8_000), WithSummarizer(one))
	ctx := newFakeCtx("a").withUser(latestRequest)
	raw := overThreshold()
	const callers = 8
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			_, err := g1.beforeModel(ctx, request(raw...))
			assert.NoError(t, err)
		})
	}
	<-one.entered
	waitUntil(t, "every call owns or waits for the session", func() bool { return sessionUsers(g1, ctx) == callers })
	one.open()
	wg.Wait()
	assert.EqualValues(t, perCompaction, one.calls.Load(), "one session never summarizes the same history twice")
	assert.EqualValues(t, 1, one.maxActive.Load())
	assert.Zero(t, coretest.GoroutinesLeft(baseline), "no goroutine is left behind")
}

// latencySummarizer answers after delay, counting calls in flight. Only the
// benchmark below uses it: it measures wall time, and asserts nothing.
type latencySummarizer struct {
	delay     time.Duration
	active    atomic.Int64
	maxActive atomic.Int64
}

func (b *latencySummarizer) Summarize(ctx context.Context, _ SummaryRequest) (string, error) {
	n := b.active.Add(1)
	defer b.active.Add(-1)
	for {
		m := b.maxActive.Load()
		if n <= m || b.maxActive.CompareAndSwap(m, n) {
			break
		}
	}
	t := time.NewTimer(b.delay)
	defer t.Stop()
	select {
	case <-t.C:
		return "summary", nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// BenchmarkConcurrentCompactions has N sessions compact at once with a
// 50 ms summarizer. Serialized compactions would take N x 50 ms; the
// reported wall-ms/op stays near 50 ms while sessions run in parallel.
func BenchmarkConcurrentCompactions(b *testing.B) {
	for _, n := range []int{1, 8, 64, 256} {
		b.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) {
			sum := &latencySummarizer{delay: 50 * time.Millisecond}
			g, _ := newTestGuard(b, nil, WithMaxTokens(8_000), WithSummarizer(sum))
			var total time.Duration
			round := 0
			for b.Loop() {
				total += compactSessions(b, g, n, round)
				round++
			}
			wall := float64(total.Milliseconds()) / float64(round)
			b.ReportMetric(wall, "wall-ms/op")
			b.ReportMetric(float64(n)*50, "serial-ms/op")
			b.ReportMetric(float64(n)*50/wall, "speedup")
			b.ReportMetric(float64(sum.maxActive.Load()), "max-in-flight")
		})
	}
}
