package core

import (
	"context"

	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/countcache"
	"github.com/adk-contextguard/contextguard/core/internal/pairs"
	"github.com/adk-contextguard/contextguard/core/internal/state"
)

// checkPrepared drops agent's prepared summary when raw no longer starts
// with what it covers or the compaction counter moved (another branch, an
// edited log, a compaction stored elsewhere).
func (e *sessionEntry) checkPrepared(ctx context.Context, agent string, raw []*genai.Content, chain *countcache.Chain, compactions int) {
	p := e.prepared.Load()
	if p == nil || p.agent != agent {
		return
	}
	if p.end > len(raw) || chain.At(raw, p.end) != p.chain || p.compactions != compactions {
		e.dropPrepared(ctx, "the history it covers is no longer the request's")
	}
}

func (e *sessionEntry) dropPrepared(ctx context.Context, why string) {
	if p := e.takePrepared(); p != nil {
		p.drop(ctx, why)
	}
}

// compactPrepared sends the prepared summary and the contents after it,
// waiting at most the summary timeout. A summary that cannot be used or
// does not fit is wasted and the compaction runs inline.
func (g *Guard) compactPrepared(t *turn, cs []*genai.Content, next state.Agent, p *preparedSummary, s compactionStrategy, reason string) step {
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
		// A covered request must be the one it was written for.
		p.waste(t.ctx, "the request changed since it was prepared")
		return c.compactWith(s, reason)
	case t.hookInstructions != "":
		p.waste(t.ctx, "the before-compaction hook gave instructions")
		return c.compactWith(s, reason)
	case pairs.SafeStart(t.Raw, end) != end:
		p.waste(t.ctx, "it ends inside a call/response pair")
		return c.compactWith(s, reason)
	}
	waited, ok := p.await(t.ctx, t.sess, t.cfg.summaryTimeout)
	if !ok || p.failed {
		p.waste(t.ctx, "it was not written within the summary timeout")
		return c.compactWith(s, reason)
	}
	out := c.keptTail(end, p.summary)
	o := outcome{contents: out, summary: p.summary, watermark: end, newEst: t.Weigh(out)}
	o.newCount = t.Cal.Scale(o.newEst)
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
