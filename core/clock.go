package core

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// The guard's clock (WithClock): the time of a compaction and of a call when
// the host gives none, the summarizer's latency, and the timeouts of the
// summarizer and the before-compaction hook (ARCHITECTURE.md, The engine and
// the ADK adapter).

// Clock is the guard's source of time. SystemClock is the default; tests
// pass a clock they advance themselves (core/coretest's FakeClock), so that
// a summary timeout fires when the test says so, never because the machine
// was slow. Its methods may be called from any goroutine.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// AfterFunc calls f, on a goroutine of the clock's choosing, once d
	// has elapsed, and returns a function that cancels the call: it
	// reports whether it stopped the call before it began, as
	// time.Timer.Stop does.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

// SystemClock returns the clock of the operating system: time.Now and
// time.AfterFunc.
func SystemClock() Clock { return systemClock{} }

// systemClock is SystemClock's.
type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}

// timeoutError is the cause (context.Cause) of a context the guard ended
// because its bound passed: the summary timeout, which also bounds the
// before-compaction hook. It wraps context.DeadlineExceeded, so user code
// can tell it apart from a cancellation by errors.Is on the cause.
type timeoutError struct{ timeout time.Duration }

func (e *timeoutError) Error() string {
	return fmt.Sprintf("the summary timeout of %v passed: %v", e.timeout, context.DeadlineExceeded)
}

func (e *timeoutError) Unwrap() error { return context.DeadlineExceeded }

// withTimeout is context.WithTimeout on clock c, whose cause on expiry is a
// *timeoutError (timedOut); the returned function, to be called once the
// work is done, stops c's timer and cancels with context.Canceled.
func withTimeout(parent context.Context, c Clock, d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	stop := c.AfterFunc(d, func() { cancel(&timeoutError{timeout: d}) })
	return ctx, func() {
		stop()
		cancel(context.Canceled)
	}
}

// timedOut reports whether ctx, from withTimeout, ended because its timeout
// passed.
func timedOut(ctx context.Context) bool {
	var te *timeoutError
	return errors.As(context.Cause(ctx), &te)
}
