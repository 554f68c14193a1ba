package core

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/coretest"
	"github.com/adk-contextguard/contextguard/core/internal/contentid"
	"github.com/adk-contextguard/contextguard/core/internal/countcache"
	"github.com/adk-contextguard/contextguard/core/internal/state"
	"github.com/adk-contextguard/contextguard/core/internal/textcut"
)

// callbackSet is the guard's three callbacks as the ADK v1 adapter calls
// them (helpers_test.go: the adapter's callbacks on the tests' fakes).
type callbackSet struct {
	before  func(callbackCtx, *Request) (*Response, error)
	after   func(callbackCtx, *Response, error) (*Response, error)
	onError func(callbackCtx, *Request, error) (*Response, error)
}

func pluginCallbacks(t *testing.T, g *Guard) callbackSet {
	t.Helper()
	require.NoError(t, g.Err())
	return callbackSet{before: g.beforeModel, after: g.afterModel, onError: g.onModelError}
}

// sameSession is a callback context for the session of outer whose Go
// context is ctx: what a summarizer or hook that runs an agent of its own on
// the same session would hand the guard.
func sameSession(outer *fakeCtx, ctx context.Context) *fakeCtx {
	return &fakeCtx{Context: ctx, agentName: outer.agentName, sessionID: outer.sessionID, user: outer.user, state: outer.state}
}

// callbackSummarizer is a Summarizer that calls back into the guard for the
// session it summarizes before it answers.
type callbackSummarizer struct {
	answer string
	call   func(ctx context.Context) error

	mu   sync.Mutex
	errs []error
}

func (s *callbackSummarizer) Summarize(ctx context.Context, _ SummaryRequest) (string, error) {
	err := s.call(ctx)
	s.mu.Lock()
	s.errs = append(s.errs, err)
	s.mu.Unlock()
	return s.answer, nil
}

func (s *callbackSummarizer) results() []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]error(nil), s.errs...)
}

// TestReentrancy_SummarizerCallsTheGuardForItsOwnSession: a summarizer that
// calls back into the guard for the session it is summarizing cannot be
// served by BeforeModelCallback or OnModelErrorCallback (the session's
// history is being summarized): it gets ErrReentrant at once, naming the
// session and agent, and the outer compaction completes with the
// summarizer's answer. AfterModelCallback only records a count and serves it.
func TestReentrancy_SummarizerCallsTheGuardForItsOwnSession(t *testing.T) {
	overflow := &coretest.OverflowError{Style: coretest.ErrorGemini, Tokens: 9_000, Limit: 8_000}
	tests := []struct {
		name        string
		call        func(cb callbackSet, c callbackCtx) error
		wantReentry bool
	}{
		{"BeforeModelCallback", func(cb callbackSet, c callbackCtx) error {
			_, err := cb.before(c, request(overThreshold()...))
			return err
		}, true},
		{"OnModelErrorCallback with an overflow", func(cb callbackSet, c callbackCtx) error {
			_, err := cb.onError(c, request(overThreshold()...), overflow)
			return err
		}, true},
		{"AfterModelCallback", func(cb callbackSet, c callbackCtx) error {
			_, err := cb.after(c, &Response{}, nil)
			return err
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var events []CompactionEvent
			g := newGuard(nil, WithLogger((&logBuffer{}).logger()),
				WithOnCompaction(func(_ context.Context, e CompactionEvent) { events = append(events, e) }))
			outer := newFakeCtx("a").withUser(latestRequest)
			var cb callbackSet
			sum := &callbackSummarizer{answer: "OUTER-SUMMARY", call: func(ctx context.Context) error {
				return tt.call(cb, sameSession(outer, ctx))
			}}
			g.addModel("a", nil, WithMaxTokens(8_000), WithSummarizer(sum), WithRecoveryModel(fixedSummary("unused")))
			cb = pluginCallbacks(t, g)

			req := request(overThreshold()...)
			var err error
			if !finishes(t, "the outer BeforeModelCallback", func() { _, err = cb.before(outer, req) }) {
				return
			}
			require.NoError(t, err)

			errs := sum.results()
			require.Len(t, events, 1)
			// The history is larger than one summarizer input, so it is
			// summarized in pieces: every call is a re-entry.
			require.Len(t, errs, events[0].SummarizerCalls, "every call the event counts reached the summarizer")
			for _, err := range errs {
				if tt.wantReentry {
					require.ErrorIs(t, err, ErrReentrant)
					assert.Contains(t, err.Error(), `session "s1"`)
					assert.Contains(t, err.Error(), `agent "a"`)
				} else {
					assert.NoError(t, err)
				}
			}
			assert.False(t, events[0].Fallback, "the outer compaction used the summarizer's answer")
			require.Len(t, req.Contents, 1)
			assert.Contains(t, textcut.ContentText(req.Contents[0]), "OUTER-SUMMARY")
			assert.Equal(t, "OUTER-SUMMARY", outer.getStr(state.KeySummary))
			assert.Equal(t, 1, outer.getInt(state.KeyCompactions))
		})
	}
}

