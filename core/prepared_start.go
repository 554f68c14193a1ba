package core

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/sat"
)

// Starting a prepared summary (ARCHITECTURE.md, One model call,
// Concurrency): when the response asks for tool calls, the compaction is
// begun with the session owned, what it covers chosen so that its request
// fits (preparedEnd, preparedFits), and its summary written on a goroutine
// of the guard's while the tools run (runPrepared).

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
// answers, when the call kept a candidate (noteGrowth), the session has no
// summary prepared yet and the guard's bound allows. The compaction is begun
// here, with the session owned, on values of its own (a turn over a private
// session entry: its count cache and summary message are the goroutine's);
// the goroutine runs the engine's summary of the span (summarizeSpan: the
// same prompt, budget, rolling pieces and fallback as an inline compaction).
func (g *Guard) startPrepared(c Call, cfg *Agent, st State) {
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
	own := newSessionEntry(sess.key)
	call := backgroundCall{Context: ctx, app: c.AppName(), user: c.UserID(), session: c.SessionID(), userContent: c.UserContent()}
	t, _ := g.newTurn(callInput{call: call, ro: st, cfg: cfg, sess: own, prev: cand.prev, mode: modeCompact, background: &cand}, cand.req)
	comp, _ := g.beginCompaction(t, cand.sent, cand.prev, cfg.policy.name(), ReasonTokens)
	end := 0
	if comp != nil {
		end = preparedEnd(t, comp, cand)
	}
	if end == 0 {
		// Nothing to summarize, or the request a prepared summary would
		// make (the summary, the continuation, the next step verbatim)
		// would not fit under the threshold: the compaction runs inline,
		// and no call is spent on a summary it would not use.
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
		"tokens", cand.before, "threshold", cand.lim.threshold, "contents", end-comp.first, "kept_contents", comp.cov-end)
	go g.runPrepared(t, comp, p)
}

// preparedEnd is where the summary prepared by c ends, 0 for no summary
// worth preparing: the first of the strategy's splits (the newest turns or
// contents it keeps verbatim) whose request is likely to leave room for
// the next step (fitsPrepared), else the whole span when its request is
// likely to fit (preparedFits), whether or not it leaves that room.
// The request such a summary makes is the summary, the contents from the
// split on, and the step the tools are running for.
func preparedEnd(t *turn, c *compaction, cand prepareCandidate) int {
	for _, split := range t.cfg.policy.suffixes(t, c, ReasonTokens) {
		if fitsPrepared(c, cand, t.cal.scale(contentsTokens(t.est, t.raw[split:c.cov]))) {
			return split
		}
	}
	if preparedFits(cand.lim, preparedRequest(c, cand, 0), sat.Add(cand.before, cand.growth), c.budget) {
		return c.cov
	}
	return 0
}

// preparedFits reports whether the request of count n that a prepared
// summary makes is sent in place of the request of count before. Under the
// threshold it is. Past it, by the contents the summary keeps verbatim (the
// step its tools ran for), it is when it stays halfway to the room the
// request has, as far as the guard lets a request go that it cannot
// compact below the trigger (decide), and frees at least a summary's
// length (budget). The compaction waits for none of the summary, and the
// next request compacts again; the inline compaction it replaces would
// have summarized the step too, in the model call. Without the length it
// frees, a request just past the threshold could be "compacted" to a
// larger one, and the next to a larger one still: a run of summaries of
// summaries that shrinks nothing.
func preparedFits(lim limits, n, before, budget int) bool {
	return n <= lim.threshold || (n <= lim.halfwayToRoom(lim.threshold) && sat.Add(n, budget) <= before)
}

// preparedRequest is the request a summary prepared by c would make, about:
// the summary at the length c asks for at most, the continuation, the kept
// contents of tail tokens, and the next step verbatim (its predicted
// growth).
func preparedRequest(c *compaction, cand prepareCandidate, tail int) int {
	return sat.Add(sat.Add(sat.Add(c.bare, c.budget), tail), cand.growth)
}

// fitsPrepared reports whether the request a summary prepared by c would
// make is likely to leave room for one more such step under the threshold
// (leavesRoom).
func fitsPrepared(c *compaction, cand prepareCandidate, tail int) bool {
	return leavesRoom(preparedRequest(c, cand, tail), cand.growth, cand.lim.threshold)
}

// leavesRoom reports whether a request of count n, compacted with a
// prepared summary, leaves room under the threshold for a step as large as
// the largest recent one (growth is the prediction, with its margin). A
// strategy's split that keeps the newest contents verbatim is prepared
// only when it does: otherwise the next step would reach the trigger at
// once, and a summary of the whole span frees more.
func leavesRoom(n, growth, threshold int) bool {
	return sat.Add(n, int(float64(growth)/growthMargin)) <= threshold
}

// runPrepared writes p's summary on its own goroutine: the summary of the
// span its compaction covers, as fullSummary asks for it.
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
		o = g.summarizeSpan(t, c, p.end, false, func(summary string) []*genai.Content {
			return keptTail(t, c, p.end, summary)
		})
	} else {
		o = g.fullSummary(t, c)
	}
	t.sess.mu.Unlock()
	p.summary, p.ev = o.summary, c.ev
	p.failed = t.ctx.Err() != nil
}

// chainOf is the chain hash of raw[:n], raw being the contents the memo was
// last brought to (the call just made): the memo is brought to raw again,
// which costs a key walk when it already holds it.
func (m *prefixMemo) chainOf(raw []*genai.Content, n int) uint64 {
	m.update(raw)
	return m.at(n)
}
