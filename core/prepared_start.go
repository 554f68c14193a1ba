package core

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/estimate"
	"github.com/adk-contextguard/contextguard/core/internal/sat"
)

// Starting a prepared summary (ARCHITECTURE.md, One model call): what it
// covers is chosen so that its request fits (preparedEnd), and it is written
// on a goroutine of the guard's while the tools run (runPrepared).

// backgroundCall is the Call of a background summary: the session's IDs and
// the invocation's user content, on a context of the guard's that Close
// cancels, not the invocation's, which ends with the run.
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
// answers, when the call kept a candidate (noteGrowth), the session has none
// prepared and the bound allows. The compaction is begun with the session
// owned, on a turn over a private session entry (its count cache and
// summary message are the goroutine's), and summarized as inline.
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
		// Nothing to summarize, or a request that would not fit: the
		// compaction runs inline, and no call is spent on a summary.
		if comp != nil {
			comp.span.End()
			mem.unprepared = InlineStepTooLarge
		}
		p.abandon()
		return
	}
	p.first, p.end, p.chain = comp.first, end, mem.prefix.chainOf(cand.req.Contents, end)
	p.prevSummary, p.compactions, p.userReq = comp.prevSummary, cand.prev.compactions, comp.userReq
	p.request, p.budget = sat.Add(comp.bare, comp.budget), comp.budget
	p.log = t.log()
	sess.prepared.Store(p)
	mem.unprepared = InlinePreparedUnusable // should the next call not use it
	g.prep.started.Add(1)
	t.log().Info("contextguard: preparing the summary while tools run",
		"tokens", cand.before, "threshold", cand.lim.Threshold, "contents", end-comp.first, "kept_contents", comp.cov-end)
	go g.runPrepared(t, comp, p)
}

// preparedEnd is where the summary prepared by c ends, 0 for none worth
// preparing: the first of the strategy's splits whose request is likely to
// leave room for the next step (fitsPrepared), else the whole span when its
// request is likely to fit (preparedFits).
func preparedEnd(t *turn, c *compaction, cand prepareCandidate) int {
	for _, split := range t.cfg.policy.suffixes(c, ReasonTokens) {
		if fitsPrepared(c, cand, t.Cal.Scale(estimate.Contents(t.Est, t.Raw[split:c.cov]))) {
			return split
		}
	}
	if preparedFits(cand.lim, preparedRequest(c, cand, 0), sat.Add(cand.before, cand.growth), c.budget) {
		return c.cov
	}
	return 0
}

// preparedRequest is about the request a summary prepared by c would make:
// the summary at its budget, the continuation, tail tokens kept verbatim,
// and the next step's predicted growth.
func preparedRequest(c *compaction, cand prepareCandidate, tail int) int {
	return sat.Add(sat.Add(sat.Add(c.bare, c.budget), tail), cand.growth)
}

// fitsPrepared reports whether the request a summary prepared by c would
// make is likely to leave room for one more such step under the threshold
// (leavesRoom).
func fitsPrepared(c *compaction, cand prepareCandidate, tail int) bool {
	return leavesRoom(preparedRequest(c, cand, tail), cand.growth, cand.lim.Threshold)
}

// leavesRoom reports whether a request of count n leaves room under the
// threshold for a step as large as the largest recent one (growth, with
// its margin): a split that does not would reach the trigger at the next
// step, when a summary of the whole span frees more.
func leavesRoom(n, growth, threshold int) bool {
	return sat.Add(n, int(float64(growth)/growthMargin)) <= threshold
}

// runPrepared writes p's summary on its own goroutine.
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

// chainOf is the chain hash of raw[:n]; a memo already at raw (the call
// just made) costs a key walk.
func (m *prefixMemo) chainOf(raw []*genai.Content, n int) uint64 {
	m.update(raw)
	return m.at(n)
}