// TestReentrancy_SummarizerCallsTheGuardForAnotherSession: the summarizer's
// context marks only the session being compacted; a call it makes for
// another session is served as usual.
func TestReentrancy_SummarizerCallsTheGuardForAnotherSession(t *testing.T) {
	g := newGuard(nil, WithLogger((&logBuffer{}).logger()))
	outer := newFakeCtx("a").withUser(latestRequest)
	other := newFakeCtx("a")
	other.sessionID = "s2"
	var cb callbackSet
	var innerReq = request(coretest.History(2, 100)...)
	sum := &callbackSummarizer{answer: "OUTER-SUMMARY", call: func(ctx context.Context) error {
		_, err := cb.before(other.withContext(ctx), innerReq)
		return err
	}}
	g.addModel("a", nil, WithMaxTokens(8_000), WithSummarizer(sum))
	cb = pluginCallbacks(t, g)

	var err error
	if !finishes(t, "BeforeModelCallback", func() { _, err = cb.before(outer, request(overThreshold()...)) }) {
		return
	}
	require.NoError(t, err)
	errs := sum.results()
	require.NotEmpty(t, errs)
	for _, err := range errs {
		assert.NoError(t, err, "every call into the other session is served")
	}
	assert.Equal(t, requestTokens(testEst, engineReq(innerReq)), other.getInt(state.KeyLastEstimate), "the other session's call was counted")
	assert.Equal(t, "OUTER-SUMMARY", outer.getStr(state.KeySummary))
}

// TestReentrancy_OnCompactionHookCallsTheGuard: the OnCompaction hook runs
// after the guard released the session, so a hook that calls back into the
// guard for the same session is served: the call sees the compaction just
// made and does not summarize again.
func TestReentrancy_OnCompactionHookCallsTheGuard(t *testing.T) {
	tests := []struct {
		name string
		// recover compacts through OnModelErrorCallback rather than
		// BeforeModelCallback.
		recover bool
	}{
		{"compaction by BeforeModelCallback", false},
		{"compaction by OnModelErrorCallback", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			outer := newFakeCtx("a").withUser(latestRequest)
			var cb callbackSet
			var hookErr error
			hookCalls := 0
			inner := request(overThreshold()...)
			g := newGuard(nil, WithLogger((&logBuffer{}).logger()), WithOnCompaction(func(ctx context.Context, _ CompactionEvent) {
				hookCalls++
				if hookCalls == 1 {
					_, hookErr = cb.before(sameSession(outer, ctx), inner)
				}
			}))
			sum := fixedSummary("HOOK-SUMMARY")
			recovery := &fakeLLM{name: "gemini-2.5-flash", reply: func(context.Context, *Request) (string, error) { return "recovered", nil }}
			g.addModel("a", sum, WithMaxTokens(8_000), WithRecoveryModel(recovery))
			cb = pluginCallbacks(t, g)

			var err error
			if !finishes(t, "the guard's callback", func() {
				if tt.recover {
					req := request(overThreshold()...)
					_, err = cb.onError(outer, req, &coretest.OverflowError{Style: coretest.ErrorOpenAI, Tokens: 9_000, Limit: 8_000})
					return
				}
				_, err = cb.before(outer, request(overThreshold()...))
			}) {
				return
			}
			require.NoError(t, err)
			require.NoError(t, hookErr)
			assert.Equal(t, 1, hookCalls)
			assert.Equal(t, 1, sum.Calls(), "the hook's call found the summary and did not pay again")
			require.NotEmpty(t, inner.Contents)
			assert.Contains(t, textcut.ContentText(inner.Contents[0]), "HOOK-SUMMARY", "the hook's call sends the stored summary")
		})
	}
}

