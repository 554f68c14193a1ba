package core

import (
	"slices"

	"github.com/adk-contextguard/contextguard/core/internal/sat"
	"github.com/adk-contextguard/contextguard/core/internal/window"
)

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
