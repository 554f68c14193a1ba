package core

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/coretest"

	"github.com/adk-contextguard/contextguard/core/internal/state"
	"github.com/adk-contextguard/contextguard/core/internal/textcut"
)

// hangBound is how long a test waits for a guard call before it declares
// the call hung. It is far beyond any timeout the tests configure, so it
// only fires when the guard waits for something that never comes.
const hangBound = 20 * time.Second

// finishes runs f on its own goroutine and reports whether it returned
// within hangBound, failing the test when it did not (rather than hanging
// the test binary).
func finishes(t *testing.T, what string, f func()) bool {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
		return true
	case <-time.After(hangBound):
		t.Errorf("%s did not return within %v: the guard is waiting for code that never returns", what, hangBound)
		return false
	}
}

// stuckModel is a HostModel whose GenerateContent ignores its context: it
// blocks until the test releases it, then answers. It records how many calls
// entered and how many returned, so a test can tell that the guard returned
// while a call was still blocked. onEnter, when set, runs on each call's
// goroutine before it blocks (a test moves its fake clock there).
type stuckModel struct {
	name     string
	entered  chan struct{} // one value per call that entered
	left     chan struct{} // one value per call that returned
	onEnter  func()
	release  chan struct{}
	once     sync.Once
	calls    atomic.Int32
	returned atomic.Int32
}

func newStuckModel(t *testing.T, name string) *stuckModel {
	baseline := runtime.NumGoroutine()
	m := &stuckModel{name: name, entered: make(chan struct{}, 16), left: make(chan struct{}, 16), release: make(chan struct{})}
	// Release the blocked calls at the end, wait for each to return, and
	// check that their goroutines ended, so no goroutine outlives the test.
	t.Cleanup(func() {
		m.unblock()
		for range m.calls.Load() {
			select {
			case <-m.left:
			case <-time.After(hangBound):
				t.Errorf("a released call did not return within %v", hangBound)
				return
			}
		}
		assert.Equal(t, m.calls.Load(), m.returned.Load())
		assert.Zero(t, coretest.GoroutinesLeft(baseline), "the abandoned calls return once released")
	})
	return m
}

func (m *stuckModel) unblock() { m.once.Do(func() { close(m.release) }) }

func (m *stuckModel) Name() string { return m.name }

// generate is the model's answer to a request: it blocks until released.
func (m *stuckModel) generate(context.Context, *Request) (*Response, error) {
	m.calls.Add(1)
	defer func() {
		m.returned.Add(1)
		m.left <- struct{}{}
	}()
	select {
	case m.entered <- struct{}{}:
	default:
	}
	if m.onEnter != nil {
		m.onEnter()
	}
	<-m.release // the context is deliberately ignored
	return &Response{Content: genai.NewContentFromText("late answer", genai.RoleModel)}, nil
}

// ModelName names the model (ModelNamer), as the root's LLMSummarizer does.
func (m *stuckModel) ModelName() (string, bool) { return m.name, true }

// Summarize is the root's LLMSummarizer over this model.
func (m *stuckModel) Summarize(ctx context.Context, sr SummaryRequest) (string, error) {
	return llmSummarize(ctx, m.name, sr, m.generate)
}

// stuckSummarizer is a custom Summarizer that ignores its context the same
// way.
type stuckSummarizer struct{ m *stuckModel }

func (s stuckSummarizer) Summarize(context.Context, SummaryRequest) (string, error) {
	resp, err := s.m.generate(context.Background(), nil)
	if err != nil {
		return "", err
	}
	return textcut.ContentText(resp.Content), nil
}