// TestConcurrency_CallWaitsForTheSessionsCompaction: a call for a session
// that is being compacted waits for the compaction (the session is never
// summarized twice at once), and the wait honours its context: a call
// cancelled meanwhile returns its context's error without waiting for the
// summarizer.
func TestConcurrency_CallWaitsForTheSessionsCompaction(t *testing.T) {
	stuck := newStuckModel(t, "summarizer")
	g, _ := newTestGuard(t, stuck, WithMaxTokens(8_000))
	outer := newFakeCtx("a").withUser(latestRequest)

	compacted := make(chan error, 1)
	go func() {
		_, err := g.beforeModel(outer, request(overThreshold()...))
		compacted <- err
	}()
	<-stuck.entered // the first call is compacting

	waiterCtx, cancel := context.WithCancel(context.Background())
	waited := make(chan error, 1)
	go func() {
		_, err := g.beforeModel(sameSession(outer, waiterCtx), request(overThreshold()...))
		waited <- err
	}()
	waitUntil(t, "the second call waits for the session", func() bool { return sessionUsers(g, outer) == 2 })
	select {
	case err := <-waited:
		t.Fatalf("the second call returned (%v) while the session was being compacted", err)
	default:
	}

	cancel()
	var err error
	if !finishes(t, "the cancelled call", func() { err = <-waited }) {
		return
	}
	require.ErrorIs(t, err, context.Canceled)
	assert.Contains(t, err.Error(), `session "s1"`)
	assert.Zero(t, stuck.returned.Load(), "the cancelled call did not wait for the summarizer")

	// A call that is not cancelled is served once the compaction is done,
	// from its summary.
	waited2 := make(chan error, 1)
	req2 := request(overThreshold()...)
	go func() {
		_, err := g.beforeModel(sameSession(outer, context.Background()), req2)
		waited2 <- err
	}()
	waitUntil(t, "the third call waits for the session", func() bool { return sessionUsers(g, outer) == 2 })
	stuck.unblock()
	if !finishes(t, "the compaction", func() { err = <-compacted }) {
		return
	}
	require.NoError(t, err)
	if !finishes(t, "the waiting call", func() { err = <-waited2 }) {
		return
	}
	require.NoError(t, err)
	assert.EqualValues(t, 1, stuck.calls.Load(), "the session was summarized once")
	assert.Contains(t, textcut.ContentText(req2.Contents[0]), "late answer", "the waiting call sent the compaction's summary")
}

