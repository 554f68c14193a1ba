package core

import (
	"time"

	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/pairs"
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
	if p.end > len(t.raw) || t.chain.at(t.raw, p.end) != p.chain || p.compactions != t.prev.compactions {
		g.dropPrepared(t, "the history it covers is no longer the request's")
	}
}

// dropPrepared drops the session's prepared summary, for why.
func (g *Guard) dropPrepared(t *turn, why string) {
	if p := t.sess.takePrepared(); p != nil {
		p.drop(t.ctx, why)
	}
}

// compactPrepared is a compaction for tokens that uses the session's
// prepared summary when it covers the request's prefix: the request is the
// summary message followed by the contents after what it covers, verbatim
// (the model's function calls and the tool results: pair-safe), pruned as
// always. It waits for what is left of the summary, at most the summary
// timeout. When the summary cannot be used, or the request it makes does not
// fit under the threshold, the compaction runs inline (compactWith) and the
// prepared summary counts as wasted.
func (g *Guard) compactPrepared(t *turn, cs []*genai.Content, next guardState, p *preparedSummary, s compactionStrategy, reason string) step {
	t.sess.takePrepared() // p: this call uses or wastes it
	c, done := g.beginCompaction(t, cs, next, s.name(), reason)
	if c == nil {
		p.waste(t.ctx, "nothing to compact")
		return done
	}
	end := p.end
	switch {
	case c.first != p.first || c.prevSummary != p.prevSummary || end > c.cov || end <= c.first ||
		(c.userReq != p.userReq && c.coveredRequest(end) != nil):
		// A request the summary covers must be the one it was written
		// for; a newer one (a turn begun since) is sent verbatim after it.
		p.waste(t.ctx, "the request changed since it was prepared")
		return c.compactWith(s, reason)
	case t.hookInstructions != "":
		p.waste(t.ctx, "the before-compaction hook gave instructions")
		return c.compactWith(s, reason)
	case pairs.SafeStart(t.raw, end) != end:
		p.waste(t.ctx, "it ends inside a call/response pair")
		return c.compactWith(s, reason)
	}
	waited, ok := g.awaitPrepared(t, p)
	if !ok || p.failed {
		p.waste(t.ctx, "it was not written within the summary timeout")
		return c.compactWith(s, reason)
	}
	out := c.keptTail(end, p.summary)
	o := outcome{contents: out, summary: p.summary, watermark: end, newEst: t.weigh(out)}
	o.newCount = t.cal.scale(o.newEst)
	if !preparedFits(t.lim, o.newCount, t.before, c.budget) {
		p.waste(t.ctx, "the request it makes is too large")
		return c.compactWith(s, reason)
	}
	c.ev.Ran, c.ev.Prepared, c.ev.InlineReason = t.betweenTurns.preparedRan(), true, ""
	c.ev.Waited = t.betweenTurns.waited(waited)
	c.ev.SummarizerCalls, c.ev.RollingCalls = p.ev.SummarizerCalls, p.ev.RollingCalls
	c.ev.Fallback, c.ev.FallbackReason = p.ev.Fallback, p.ev.FallbackReason
	c.ev.SummaryForm = p.ev.SummaryForm
	c.ev.ContentsSummarized = end - c.first
	c.summarizing = max(p.took-waited, 0)
	p.use(t.ctx)
	return c.finish(o)
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
