package core

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/adk-contextguard/contextguard/core/coretest"

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
