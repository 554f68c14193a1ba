package core

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// summarize calls the summarizer bounded by the summary timeout even when
// it ignores its context, with the session parked so a call back into the
// guard gets ErrReentrant rather than deadlocking. A panic becomes an error,
// logged with its stack, so the agent survives it.
func (c *compaction) summarize(req SummaryRequest) (string, error) {
	parent := context.Context(c.call)
	if c.spanCtx != nil {
		parent = c.spanCtx
	}
	began := c.clock.Now()
	sum := c.cfg.summarizer // the goroutine must not capture c: it would escape
	s, expired, err := callParked(parent, c.clock, c.cfg.summaryTimeout, c.sess, func(ctx context.Context) (string, error) {
		return sum.Summarize(ctx, req)
	})
	c.tel.summarizerCall(parent, c.cfg.name, c.clock.Now().Sub(began))
	if expired {
		err = fmt.Errorf("no summary within the summary timeout of %v: %w", c.cfg.summaryTimeout, err)
	}
	var p *PanicError
	if errors.As(err, &p) {
		c.log.Error("contextguard: summarizer panicked", "summarizer_model", summarizerModel(c.cfg.summarizer),
			"panic", fmt.Sprint(p.Value), "stack", string(p.Stack))
		return "", fmt.Errorf("summarizer panicked: %v", p.Value)
	}
	return s, err
}

// callParked runs fn bounded by timeout with sess parked; expired reports
// an error the timeout caused, not parent's end.
func callParked[T any](parent context.Context, clock Clock, timeout time.Duration, sess *sessionEntry, fn func(context.Context) (T, error)) (v T, expired bool, err error) {
	ctx, cancel := withTimeout(parent, clock, timeout)
	defer cancel()
	v, err = CallBounded(sess.park(ctx), fn)
	sess.unpark()
	return v, err != nil && timedOut(ctx) && parent.Err() == nil, err
}
