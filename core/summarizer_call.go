package core

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// The summarizer's call: its window, and the call bounded by the summary
// timeout.

// summarizerWindow is the window of the model that writes cfg's summaries
// for a request to model under window: WithSummarizerWindow's, else window
// when it is the same model (or a custom Summarizer), else the registry's;
// a model the registry does not know gets DefaultContextWindow, with a
// warning to log once per agent and model that names WithSummarizerWindow.
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
	if w, known := g.knownWindow(name); known {
		return w
	}
	if _, seen := g.triggerWarned.LoadOrStore("summarizer\x00"+cfg.name+"\x00"+name, true); !seen {
		log.Warn("contextguard: the summarizer's model is unknown; assuming the default context window for it (set WithSummarizerWindow to override)",
			"summarizer_model", name, "window", DefaultContextWindow)
	}
	return DefaultContextWindow
}

// knownWindow is the registry's window for model, and whether the registry
// knows the model (ModelRegistry: 0 or less is unknown).
func (g *Guard) knownWindow(model string) (int, bool) {
	w := g.registry.ContextWindow(model)
	return w, w > 0
}

// summarize calls the agent's summarizer, bounded by the summary timeout
// even when the summarizer ignores its context (CallBounded): on expiry the
// guard stops waiting and the caller takes the fallback summary. The
// session's mutex is released meanwhile (park), and the summarizer's context
// is marked, so that a call it makes back into the guard for this session
// gets ErrReentrant rather than deadlocking. A panic is turned into an error
// (logged with its stack) so the agent survives it.
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

// callParked runs fn bounded by timeout on clock (CallBounded), with sess
// parked meanwhile: calls waiting for the session proceed, and one fn makes
// back into the guard for it gets ErrReentrant. expired reports an error
// the timeout caused, not parent's end.
func callParked[T any](parent context.Context, clock Clock, timeout time.Duration, sess *sessionEntry, fn func(context.Context) (T, error)) (v T, expired bool, err error) {
	ctx, cancel := withTimeout(parent, clock, timeout)
	defer cancel()
	v, err = CallBounded(sess.park(ctx), fn)
	sess.unpark()
	return v, err != nil && timedOut(ctx) && parent.Err() == nil, err
}
