package core

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/sat"
)

// backgroundCall is a background summary's Call, on a context Close
// cancels rather than the invocation's, which ends with the run.
type backgroundCall struct {
	context.Context
	app, user, session string
	userContent        *genai.Content
}

func (b backgroundCall) AppName() string             { return b.app }
func (b backgroundCall) UserID() string              { return b.user }
func (b backgroundCall) SessionID() string           { return b.session }
func (b backgroundCall) UserContent() *genai.Content { return b.userContent }

// startPrepared starts the background summary of the request the response
// answers, when the call kept a candidate, the session has none and the
// bound allows (ARCHITECTURE.md, One model call). Its turn has a private
// session entry, so the cache and summary message are the goroutine's.
func (g *Guard) startPrepared(c Call, cfg *Agent, st State) {
	if g.prep.limit == 0 {
		return
	}
	sess, err := g.sessions.acquire(c, sessionKey(c))
	if err != nil {
		return
	}
	defer g.sessions.release(sess)
	mem := sess.memory(cfg.name)
	cand := mem.candidate
	mem.candidate = prepareCandidate{}
	if !cand.ok || sess.prepared.Load() != nil {
		return
	}
	p, ctx, ok := g.prep.begin(cfg.name)
	if !ok {
		return
	}
	own := newSessionEntry(sess.key, sess.log)
	call := backgroundCall{Context: ctx, app: c.AppName(), user: c.UserID(), session: c.SessionID(), userContent: c.UserContent()}
	t, _ := g.newTurn(callInput{call: call, ro: st, cfg: cfg, sess: own, prev: cand.prev, mode: modeCompact, background: &cand}, cand.req)
	comp, _ := g.beginCompaction(t, cand.sent, cand.prev, cfg.policy.name(), ReasonTokens)
	end := 0
	if comp != nil {
		end = preparedEnd(t, comp, cand)
	}
	if end == 0 {
		// Nothing to summarize, or it would not fit: no call is spent.
		if comp != nil {
			comp.span.End()
			mem.unprepared = InlineStepTooLarge
		}
		p.abandon()
		return
	}
	p.first, p.end, p.chain = comp.first, end, mem.prefix.ChainOf(cand.req.Contents, end)
	p.prevSummary, p.compactions, p.userReq = comp.prevSummary, cand.prev.Compactions, comp.userReq
	p.request, p.budget = sat.Add(comp.bare, comp.budget), comp.budget
	p.log = t.log()
	sess.prepared.Store(p)
	mem.unprepared = InlinePreparedUnusable // should the next call not use it
	g.prep.started.Add(1)
	t.log().Info("contextguard: preparing the summary while tools run",
		"tokens", cand.before, "threshold", cand.lim.Threshold, "contents", end-comp.first, "kept_contents", comp.cov-end)
	go g.runPrepared(t, comp, p)
}

// preparedEnd is where the prepared summary ends, 0 for none: the first of
// the strategy's splits that leaves room for the next step, else the whole
// span when its request is likely to fit.
func preparedEnd(t *turn, c *compaction, cand prepareCandidate) int {
	for _, split := range t.cfg.policy.suffixes(c, ReasonTokens) {
		if fitsPrepared(c, cand, t.Cal.Scale(t.Est.Sum(t.Raw[split:c.cov]))) {
			return split
		}
	}
	if preparedFits(cand.lim, preparedRequest(c, cand, 0), sat.Add(cand.before, cand.growth), c.budget) {
		return c.cov
	}
	return 0
}

// preparedRequest is about the request a prepared summary would make, with
// tail tokens verbatim and the next step's predicted growth.
func preparedRequest(c *compaction, cand prepareCandidate, tail int) int {
	return sat.Add(sat.Add(sat.Add(c.bare, c.budget), tail), cand.growth)
}

// fitsPrepared reports whether that request leaves room under the threshold
// for a step as large as the largest recent one: a split that does not
// reaches the trigger at the next step, when the whole span frees more.
func fitsPrepared(c *compaction, cand prepareCandidate, tail int) bool {
	return sat.Add(preparedRequest(c, cand, tail), int(float64(cand.growth)/growthMargin)) <= cand.lim.Threshold
}

func (g *Guard) runPrepared(t *turn, c *compaction, p *preparedSummary) {
	defer p.finish()
	defer func() {
		if r := recover(); r != nil {
			p.failed = true
			t.log().Error("contextguard: preparing the summary panicked; the next compaction runs inline", "panic", fmt.Sprint(r))
		}
		c.span.SetAttributes(attribute.Bool("contextguard.prepared", true))
		c.span.End()
	}()
	t.sess.mu.Lock() // the private entry: summarize parks it around the call
	var o outcome
	if p.end < c.cov {
		o = c.summarizeSpan(p.end, false, func(summary string) []*genai.Content {
			return c.keptTail(p.end, summary)
		})
	} else {
		o = c.fullSummary()
	}
	t.sess.mu.Unlock()
	p.summary, p.ev = o.summary, c.ev
	p.failed = t.ctx.Err() != nil
}