// TestReentrancy_SummarizerCallsBackWithAnUnrelatedContext: a summarizer
// that calls back into the guard for its own session with a context that
// does not descend from the one it was given cannot be recognised; its call
// waits like any concurrent one, until the summary timeout makes the guard
// stop waiting for the summarizer and finish the compaction with the
// fallback summary. The call is then served, and nothing deadlocks. The
// timeout fires when the test moves the guard's clock, once the call waits.
func TestReentrancy_SummarizerCallsBackWithAnUnrelatedContext(t *testing.T) {
	var events []CompactionEvent
	clock := coretest.NewFakeClock(time.Time{})
	g := newGuard(nil, WithLogger((&logBuffer{}).logger()), WithClock(clock),
		WithOnCompaction(func(_ context.Context, e CompactionEvent) { events = append(events, e) }))
	outer := newFakeCtx("a").withUser(latestRequest)
	var cb callbackSet
	inner := request(overThreshold()...)
	sum := &callbackSummarizer{answer: "TOO-LATE", call: func(context.Context) error {
		_, err := cb.before(sameSession(outer, context.Background()), inner)
		return err
	}}
	g.addModel("a", nil, WithMaxTokens(8_000), WithSummarizer(sum), WithSummaryTimeout(testSummaryTimeout))
	cb = pluginCallbacks(t, g)

	var err error
	compacted := make(chan struct{})
	go func() {
		defer close(compacted)
		_, err = cb.before(outer, request(overThreshold()...))
	}()
	waitUntil(t, "the summarizer's call waits for the session", func() bool { return sessionUsers(g, outer) == 2 })
	clock.Advance(testSummaryTimeout)
	if !finishes(t, "the outer BeforeModelCallback", func() { <-compacted }) {
		return
	}
	require.NoError(t, err)
	require.Len(t, events, 1)
	assert.True(t, events[0].Fallback, "the guard stopped waiting for the summarizer")
	assert.Contains(t, events[0].FallbackReason, "summary timeout")

	// The summarizer's own call is served once the compaction is done.
	waitUntil(t, "the summarizer's call is served", func() bool { return len(sum.results()) == 1 })
	require.NoError(t, sum.results()[0])
	assert.Contains(t, textcut.ContentText(inner.Contents[0]), "Automatic summary", "it sent the compaction's fallback summary")
	assert.Equal(t, 1, outer.getInt(state.KeyCompactions), "and did not compact again")
}

// boundedGuard is a guard with agent "a" and the given table bounds.
func boundedGuard(t *testing.T, opts ...Option) *Guard {
	t.Helper()
	g := newGuard(NewCrushRegistry(WithRegistryLogger(quietLog)), append(opts, WithLogger(quietLog))...)
	g.addModel("a", fixedSummary("unused"), WithMaxTokens(1_000_000))
	require.NoError(t, g.Err())
	return g
}

// tableKeys are the sessions the table holds, most recently used first.
func tableKeys(g *Guard) []string {
	g.sessions.mu.Lock()
	defer g.sessions.mu.Unlock()
	var out []string
	for el := g.sessions.order.Front(); el != nil; el = el.Next() {
		k := el.Value.(*sessionEntry).key
		out = append(out, k[strings.LastIndexByte(k, 0)+1:])
	}
	return out
}

// TestSessionBound_EvictsTheLeastRecentlyUsed: past either bound the table
// drops the least recently used idle sessions, and the session's next call
// counts only what is new from its prefix record, so eviction costs little.
func TestSessionBound_EvictsTheLeastRecentlyUsed(t *testing.T) {
	history := func(seed string) []*genai.Content { return coretest.ToolHistory(3, seed) } // about 8 KB each
	// What one session retains after its first call.
	probe := boundedGuard(t)
	_, err := probe.beforeModel(newFakeCtx("a"), &Request{Model: "gemini-2.5-flash", Contents: history("s0")})
	require.NoError(t, err)
	one := probe.sessions.bytes
	tests := []struct {
		name   string
		opts   []Option
		after  []string // sessions called, in order
		kept   []string // the table, most recent first
		maxLen int
	}{
		{"by sessions", []Option{WithMaxSessions(2)}, []string{"s1", "s2", "s3"}, []string{"s3", "s2"}, 2},
		{"by sessions, a session used again is kept", []Option{WithMaxSessions(2)}, []string{"s1", "s2", "s1", "s3"}, []string{"s3", "s1"}, 2},
		{"by bytes", []Option{WithMaxSessionBytes(one * 5 / 2)}, []string{"s1", "s2", "s3"}, []string{"s3", "s2"}, 3},
		{"neither bound reached", nil, []string{"s1", "s2", "s3"}, []string{"s3", "s2", "s1"}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := boundedGuard(t, tt.opts...)
			ctxs := map[string]*fakeCtx{}
			for _, id := range tt.after {
				ctx := ctxs[id]
				if ctx == nil {
					ctx = newFakeCtx("a")
					ctx.sessionID = id
					ctxs[id] = ctx
				}
				_, err := g.beforeModel(ctx, &Request{Model: "gemini-2.5-flash", Contents: history(id)})
				require.NoError(t, err)
				assert.LessOrEqual(t, len(tableKeys(g)), tt.maxLen)
			}
			assert.Equal(t, tt.kept, tableKeys(g))
			g.sessions.mu.Lock()
			assert.LessOrEqual(t, g.sessions.bytes, g.sessions.max.bytes)
			g.sessions.mu.Unlock()
		})
	}
}

