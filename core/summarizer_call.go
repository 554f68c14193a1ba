package core

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// summarizerWindow is the window of the model that writes cfg's summaries:
// WithSummarizerWindow's, else window for the same model or a custom
// Summarizer, else the registry's, else DefaultContextWindow with a warning
// once per agent and model.
func (g *Guard) summarizerWindow(cfg *Agent, model string, window int, log *slog.Logger) int {
	if cfg.summarizerWindow > 0 {
		return cfg.summarizerWindow
	}
	s, ok := cfg.summarizer.(ModelNamer)
	if !ok {
		return window
	}
	name, ok := s.ModelName()
	if !ok || name == model {
		return window
	}
	if w := g.registry.ContextWindow(name); w > 0 {
		return w
	}
	if _, seen := g.triggerWarned.LoadOrStore("summarizer\x00"+cfg.name+"\x00"+name, true); !seen {
		log.Warn("contextguard: the summarizer's model is unknown; assuming the default context window for it (set WithSummarizerWindow to override)",
			"summarizer_model", name, "window", DefaultContextWindow)
	}
	return DefaultContextWindow
}

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
