package core

import "github.com/adk-contextguard/contextguard/core/internal/state"

// The end of a compaction: applied (its state, event, span and log line),
// or discarded when its request is not smaller; and the report of a
// pruning pass that made a compaction unnecessary.

// finish records the outcome: the state to persist, the event, the span
// and the log line; a request not smaller than before is discarded.
func (c *compaction) finish(o outcome) step {
	// c.before is floored at the provider's count: a provider that charges
	// attachments above their estimate has said how large the request was.
	if o.newCount >= c.before {
		return c.discard(o)
	}
	next := c.compactedState(o)
	ev, err := c.report(o)
	// The hook runs once the session is released (fireHook).
	return step{contents: o.contents, next: next, event: &ev, err: err}
}

// compactedState is the state an applied compaction stores.
func (c *compaction) compactedState(o outcome) state.Agent {
	next := c.unapplied
	// A prepared summary's request past the trigger holds the step the
	// summary kept verbatim, not a part no summary can shrink: it sets no
	// floor, and the next request compacts again (preparedFits).
	if o.newCount > c.lim.Threshold && !c.ev.Prepared {
		if c.floor == 0 {
			c.log.Warn("contextguard: the compacted request is still over the threshold; its irreducible part is too large, so the guard will not compact again until the conversation grows",
				"tokens_after", o.newCount, "threshold", c.lim.Threshold, "window", c.lim.Window)
		}
		next.Floor = o.newCount
	} else {
		next.Floor = 0
	}
	next.Summary = o.summary
	next.UserRequest = c.userReq
	next.Watermark = o.watermark
	next.Fingerprint = c.Est.Fingerprint(c.Raw[o.watermark-1])
	next.Anchor = anchorAt(c.req.Coverage, c.Raw, o.watermark)
	next.SummarizedAt = c.before
	next.RealTokens = 0
	next.LastEstimate = o.newEst
	next.Compactions = c.compactions + 1
	next.PruneFrontier = pruneFrontier(c.cfg.pruneKeep, c.Raw) // as compact pruned the kept contents
	next.PrefixKept, next.Invalidated = c.ev.PrefixKeptTokens, c.ev.InvalidatedTokens
	stampCompaction(c.cfg.host.Now(c.call), &next, c.ev.Reason)
	return next
}

// report completes the event, ends the span and logs "compacted"; err wraps
// ErrIrreducible when the request is still known not to fit.
func (c *compaction) report(o outcome) (CompactionEvent, error) {
	ev := c.ev
	ev.TokensAfter = o.newCount
	ev.Summary = o.summary
	ev.Duration = c.clock.Now().Sub(c.start)
	if ev.Prepared {
		// Waited is what the call waited for (compactPrepared).
		ev.Duration += c.summarizing
	} else {
		ev.Waited = c.betweenTurns.waited(ev.Duration)
	}
	_, err := c.irreducible(o.newEst)
	c.tel.endCompaction(c.spanCtx, c.span, ev, err)
	c.log.Info("contextguard: compacted",
		"tokens_before", ev.TokensBefore, "tokens_after", ev.TokensAfter,
		"threshold", ev.Threshold, "window", ev.Window, "strategy", ev.Strategy,
		"reason", ev.Reason, "contents_summarized", ev.ContentsSummarized, "kept_contents", len(o.contents)-1,
		"summarizer_model", summarizerModel(c.cfg.summarizer), "summarizer_calls", ev.SummarizerCalls,
		"rolling_calls", ev.RollingCalls, "summary_form", ev.SummaryForm, "fallback", ev.Fallback, "duration_ms", ev.Duration.Milliseconds(),
		"ran", ev.Ran, "prepared", ev.Prepared, "waited_ms", ev.Waited.Milliseconds(), "inline_reason", ev.InlineReason,
		"prefix_kept_tokens", ev.PrefixKeptTokens, "invalidated_tokens", ev.InvalidatedTokens)
	return ev, err
}

// discard sends the request as it was and stores only the size the
// compaction came out at as the floor, so the guard compacts again once the
// request has grown past it (tokenTrigger; slidingWindow.turnsDue).
func (c *compaction) discard(o outcome) step {
	next := c.unapplied
	next.LastEstimate = c.origEst
	next.Floor = max(o.newCount, c.before)
	if c.floor == 0 {
		msg := "contextguard: the compacted request is not smaller than the request; sending the request as it is and compacting again once it has grown"
		if o.newCount > c.lim.Threshold {
			msg = "contextguard: the request is still over the threshold and compacting does not make it smaller; its irreducible part is too large, so the guard sends it as it is and will not compact again until the conversation grows"
		}
		c.log.Warn(msg, "tokens_before", c.before, "tokens_after", o.newCount, "threshold", c.lim.Threshold,
			"window", c.lim.Window, "strategy", c.ev.Strategy, "reason", c.ev.Reason,
			"summarizer_model", summarizerModel(c.cfg.summarizer), "summarizer_calls", c.ev.SummarizerCalls)
	}
	ev := c.ev
	ev.Discarded = true
	ev.TokensAfter = c.before
	ev.PrefixKeptTokens, ev.InvalidatedTokens = next.PrefixKept, next.Invalidated
	ev.Duration = c.clock.Now().Sub(c.start)
	ev.Waited = c.betweenTurns.waited(ev.Duration)
	_, err := c.irreducible(c.origEst)
	c.tel.endCompaction(c.spanCtx, c.span, ev, err)
	return step{contents: c.orig, next: next, event: &ev, err: err}
}

// prunedAtTrigger reports a pruning pass that took a request over the
// trigger back under it as a compaction (StrategyToolResultPruning): it
// costs the provider's cache as a summary would (README, Prompt caching).
func prunedAtTrigger(tel *telemetry, t *turn, before, after int, next state.Agent) *CompactionEvent {
	ev := CompactionEvent{
		Agent:             t.cfg.name,
		SessionID:         t.ctx.SessionID(),
		Strategy:          StrategyToolResultPruning,
		Reason:            ReasonTokens,
		TokensBefore:      before,
		TokensAfter:       after,
		Threshold:         t.lim.Threshold,
		Window:            t.lim.Window,
		Ran:               t.betweenTurns.ran(),
		PrefixKeptTokens:  next.PrefixKept,
		InvalidatedTokens: next.Invalidated,
	}
	ctx, span := tel.startCompaction(t.ctx, ev.Agent, ev.SessionID, ev.Strategy)
	tel.endCompaction(ctx, span, ev, nil)
	t.log().Info("contextguard: pruned tool results at the trigger",
		"tokens_before", before, "tokens_after", after, "threshold", ev.Threshold, "window", ev.Window,
		"pruned_steps", t.frontier, "prefix_kept_tokens", ev.PrefixKeptTokens, "invalidated_tokens", ev.InvalidatedTokens)
	return &ev
}