// TestSessionBound_EvictedSessionCountsWhatIsNew: the next call of an
// evicted session counts only its new content.
func TestSessionBound_EvictedSessionCountsWhatIsNew(t *testing.T) {
	counter := &countingCounter{}
	g := newGuard(NewCrushRegistry(WithRegistryLogger(quietLog)), WithLogger(quietLog), WithMaxSessions(1))
	g.addModel("a", fixedSummary("unused"), WithMaxTokens(1_000_000), WithTokenCounter(counter))
	require.NoError(t, g.Err())
	s1, s2 := newFakeCtx("a"), newFakeCtx("a")
	s2.sessionID = "s2"
	h := coretest.ToolHistory(3, "s1")
	_, err := g.beforeModel(s1, &Request{Model: "gemini-2.5-flash", Contents: h})
	require.NoError(t, err)
	_, err = g.beforeModel(s2, &Request{Model: "gemini-2.5-flash", Contents: coretest.ToolHistory(3, "s2")})
	require.NoError(t, err)
	require.Equal(t, []string{"s2"}, tableKeys(g), "s1 was evicted")

	counter.take()
	next := append(coretest.ADKCopy(h), userMsg("and the database?"))
	_, err = g.beforeModel(s1, &Request{Model: "gemini-2.5-flash", Contents: next})
	require.NoError(t, err)
	assert.Less(t, counter.take(), 100, "only the new message is counted")
	assert.Equal(t, exactCount(&Request{Model: "gemini-2.5-flash", Contents: next}), s1.getInt(state.KeyLastEstimate))
}

// TestSessionBound_IdleSessionRetainsWhatIsNew: a session's count cache
// retains its whole history after a call that counted everything, and only
// the call's new content after a call that used its prefix record; the
// prefix chain's memo pins the history in both cases.
func TestSessionBound_IdleSessionRetainsWhatIsNew(t *testing.T) {
	g := boundedGuard(t)
	ctx := newFakeCtx("a")
	h := coretest.ToolHistory(10, "s1")
	hb := len(requestText(&Request{Contents: h}))
	_, err := g.beforeModel(ctx, &Request{Model: "gemini-2.5-flash", Contents: h})
	require.NoError(t, err)
	assert.Greater(t, g.sessions.bytes, hb, "after a full count the history is cached")

	next := append(coretest.ADKCopy(h), userMsg("next"))
	_, err = g.beforeModel(ctx, &Request{Model: "gemini-2.5-flash", Contents: next})
	require.NoError(t, err)
	// The run ends: the request kept for a compaction between turns is let
	// go (between_turns.go).
	g.AfterRun(ctx, RunEnd{})
	// The prefix chain's memo keeps the strings of the contents it names
	// (core/internal/countcache), and is accounted as the count cache is.
	strs := 0
	for _, c := range next {
		strs += contentid.Size(c)
	}
	memo := g.sessions.peek(sessionKey(ctx)).memory("a").prefix.Bytes()
	assert.GreaterOrEqual(t, memo, strs, "the memo retains the contents' strings")
	assert.GreaterOrEqual(t, g.sessions.bytes, memo, "the memo is accounted")
	assert.Less(t, g.sessions.bytes, sessionOverhead+2*countcache.EntryOverhead+memo, "after a prefix count only the new message is cached")
}

