package coretest

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"time"
)

// A clock that moves only when a test advances it, for a guard's WithClock,
// and a check that a test left no goroutine behind.

// FakeClock is a clock whose time moves only when the test advances it: a
// timer set by AfterFunc fires during the Advance that reaches its time,
// never because the machine was slow. It satisfies the guard's Clock
// (core.Clock, each plugin's Clock). It is safe for concurrent use.
type FakeClock struct {
	mu     sync.Mutex
	now    time.Time
	seq    int
	timers []*fakeTimer // pending, in the order they were armed
	// changed is closed, and replaced, whenever a timer is armed.
	changed chan struct{}
}

// fakeTimer is one pending AfterFunc.
type fakeTimer struct {
	at  time.Time
	seq int // arming order, to fire timers of one time in that order
	f   func()
}

// FakeClockStart is the time a FakeClock starts at by default: a fixed
// instant, so that times a test sees do not depend on when it ran.
var FakeClockStart = time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)

// NewFakeClock returns a clock at start, or at FakeClockStart when start is
// the zero time.
func NewFakeClock(start time.Time) *FakeClock {
	if start.IsZero() {
		start = FakeClockStart
	}
	return &FakeClock{now: start, changed: make(chan struct{})}
}

// Now returns the clock's time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc arms a timer that calls f during the Advance that brings the
// clock to d from now (d <= 0: the next Advance, even of 0). It returns a
// function that disarms the timer and reports whether it was still armed.
func (c *FakeClock) AfterFunc(d time.Duration, f func()) (stop func() bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	t := &fakeTimer{at: c.now.Add(max(d, 0)), seq: c.seq, f: f}
	c.timers = append(c.timers, t)
	close(c.changed)
	c.changed = make(chan struct{})
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		i := slices.Index(c.timers, t)
		if i < 0 {
			return false
		}
		c.timers = slices.Delete(c.timers, i, i+1)
		return true
	}
}

// Advance moves the clock d forward and calls, on the caller's goroutine and
// in the order of their times (then of arming), the functions of the timers
// it reaches, the clock standing at each timer's time while its function
// runs. A function may arm timers; one due within d fires in this Advance
// too.
func (c *FakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	target := c.now.Add(max(d, 0))
	c.mu.Unlock()
	for {
		f := c.nextDue(target)
		if f == nil {
			break
		}
		f()
	}
	c.mu.Lock()
	c.now = target
	c.mu.Unlock()
}

// nextDue disarms the earliest timer due by target, moves the clock to its
// time and returns its function; nil when none is due.
func (c *FakeClock) nextDue(target time.Time) func() {
	c.mu.Lock()
	defer c.mu.Unlock()
	best := -1
	for i, t := range c.timers {
		if t.at.After(target) {
			continue
		}
		if best < 0 || t.at.Before(c.timers[best].at) || (t.at.Equal(c.timers[best].at) && t.seq < c.timers[best].seq) {
			best = i
		}
	}
	if best < 0 {
		return nil
	}
	t := c.timers[best]
	c.timers = slices.Delete(c.timers, best, best+1)
	if t.at.After(c.now) {
		c.now = t.at
	}
	return t.f
}

// Timers returns how many timers are armed.
func (c *FakeClock) Timers() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// WaitTimers waits until at least n timers are armed, so that a test can
// advance the clock once the code under test is waiting on it, without
// sleeping. It returns ctx's error when ctx ends first.
func (c *FakeClock) WaitTimers(ctx context.Context, n int) error {
	for {
		c.mu.Lock()
		armed, changed := len(c.timers), c.changed
		c.mu.Unlock()
		if armed >= n {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}

// goroutineSettleRounds and goroutineSettlePause bound how long
// GoroutinesLeft waits for goroutines that are only finishing (returning
// after their last send): a few rounds on an idle machine, and 20 s at most,
// far beyond any scheduling delay, so that only a goroutine blocked for
// good is reported. The pause is a back-off between looks, never a timing a
// test's outcome depends on.
const (
	goroutineSettleRounds = 20_000
	goroutineSettlePause  = time.Millisecond
)

// GoroutinesLeft returns how many goroutines run beyond baseline (a
// runtime.NumGoroutine taken before the test started its own), after
// letting goroutines that are finishing end; 0 means none was left behind.
// It counts every goroutine of the process, so it suits tests that do not
// run in parallel with others.
func GoroutinesLeft(baseline int) int {
	n := runtime.NumGoroutine()
	for range goroutineSettleRounds {
		if n <= baseline {
			return 0
		}
		runtime.Gosched()
		time.Sleep(goroutineSettlePause)
		n = runtime.NumGoroutine()
	}
	return n - baseline
}
