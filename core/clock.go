package core

import (
	"context"
	"errors"
	"fmt"
	"time"
)

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

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}

// timeoutError is the cause of a context the summary timeout ended; it
// wraps context.DeadlineExceeded, so user code can tell it from a
// cancellation.
type timeoutError struct{ timeout time.Duration }

func (e *timeoutError) Error() string {
	return fmt.Sprintf("the summary timeout of %v passed: %v", e.timeout, context.DeadlineExceeded)
}

func (e *timeoutError) Unwrap() error { return context.DeadlineExceeded }

// withTimeout is context.WithTimeout on clock c, with a *timeoutError cause;
// the returned function stops c's timer and cancels with context.Canceled.
func withTimeout(parent context.Context, c Clock, d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	stop := c.AfterFunc(d, func() { cancel(&timeoutError{timeout: d}) })
	return ctx, func() {
		stop()
		cancel(context.Canceled)
	}
}

func timedOut(ctx context.Context) bool {
	var te *timeoutError
	return errors.As(context.Cause(ctx), &te)
}