// TestSessionBound_ReloadedSessionRetainsNoHistory: a session whose
// contents come with new strings on every call (a database session
// service) retains, once a call used its prefix record, only that call's
// new content and the chain's entries: the memo stops pinning contents
// whose strings never come back.
func TestSessionBound_ReloadedSessionRetainsNoHistory(t *testing.T) {
	g := boundedGuard(t)
	ctx := newFakeCtx("a")
	h := coretest.ToolHistory(10, "s1")
	_, err := g.beforeModel(ctx, &Request{Model: "gemini-2.5-flash", Contents: cloneContents(h)})
	require.NoError(t, err)
	next := cloneContents(append(h, userMsg("next")))
	_, err = g.beforeModel(ctx, &Request{Model: "gemini-2.5-flash", Contents: next})
	require.NoError(t, err)
	g.AfterRun(ctx, RunEnd{}) // the run ends (between_turns.go)
	assert.Less(t, g.sessions.bytes, sessionOverhead+2*countcache.EntryOverhead+len(next)*countcache.MemoEntryBytes, "no history is retained")
	assert.Equal(t, requestTokens(testEst, engineReq(&Request{Model: "gemini-2.5-flash", Contents: next})), ctx.getInt(state.KeyLastEstimate), "the count used is the whole request's")
}

// cloneContents copies a history with new bytes for every string, as a
// database session service returns it: nothing is shared with other
// sessions.
func cloneContents(cs []*genai.Content) []*genai.Content {
	var cloneValue func(v any) any
	cloneValue = func(v any) any {
		switch x := v.(type) {
		case string:
			return strings.Clone(x)
		case map[string]any:
			m := make(map[string]any, len(x))
			for k, e := range x {
				m[strings.Clone(k)] = cloneValue(e)
			}
			return m
		case []any:
			a := make([]any, len(x))
			for i, e := range x {
				a[i] = cloneValue(e)
			}
			return a
		}
		return v
	}
	out := make([]*genai.Content, len(cs))
	for i, c := range cs {
		cp := &genai.Content{Role: c.Role}
		for _, p := range c.Parts {
			pp := &genai.Part{Text: strings.Clone(p.Text)}
			if fc := p.FunctionCall; fc != nil {
				pp.FunctionCall = &genai.FunctionCall{Name: strings.Clone(fc.Name), Args: cloneValue(fc.Args).(map[string]any)}
			}
			if fr := p.FunctionResponse; fr != nil {
				pp.FunctionResponse = &genai.FunctionResponse{Name: strings.Clone(fr.Name), Response: cloneValue(fr.Response).(map[string]any)}
			}
			cp.Parts = append(cp.Parts, pp)
		}
		out[i] = cp
	}
	return out
}

// BenchmarkSessionMemory measures the bytes the guard retains per idle
// session, for 1,000 sessions of 200k tokens whose histories share nothing
// (as a database session service returns them): after the session's first
// call (everything counted and cached) and after its second (the prefix
// record used: only the new message cached), without a bound and with the
// default bounds. It reports the heap retained per session (B/session) and
// what the table accounts (accounted-B/session).
func BenchmarkSessionMemory(b *testing.B) {
	const sessions = 1_000
	base := syntheticRequest(200_000)
	for _, bc := range []struct {
		name  string
		calls int
		opts  []Option
	}{
		{"calls=1/unbounded", 1, []Option{WithMaxSessionBytes(1 << 40)}},
		{"calls=2/unbounded", 2, []Option{WithMaxSessionBytes(1 << 40)}},
		{"calls=1/default", 1, nil},
		{"calls=2/default", 2, nil},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for range b.N {
				g := newGuard(NewCrushRegistry(WithRegistryLogger(quietLog)), append(bc.opts, WithLogger(quietLog))...)
				g.addModel("a", fixedSummary("unused"), WithMaxTokens(1_000_000))
				before := heapInUse()
				for i := range sessions {
					ctx := newFakeCtx("a")
					ctx.sessionID = fmt.Sprint("s", i)
					h := cloneContents(base.Contents)
					for c := range bc.calls {
						cs := append(h[:len(h):len(h)], cloneContents([]*genai.Content{userMsg(fmt.Sprint("message ", c))})...)
						if _, err := g.beforeModel(ctx, &Request{Model: base.Model, Config: base.Config, Contents: cs}); err != nil {
							b.Fatal(err)
						}
						h = cs
					}
				}
				retained := heapInUse() - before
				g.sessions.mu.Lock()
				accounted, kept := g.sessions.bytes, g.sessions.order.Len()
				g.sessions.mu.Unlock()
				b.ReportMetric(float64(retained)/sessions, "B/session")
				b.ReportMetric(float64(accounted)/sessions, "accounted-B/session")
				b.ReportMetric(float64(kept), "sessions-kept")
				runtime.KeepAlive(g)
			}
		})
	}
}

