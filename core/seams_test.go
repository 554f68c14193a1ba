package core

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/adk-contextguard/contextguard/core/coretest"
)

// The test kit's clock is a Clock.
var _ Clock = (*coretest.FakeClock)(nil)

// TestWithClock_NilIsAnError: a nil clock is a configuration error, reported
// by the guard like every other bad option.
func TestWithClock_NilIsAnError(t *testing.T) {
	g := New(nil, WithLogger(quietLogger), WithClock(nil))
	require.Error(t, g.Err())
	assert.Contains(t, g.Err().Error(), "WithClock: clock is nil")
	assert.NoError(t, New(nil, WithLogger(quietLogger), WithClock(SystemClock())).Err())
}

// TestWithTimeout: the timeout context ends when its clock passes the
// bound, not before, with a cause that wraps context.DeadlineExceeded; its
// cancel function ends it early and disarms the clock's timer.
func TestWithTimeout(t *testing.T) {
	const bound = time.Minute
	t.Run("the bound passes on the clock", func(t *testing.T) {
		clock := coretest.NewFakeClock(time.Time{})
		ctx, cancel := withTimeout(context.Background(), clock, bound)
		defer cancel()
		require.Equal(t, 1, clock.Timers())
		clock.Advance(bound - time.Nanosecond)
		require.NoError(t, ctx.Err(), "not before the bound")
		assert.False(t, timedOut(ctx))
		clock.Advance(time.Nanosecond)
		require.Error(t, ctx.Err())
		assert.True(t, timedOut(ctx))
		assert.ErrorIs(t, context.Cause(ctx), context.DeadlineExceeded)
		assert.Contains(t, context.Cause(ctx).Error(), "summary timeout of 1m0s")
		cancel()
		assert.True(t, timedOut(ctx), "cancelling afterwards keeps the cause")
	})
	t.Run("cancelled before the bound", func(t *testing.T) {
		clock := coretest.NewFakeClock(time.Time{})
		ctx, cancel := withTimeout(context.Background(), clock, bound)
		cancel()
		assert.ErrorIs(t, ctx.Err(), context.Canceled)
		assert.False(t, timedOut(ctx))
		assert.Zero(t, clock.Timers(), "the timer is disarmed")
		clock.Advance(bound)
		assert.False(t, timedOut(ctx))
	})
	t.Run("the parent ends first", func(t *testing.T) {
		clock := coretest.NewFakeClock(time.Time{})
		parent, cancelParent := context.WithCancelCause(context.Background())
		ctx, cancel := withTimeout(parent, clock, bound)
		defer cancel()
		errGone := errors.New("the caller went away")
		cancelParent(errGone)
		assert.ErrorIs(t, context.Cause(ctx), errGone)
		assert.False(t, timedOut(ctx))
	})
	t.Run("the system clock", func(t *testing.T) {
		before := time.Now()
		ctx, cancel := withTimeout(context.Background(), SystemClock(), time.Hour)
		assert.NoError(t, ctx.Err())
		cancel()
		assert.ErrorIs(t, ctx.Err(), context.Canceled)
		assert.False(t, SystemClock().Now().Before(before))
		stop := SystemClock().AfterFunc(time.Hour, func() { t.Error("an hour passed") })
		assert.True(t, stop(), "stopped before it fired")
	})
}

// TestClock_MeasuresDurations: the durations the guard reports (the
// compaction's) are measured on its clock.
func TestClock_MeasuresDurations(t *testing.T) {
	const took = 3 * time.Second
	clock := coretest.NewFakeClock(time.Time{})
	var events []CompactionEvent
	g := newGuard(nil, WithLogger(quietLogger), WithClock(clock),
		WithOnCompaction(func(_ context.Context, e CompactionEvent) { events = append(events, e) }))
	g.addModel("a", &fakeLLM{name: "summarizer", reply: func(context.Context, *Request) (string, error) {
		clock.Advance(took)
		return "SUMMARY", nil
	}}, WithMaxTokens(8_000))
	require.NoError(t, g.Err())
	_, _ = compactOnce(t, g, newFakeCtx("a"))
	require.Len(t, events, 1)
	require.False(t, events[0].Fallback)
	assert.Equal(t, time.Duration(events[0].SummarizerCalls)*took, events[0].Duration)
}
