package core

import (
	"context"
	"errors"
	"fmt"
)

// The summarizer's call: its window, and the call bounded by the summary
// timeout.

// summarizerWindow is the window of the model that writes the summary:
// WithSummarizerWindow's, else the agent's own when it is the same model (or
// a custom Summarizer), else the registry's; a model the registry does not
// know gets DefaultContextWindow, with a warning once per agent and model
// that names WithSummarizerWindow.
func (g *Guard) summarizerWindow(t *turn) int {
	if t.cfg.summarizerWindow > 0 {
		return t.cfg.summarizerWindow
	}
	s, ok := t.cfg.summarizer.(ModelNamer)
	if !ok {
		return t.lim.window
	}
	name, ok := s.ModelName()
	if !ok || name == t.req.Model {
		return t.lim.window
	}
	if w, known := g.knownWindow(name); known {
		return w
	}
	if _, seen := g.triggerWarned.LoadOrStore("summarizer\x00"+t.cfg.name+"\x00"+name, true); !seen {
		t.log().Warn("contextguard: the summarizer's model is unknown; assuming the default context window for it (set WithSummarizerWindow to override)",
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

// guardSummarizerWindow is the summarizer's window for this turn (see
// summarizerWindow), the agent's when unset.
func (t *turn) guardSummarizerWindow() int {
	if t.sumWindow > 0 {
		return t.sumWindow
	}
	return t.lim.window
}

// summarize calls the agent's summarizer, bounded by the summary timeout
// even when the summarizer ignores its context (CallBounded): on expiry the
// guard stops waiting and the caller takes the fallback summary. The
// session's mutex is released meanwhile (park), and the summarizer's context
// is marked, so that a call it makes back into the guard for this session
// gets ErrReentrant rather than deadlocking. A panic is turned into an error
// (logged with its stack) so the agent survives it.
func (g *Guard) summarize(t *turn, req SummaryRequest) (string, error) {
	parent := context.Context(t.ctx)
	if t.spanCtx != nil {
		parent = t.spanCtx
	}
	ctx, cancel := withTimeout(parent, g.clock, t.cfg.summaryTimeout)
	defer cancel()
	began := g.clock.Now()
	sum := t.cfg.summarizer // the goroutine must not capture t: it would escape
	s, err := CallBounded(t.sess.park(ctx), func(ctx context.Context) (string, error) {
		return sum.Summarize(ctx, req)
	})
	t.sess.unpark()
	g.tel.summarizerCall(parent, t.cfg.name, g.clock.Now().Sub(began))
	if err != nil && timedOut(ctx) && parent.Err() == nil {
		err = fmt.Errorf("no summary within the summary timeout of %v: %w", t.cfg.summaryTimeout, err)
	}
	var p *PanicError
	if errors.As(err, &p) {
		t.log().Error("contextguard: summarizer panicked", "summarizer_model", summarizerModel(t.cfg.summarizer),
			"panic", fmt.Sprint(p.Value), "stack", string(p.Stack))
		return "", fmt.Errorf("summarizer panicked: %v", p.Value)
	}
	return s, err
}