// heapInUse is the live heap after a collection.
func heapInUse() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// TestSessionBound_ConcurrentAccounting: calls for many sessions at once
// under a small byte bound leave the table within its bounds, and its
// account equal to what its entries retain.
func TestSessionBound_ConcurrentAccounting(t *testing.T) {
	g := boundedGuard(t, WithMaxSessionBytes(40_000), WithMaxSessions(6))
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				id := fmt.Sprint("s", (w+i)%12)
				ctx := newFakeCtx("a")
				ctx.sessionID = id
				h := coretest.ToolHistory(1+i%3, id)
				if _, err := g.beforeModel(ctx, &Request{Model: "gemini-2.5-flash", Contents: h}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	s := g.sessions
	s.mu.Lock()
	defer s.mu.Unlock()
	sum := 0
	for el := s.order.Front(); el != nil; el = el.Next() {
		e := el.Value.(*sessionEntry)
		assert.Zero(t, e.users)
		e.mu.Lock()
		assert.Equal(t, e.retainedBytes(), e.accounted)
		e.mu.Unlock()
		sum += e.accounted
	}
	assert.Equal(t, sum, s.bytes)
	assert.LessOrEqual(t, s.bytes, s.max.bytes)
	assert.LessOrEqual(t, s.order.Len(), s.max.sessions)
	assert.Len(t, s.byKey, s.order.Len())
}

func TestSessionBoundOptions(t *testing.T) {
	tests := []struct {
		name    string
		opt     Option
		want    sessionBounds
		wantErr string
	}{
		{"defaults", nil, sessionBounds{DefaultMaxSessions, DefaultMaxSessionBytes}, ""},
		{"zero sessions keeps the default", WithMaxSessions(0), sessionBounds{DefaultMaxSessions, DefaultMaxSessionBytes}, ""},
		{"zero bytes keeps the default", WithMaxSessionBytes(0), sessionBounds{DefaultMaxSessions, DefaultMaxSessionBytes}, ""},
		{"sessions", WithMaxSessions(3), sessionBounds{3, DefaultMaxSessionBytes}, ""},
		{"bytes", WithMaxSessionBytes(1 << 20), sessionBounds{DefaultMaxSessions, 1 << 20}, ""},
		{"negative sessions", WithMaxSessions(-1), sessionBounds{DefaultMaxSessions, DefaultMaxSessionBytes}, "WithMaxSessions(-1): must be >= 0"},
		{"negative bytes", WithMaxSessionBytes(-5), sessionBounds{DefaultMaxSessions, DefaultMaxSessionBytes}, "WithMaxSessionBytes(-5): must be >= 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var opts []Option
			if tt.opt != nil {
				opts = append(opts, tt.opt)
			}
			g := newGuard(NewCrushRegistry(WithRegistryLogger(quietLog)), append(opts, WithLogger(quietLog))...)
			assert.Equal(t, tt.want, g.sessions.max)
			if tt.wantErr == "" {
				assert.NoError(t, g.Err())
				return
			}
			require.Error(t, g.Err())
			assert.Contains(t, g.Err().Error(), tt.wantErr)
			err := g.Err()
			assert.Error(t, err, "the plugin is not built with an invalid option")
		})
	}
}
