package core

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/coretest"
	"github.com/adk-contextguard/contextguard/core/internal/state"
)

// expiredClock is a clock on which every bound has already passed: its
// timers fire as they are armed, so a summary timeout ends the summarizer's
// context before the guard's goroutine for the call starts (CallBounded's
// "not started"), as a loaded machine may do with a short real timeout.
type expiredClock struct{}

func (expiredClock) Now() time.Time { return coretest.FakeClockStart }

func (expiredClock) AfterFunc(_ time.Duration, f func()) func() bool {
	f()
	return func() bool { return false }
}

// toolHistory is a coding agent's history: each exchange a user request, a
// tool call and its result, and the model's answer, each with its own
// marker (U for the user, T for a tool result, A for an answer).
func toolHistory(n int) []*genai.Content {
	var cs []*genai.Content
	for i := range n {
		cs = append(cs,
			userMsg(fmt.Sprintf("U%02d-MARK run the tests of package %d", i, i)),
			callMsg("run_tests", map[string]any{"package": fmt.Sprint(i)}),
			respMsg("run_tests", map[string]any{"output": fmt.Sprintf("T%02d-MARK ", i) + strings.Repeat("ok  \tpkg/x\t0.1s\n", 40)}),
			modelMsg(fmt.Sprintf("A%02d-MARK the tests of package %d pass", i, i)))
	}
	return cs
}

// TestSummaryTimeout_FallbackKeepsWhatTheErrorPathKeeps pins the fallback
// of a summary timeout to the fallback of a summarizer error: whether the
// summarizer failed at once, timed out while it waited for its context,
// was abandoned while it ignored its context, or never started because the
// timeout passed first, the guard sends the same request and stores the
// same summary. (A stress row once reported markers lost under load: the
// summarizer was abandoned before it started, so the kit never saw the
// span in a summarizer input; the request sent was the error path's.)
func TestSummaryTimeout_FallbackKeepsWhatTheErrorPathKeeps(t *testing.T) {
	const latest = "LATEST-MARK please fix the build"
	raw := append(toolHistory(12), userMsg(latest))
	type outcome struct {
		sent, summary string
		event         CompactionEvent
		calls         int
	}
	compact := func(t *testing.T, clock Clock, llm *fakeLLM) outcome {
		t.Helper()
		var events []CompactionEvent
		g := newGuard(nil, WithLogger(quietLogger), WithClock(clock),
			WithOnCompaction(func(_ context.Context, e CompactionEvent) { events = append(events, e) }))
		g.addModel("a", llm, WithMaxTokens(8_000), WithSummaryTimeout(testSummaryTimeout))
		require.NoError(t, g.Err())
		ctx := newFakeCtx("a").withUser(latest)
		req := request(raw...)
		_, err := g.beforeModel(ctx, req)
		require.NoError(t, err)
		require.Len(t, events, 1)
		return outcome{sent: requestText(req), summary: ctx.getStr(state.KeySummary), event: events[0], calls: llm.Calls()}
	}

	want := compact(t, coretest.NewFakeClock(time.Time{}), failingSummarizer(errBoom))
	require.True(t, want.event.Fallback)
	require.Equal(t, 1, want.calls)
	assert.Contains(t, want.sent, latest, "the user's latest request is sent")
	assert.Contains(t, want.summary, "U11-MARK", "the fallback keeps the user's requests")

	baseline := runtime.NumGoroutine()
	hang := make(chan struct{})
	t.Cleanup(func() {
		close(hang)
		assert.Zero(t, coretest.GoroutinesLeft(baseline), "the abandoned summarizer returns once released")
	})
	tests := []struct {
		name  string
		clock func() Clock
		llm   func(clock Clock) *fakeLLM
		calls int
	}{
		{"timed out while it waited for its context", func() Clock { return coretest.NewFakeClock(time.Time{}) },
			func(c Clock) *fakeLLM { return slowSummarizer(c.(*coretest.FakeClock)) }, 1},
		{"abandoned while it ignored its context", func() Clock { return coretest.NewFakeClock(time.Time{}) },
			func(c Clock) *fakeLLM {
				return &fakeLLM{name: "summarizer", reply: func(context.Context, *Request) (string, error) {
					c.(*coretest.FakeClock).Advance(testSummaryTimeout)
					select { // the context is deliberately ignored
					case <-hang:
					case <-time.After(hangBound): // a guard that never stops waiting fails the test
					}
					return "TOO-LATE", nil
				}}
			}, 1},
		{"timed out before it started", func() Clock { return expiredClock{} },
			func(Clock) *fakeLLM { return fixedSummary("NEVER-ASKED") }, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := tt.clock()
			got := compact(t, clock, tt.llm(clock))
			assert.Equal(t, tt.calls, got.calls, "summarizer calls")
			assert.True(t, got.event.Fallback)
			assert.Contains(t, got.event.FallbackReason, "summary timeout")
			assert.Equal(t, want.sent, got.sent, "the request sent is the error path's")
			assert.Equal(t, want.summary, got.summary, "the summary stored is the error path's")
			assert.Equal(t, want.event.TokensAfter, got.event.TokensAfter)
			assert.Equal(t, want.event.ContentsSummarized, got.event.ContentsSummarized)
		})
	}
}
