package coretest

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFakeClock_FiresOnlyWhenAdvanced: timers fire during the Advance that
// reaches their time, in the order of their times, then of arming; a
// stopped timer never fires; a timer armed by a firing one fires in the same
// Advance when it is due.
func TestFakeClock_FiresOnlyWhenAdvanced(t *testing.T) {
	c := NewFakeClock(time.Time{})
	assert.Equal(t, FakeClockStart, c.Now())
	var fired []string
	c.AfterFunc(2*time.Second, func() { fired = append(fired, "2s") })
	c.AfterFunc(time.Second, func() {
		fired = append(fired, "1s")
		c.AfterFunc(500*time.Millisecond, func() { fired = append(fired, "1.5s") })
	})
	c.AfterFunc(time.Second, func() { fired = append(fired, "1s second") })
	stop := c.AfterFunc(time.Second, func() { fired = append(fired, "stopped") })
	assert.Equal(t, 4, c.Timers())
	assert.True(t, stop())
	assert.False(t, stop(), "already stopped")

	c.Advance(999 * time.Millisecond)
	assert.Empty(t, fired, "nothing is due")
	c.Advance(time.Second + time.Millisecond)
	assert.Equal(t, []string{"1s", "1s second", "1.5s", "2s"}, fired)
	assert.Zero(t, c.Timers())
	assert.Equal(t, FakeClockStart.Add(2*time.Second), c.Now())

	fired = nil
	c.AfterFunc(-time.Second, func() { fired = append(fired, "now") })
	c.Advance(0)
	assert.Equal(t, []string{"now"}, fired, "a bound already passed fires at the next Advance")
}

// TestFakeClock_WaitTimers: WaitTimers returns once enough timers are
// armed, and gives up with its context's cause.
func TestFakeClock_WaitTimers(t *testing.T) {
	baseline := runtime.NumGoroutine()
	c := NewFakeClock(time.Time{})
	armed := make(chan error, 1)
	go func() { armed <- c.WaitTimers(context.Background(), 2) }()
	c.AfterFunc(time.Second, func() {})
	c.AfterFunc(time.Second, func() {})
	require.NoError(t, <-armed)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, c.WaitTimers(ctx, 3), context.Canceled)
	assert.Zero(t, GoroutinesLeft(baseline))
}

// TestGoroutinesLeft: a goroutine still blocked is counted; once it ends,
// none is.
func TestGoroutinesLeft(t *testing.T) {
	baseline := runtime.NumGoroutine()
	release, started := make(chan struct{}), make(chan struct{})
	go func() {
		close(started)
		<-release
	}()
	<-started
	assert.Equal(t, 1, goroutinesLeftNow(baseline))
	close(release)
	assert.Zero(t, GoroutinesLeft(baseline))
}

// goroutinesLeftNow is GoroutinesLeft without waiting, for a goroutine known
// to be blocked.
func goroutinesLeftNow(baseline int) int { return max(runtime.NumGoroutine()-baseline, 0) }
