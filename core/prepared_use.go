package core

import (
	"time"

	"google.golang.org/genai"
)

// Using a prepared summary (ARCHITECTURE.md, One model call): every call
// checks that the session's prepared summary still covers its request's
// prefix (checkPrepared), and the call that compacts for tokens sends it,
// waiting only for what is left of it (compactPrepared, awaitPrepared), or
// falls back to the inline compaction.

// checkPrepared drops the session's prepared summary for the call's agent
// when the request no longer starts with what it covers (the history
// changed: another branch, an edited log, a compaction stored elsewhere).
func (g *Guard) checkPrepared(t *turn) {
	p := t.sess.prepared.Load()
	if p == nil || p.agent != t.cfg.name {
		return
	}
	if p.end > len(t.raw) || t.prefixChain(p.end) != p.chain || p.compactions != t.prev.compactions {
		g.dropPrepared(t, "the history it covers is no longer the request's")
	}
}

// dropPrepared cancels the session's prepared summary and counts it
// dropped, for why.
func (g *Guard) dropPrepared(t *turn, why string) {
	p := t.sess.prepared.Swap(nil)
	if p == nil {
		return
	}
	p.cancel()
	g.prep.dropped.Add(1)
	g.tel.preparedSummary(t.ctx, t.cfg.name, "dropped")
	t.log().Info("contextguard: prepared summary dropped", "reason", why, "prepared_agent", p.agent)
}

// wastePrepared counts a prepared summary that a compaction could not use,
// for why; its calls were spent for nothing.
func (g *Guard) wastePrepared(t *turn, p *preparedSummary, why string) {
	p.cancel()
	g.prep.wasted.Add(1)
	g.tel.preparedSummary(t.ctx, t.cfg.name, "wasted")
	t.log().Info("contextguard: prepared summary not used; compacting inline", "reason", why)
}

// compactPrepared is a compaction for tokens that uses the session's
// prepared summary when it covers the request's prefix: the request is the
// summary message followed by the contents after what it covers, verbatim
// (the model's function calls and the tool results: pair-safe), pruned as
// always. It waits for what is left of the summary, at most the summary
// timeout. When the summary cannot be used, or the request it makes does not
// fit under the threshold, the compaction runs inline (compactWith) and the
// prepared summary counts as wasted.
func (g *Guard) compactPrepared(t *turn, cs []*genai.Content, p *preparedSummary, s compactionStrategy, reason string) step {
	t.sess.prepared.Store(nil)
	c, done := g.beginCompaction(t, cs, s.name(), reason)
	if c == nil {
		g.wastePrepared(t, p, "nothing to compact")
		return done
	}
	end := p.end
	switch {
	case c.first != p.first || c.prevSummary != p.prevSummary || end > c.cov || end <= c.first ||
		(c.userReq != p.userReq && coveredRequest(t, end) != nil):
		// A request the summary covers must be the one it was written
		// for; a newer one (a turn begun since) is sent verbatim after it.
		g.wastePrepared(t, p, "the request changed since it was prepared")
		return g.compactWith(t, c, s, reason)
	case t.hookInstructions != "":
		g.wastePrepared(t, p, "the before-compaction hook gave instructions")
		return g.compactWith(t, c, s, reason)
	case pairSafeStart(t.raw, end) != end:
		g.wastePrepared(t, p, "it ends inside a call/response pair")
		return g.compactWith(t, c, s, reason)
	}
	waited, ok := g.awaitPrepared(t, p)
	if !ok || p.failed {
		g.wastePrepared(t, p, "it was not written within the summary timeout")
		return g.compactWith(t, c, s, reason)
	}
	tail := t.raw[end:]
	out := make([]*genai.Content, 0, len(tail)+1)
	out = append(out, summaryMessage(t, p.summary, c.userReq, coveredRequest(t, end)))
	out = append(out, tail...)
	out, _ = pruneToolResults(t.est, t.cfg.pruneKeep, t.recall, t.raw, out)
	o := outcome{contents: out, summary: p.summary, watermark: end, newEst: t.weigh(out)}
	o.newCount = t.cal.scale(o.newEst)
	if !preparedFits(t.lim, o.newCount, t.before, c.budget) {
		g.wastePrepared(t, p, "the request it makes is too large")
		return g.compactWith(t, c, s, reason)
	}
	c.ev.Ran, c.ev.Prepared, c.ev.InlineReason = t.preparedRan(), true, ""
	c.ev.Waited = t.waited(waited)
	c.ev.SummarizerCalls, c.ev.RollingCalls = p.ev.SummarizerCalls, p.ev.RollingCalls
	c.ev.Fallback, c.ev.FallbackReason = p.ev.Fallback, p.ev.FallbackReason
	c.ev.SummaryForm = p.ev.SummaryForm
	c.ev.ContentsSummarized = end - c.first
	c.summarizing = max(p.took-waited, 0)
	g.prep.used.Add(1)
	g.tel.preparedSummary(t.ctx, t.cfg.name, "used")
	return g.finishCompaction(t, c, o)
}

// awaitPrepared waits for p, with the session parked (a concurrent call for
// it waits, a re-entrant one is refused), at most the agent's summary
// timeout on the guard's clock, or until the call's context ends. It
// returns how long the call waited and whether p is written.
func (g *Guard) awaitPrepared(t *turn, p *preparedSummary) (time.Duration, bool) {
	if p.ready() {
		return 0, true
	}
	began := g.clock.Now()
	ctx, cancel := withTimeout(t.ctx, g.clock, t.cfg.summaryTimeout)
	defer cancel()
	ctx = t.sess.park(ctx)
	select {
	case <-p.done:
	case <-ctx.Done():
	}
	t.sess.unpark()
	return g.clock.Now().Sub(began), p.ready()
}
