package core

import (
	"context"
	"fmt"
	"slices"

	"go.opentelemetry.io/otel/attribute"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/sat"
	"github.com/adk-contextguard/contextguard/core/internal/window"
)

// When a background summary starts (noteGrowth, at the end of a guarded
// call) and what it summarizes (startPrepared, once the response came).

// noteGrowth, at the end of every guarded call, records the step's growth
// and, when the next request is predicted to reach the share of the trigger
// the agent prepares at, keeps what a background summary starts from
// (ARCHITECTURE.md, One model call). It leaves why the next compaction for
// tokens would run inline.
func (p *preparer) noteGrowth(t *turn, mem *agentMemory, s *step) {
	mem.candidate = prepareCandidate{}
	mem.unprepared = InlineNotPrepared
	mem.noteStep(t.beforeEst, s.next.LastEstimate)
	// At most one per session.
	if held := t.sess.prepared.Load(); held != nil {
		if held.agent == t.cfg.name {
			mem.unprepared = InlinePreparedUnusable
		}
		return
	}
	if p.limit == 0 || s.err != nil || t.mode != modeCompact || t.cfg.summarizer == nil {
		return
	}
	cand, ok := sentRequest(t, s)
	if !ok {
		return
	}
	cand.growth = cand.cal.Scale(int(float64(mem.largestGrowth()) * growthMargin))
	predicted := sat.Add(cand.before, cand.growth)
	if !reachesEarly(t, s, predicted) {
		mem.unprepared = InlineNotPredicted
		return
	}
	cand.ok = true
	mem.candidate = cand
}

// noteStep records the growth of est over the last request let through,
// then sent: raw estimates, so a calibration learned is not growth.
func (m *agentMemory) noteStep(est, sent int) {
	if d := est - m.lastEst; m.lastEst > 0 && d > 0 {
		m.growth[m.growthAt%growthSteps] = d
		m.growthAt++
	}
	m.lastEst = sent
}

func (m *agentMemory) largestGrowth() int {
	return slices.Max(m.growth[:])
}

// reachesEarly reports whether the predicted next request reaches the
// share the agent prepares at once pruning freed what it can: a summary for
// a request pruning takes back under would be thrown away.
func reachesEarly(t *turn, s *step, predicted int) bool {
	at := t.cfg.preparesAt(t.lim)
	if float64(predicted) < at {
		return false
	}
	if t.cfg.pruneKeep <= 0 {
		return true
	}
	freed, _ := pruneFreed(t.Est, t.recall, t.Raw, s.contents, t.frontier, pruneFrontier(t.cfg.pruneKeep, t.Raw))
	return float64(predicted-t.Cal.Scale(freed)) >= at
}

// sentRequest is the request the call let through, as a background summary
// starts from it; not after a compaction, whose next is prepared later.
func sentRequest(t *turn, s *step) (prepareCandidate, bool) {
	if s.event != nil {
		return prepareCandidate{}, false
	}
	return prepareCandidate{req: withContents(Request{Model: t.req.Model, Config: t.req.Config}, t.Raw),
		sent: s.contents, prev: t.prev, inj: t.inj, lim: t.lim, cal: t.Cal, before: t.before}, true
}

func (c *Agent) preparesAt(lim window.Limits) float64 {
	f := DefaultEarlyCompaction
	if c.early > 0 {
		f = c.early
	}
	return float64(lim.Threshold) * f
}

// inlineReason is CompactionEvent.InlineReason, "" when not for tokens; a
// step that fills the window says so whatever the last call predicted.
func (t *turn) inlineReason(reason string, bare int) InlineReason {
	if t.betweenTurns || reason != ReasonTokens {
		return ""
	}
	if t.stepFillsWindow(bare) {
		return InlineStepFillsWindow
	}
	if t.unprepared == "" {
		return InlineNotPrepared
	}
	return t.unprepared
}

// stepFillsWindow reports whether this request's tool step, beside bare
// and the shortest summary, is past what preparedFits allows: no summary
// written before it could leave it room. bare holds a user message.
func (t *turn) stepFillsWindow(bare int) bool {
	grown := t.beforeEst - t.sentEst
	if t.sentEst <= 0 || grown <= 0 || len(t.Raw) == 0 || !hasFunctionResponse(t.Raw[len(t.Raw)-1]) {
		return false
	}
	n := sat.Add(sat.Add(bare, minSummaryTokens), t.Cal.Scale(grown))
	return !preparedFits(t.lim, n, t.before, minSummaryTokens)
}

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
