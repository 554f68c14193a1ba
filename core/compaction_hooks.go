package core

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// PendingCompaction is what a WithBeforeCompaction hook is told of a
// compaction about to start.
type PendingCompaction struct {
	// Agent and SessionID identify the conversation.
	Agent     string
	SessionID string
	// Strategy is the strategy that will compact.
	Strategy Strategy
	// Reason says what triggered it, as in CompactionEvent.
	Reason string
	// Tokens is the guard's calibrated count of the request; Threshold and
	// Window are the numbers the decision was made against.
	Tokens    int
	Threshold int
	Window    int
}

// CompactionDecision is a WithBeforeCompaction hook's answer. The zero value
// lets the compaction run as configured.
type CompactionDecision struct {
	// Skip skips this compaction: the request is sent as it is, nothing is
	// summarized or stored, and the next model call decides again. It is
	// honoured only while the request fits the window (less the room kept
	// for the output); a request that would not fit is compacted anyway,
	// with a warning, since the guard never sends a request known to
	// overflow.
	Skip bool
	// Instructions are appended to the summary prompt of this compaction
	// only, after the agent's WithInstructions, e.g. "Keep the failing
	// test's name and its last error message."
	Instructions string
}

// beforeCompaction asks the before-compaction hook whether to skip and for
// instructions. It runs like a summarizer (parked, bounded by the summary
// timeout); a failure is logged and the compaction runs as configured.
func (g *Guard) beforeCompaction(t *turn, reason string, count int) (skip bool, instructions string) {
	if g.beforeHook == nil {
		return false, ""
	}
	p := PendingCompaction{
		Agent: t.cfg.name, SessionID: t.ctx.SessionID(), Strategy: t.cfg.policy.name(), Reason: reason,
		Tokens: count, Threshold: t.lim.Threshold, Window: t.lim.Window,
	}
	hook := g.beforeHook // the goroutine must not capture t
	d, _, err := callParked(t.ctx, g.clock, t.cfg.summaryTimeout, t.sess, func(ctx context.Context) (CompactionDecision, error) {
		return hook(ctx, p), nil
	})
	if err != nil {
		var pe *PanicError
		if errors.As(err, &pe) {
			err = fmt.Errorf("panic: %v", pe.Value)
		}
		t.log().Error("contextguard: the before-compaction hook failed; compacting as configured", "error", err)
		return false, ""
	}
	instructions = strings.TrimSpace(d.Instructions)
	if !d.Skip {
		return false, instructions
	}
	if count > t.lim.Room() {
		t.log().Warn("contextguard: the before-compaction hook asked to skip, but the request would not fit the window; compacting",
			"tokens", count, "window", t.lim.Window)
		return false, instructions
	}
	t.log().Info("contextguard: compaction skipped by the before-compaction hook",
		"reason", reason, "tokens", count, "threshold", t.lim.Threshold, "window", t.lim.Window)
	return true, instructions
}
