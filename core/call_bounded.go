package core

import (
	"context"
	"fmt"
	"runtime/debug"
)

// PanicError is a panic of user code run by CallBounded: the value the code
// panicked with and the goroutine's stack at the panic. For adapters.
type PanicError struct {
	Value any
	Stack []byte
}

// Error describes the panic by its value.
func (p *PanicError) Error() string { return fmt.Sprintf("panic: %v", p.Value) }

// CallBounded runs f(ctx) on its own goroutine and returns its result, or
// stops waiting when ctx is done first, so that user code that ignores its
// context (a model stuck on the network) cannot hold the agent past ctx's
// deadline. An abandoned call keeps running until f returns; its result goes
// to a buffered channel, so its goroutine then exits, and a late panic is
// recovered and dropped. A panic of f is returned as a *PanicError. For adapters (the recovery model's call).
func CallBounded[T any](ctx context.Context, f func(context.Context) (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		defer func() {
			if p := recover(); p != nil {
				r = result{err: &PanicError{Value: p, Stack: debug.Stack()}}
			}
			done <- r
		}()
		if err := ctx.Err(); err != nil {
			r.err = fmt.Errorf("not started: %w", context.Cause(ctx))
			return
		}
		r.v, r.err = f(ctx)
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		select {
		case r := <-done: // it returned too: its answer wins
			return r.v, r.err
		default:
		}
		var zero T
		return zero, fmt.Errorf("stopped waiting for it: %w", context.Cause(ctx))
	}
}