// TestSummaryTimeout_BoundsSummarizersThatIgnoreTheirContext: WithSummaryTimeout
// bounds every summarizer, including the default LLM summarizer over a model
// that ignores its context. The guard stops waiting, compacts with the
// fallback summary and returns while the model call is still blocked. The
// timeout fires when the model, once called, moves the guard's clock past
// it.
func TestSummaryTimeout_BoundsSummarizersThatIgnoreTheirContext(t *testing.T) {
	tests := []struct {
		name string
		opts func(m *stuckModel) (HostModel, []AgentOption)
	}{
		{"default LLM summarizer, threshold strategy", func(m *stuckModel) (HostModel, []AgentOption) {
			return m, nil
		}},
		{"default LLM summarizer, sliding window", func(m *stuckModel) (HostModel, []AgentOption) {
			return m, []AgentOption{WithSlidingWindow(4)}
		}},
		{"custom summarizer", func(m *stuckModel) (HostModel, []AgentOption) {
			return nil, []AgentOption{WithSummarizer(stuckSummarizer{m})}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := coretest.NewFakeClock(time.Time{})
			stuck := newStuckModel(t, "summarizer")
			stuck.onEnter = func() { clock.Advance(testSummaryTimeout) }
			llm, opts := tt.opts(stuck)
			var events []CompactionEvent
			logs := &logBuffer{}
			g := newGuard(NewCrushRegistry(WithRegistryLogger(logs.logger())), WithLogger(logs.logger()), WithClock(clock),
				WithOnCompaction(func(_ context.Context, e CompactionEvent) { events = append(events, e) }))
			g.addModel("a", llm, append([]AgentOption{WithMaxTokens(8_000), WithSummaryTimeout(testSummaryTimeout)}, opts...)...)
			require.NoError(t, g.Err())
			ctx := newFakeCtx("a")

			var req *Request
			if !finishes(t, "BeforeModelCallback", func() { req, _ = compactOnce(t, g, ctx) }) {
				return
			}
			assert.EqualValues(t, 1, stuck.calls.Load(), "the summarizer was asked once")
			assert.Zero(t, stuck.returned.Load(), "the guard returned while the summarizer was still blocked")
			require.Len(t, events, 1)
			assert.True(t, events[0].Fallback, "the fallback summary is used")
			assert.Contains(t, events[0].FallbackReason, "summary timeout")
			assert.Contains(t, events[0].FallbackReason, "deadline exceeded")
			assert.Equal(t, 1, events[0].SummarizerCalls, "a summarizer that timed out is not asked again")
			assert.Contains(t, requestText(req), "Automatic summary")
			assert.Contains(t, requestText(req), "LATEST please fix the build")
			assert.Equal(t, 1, ctx.getInt(state.KeyCompactions), "the compaction is persisted")
		})
	}
}

// TestRecoveryModel_CancelledWhileItIgnoresItsContext: a recovery model that
// ignores its context does not hold the agent once the call's context is
// cancelled. The guard returns the provider's error, and the compaction it
// made is kept for the session's next call.
func TestRecoveryModel_CancelledWhileItIgnoresItsContext(t *testing.T) {
	stuck := newStuckModel(t, "gemini-2.5-flash")
	sum := fixedSummary("RECOVERY-SUMMARY")
	g, logs := newTestGuard(t, sum, WithMaxTokens(100_000), WithRecoveryModel(stuck))
	cctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ctx := newFakeCtx("a").withUser("LATEST please fix the build").withContext(cctx)
	req := request(append(coretest.History(20, 300), userMsg("LATEST please fix the build"))...)
	_, err := g.beforeModel(ctx, req)
	require.NoError(t, err)

	overflow := &coretest.OverflowError{Style: coretest.ErrorAnthropic, Tokens: 130_000, Limit: 100_000}
	var resp *Response
	done := make(chan struct{})
	go func() {
		defer close(done)
		resp, err = g.onModelError(ctx, req, overflow)
	}()
	select {
	case <-stuck.entered:
	case <-time.After(hangBound):
		t.Fatal("the recovery model was never called")
	}
	cancel()
	select {
	case <-done:
	case <-time.After(hangBound):
		t.Fatalf("OnModelErrorCallback did not return within %v of its context's cancellation", hangBound)
	}
	require.NoError(t, err, "the provider's error is returned by ADK itself")
	assert.Nil(t, resp)
	assert.Zero(t, stuck.returned.Load(), "the guard returned while the recovery model was still blocked")
	assert.Contains(t, logs.String(), "the recovery model failed")
	assert.Equal(t, 1, sum.Calls())
	assert.Equal(t, "RECOVERY-SUMMARY", ctx.getStr(state.KeySummary), "the compaction is kept for the next call")
}
