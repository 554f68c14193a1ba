package core

import (
	"slices"

	"github.com/adk-contextguard/contextguard/core/internal/sat"
	"github.com/adk-contextguard/contextguard/core/internal/window"
)

// When to prepare a summary (ARCHITECTURE.md, One model call): every call
// records its step's growth, and a call whose next request is predicted to
// reach the trigger keeps what a background summary starts from
// (prepareCandidate), with why the next compaction would run inline.

// noteGrowth records the step's growth and, when the next request is
// predicted to reach the share of the trigger the agent prepares at and
// the session has no summary prepared, keeps the call's values for one
// (startPrepared). It runs at the end of every guarded call and leaves in
// the agent's memory why its next compaction for tokens would run inline.
func (p *preparer) noteGrowth(t *turn, mem *agentMemory, s *step) {
	mem.candidate = prepareCandidate{}
	mem.unprepared = InlineNotPrepared
	mem.noteStep(t.beforeEst, s.next.lastEstimate)
	// At most one per session: the agent's serves its next call; another
	// agent's leaves it none.
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

// noteStep records the growth of this request's raw estimate est over the
// one last let through, and sent, the raw estimate this call lets through:
// raw, so that a calibration learned in between is not taken for growth.
func (m *agentMemory) noteStep(est, sent int) {
	if d := est - m.lastEst; m.lastEst > 0 && d > 0 {
		m.growth[m.growthAt%growthSteps] = d
		m.growthAt++
	}
	m.lastEst = sent
}

// largestGrowth is the largest of the agent's latest growths per step, in
// raw tokens.
func (m *agentMemory) largestGrowth() int {
	return slices.Max(m.growth[:])
}

// reachesEarly reports whether a next request predicted at count predicted
// reaches the share of the trigger the agent prepares at once pruning has
// freed what it can: a summary prepared for a request that pruning takes
// back under it would be thrown away.
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
// starts from it. ok is false for a call that compacted: the next
// compaction's summary is prepared from a later request.
func sentRequest(t *turn, s *step) (prepareCandidate, bool) {
	if s.event != nil {
		return prepareCandidate{}, false
	}
	return prepareCandidate{req: withContents(Request{Model: t.req.Model, Config: t.req.Config}, t.Raw),
		sent: s.contents, prev: t.prev, inj: t.inj, lim: t.lim, cal: t.Cal, before: t.before}, true
}

// preparesAt is the count at which the agent prepares its summary
// (WithEarlyCompaction).
func (c *Agent) preparesAt(lim window.Limits) float64 {
	f := DefaultEarlyCompaction
	if c.early > 0 {
		f = c.early
	}
	return float64(lim.Threshold) * f
}

// inlineReason is why a compaction for reason in this call runs inline
// (CompactionEvent.InlineReason), "" when it is not for tokens; bare is the
// request's irreducible part. A step that fills the window says so
// whatever the last call predicted: no prediction could have served it.
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

// stepFillsWindow reports whether the step this request adds to the one
// the agent's last call let through, beside the irreducible part bare and
// the shortest summary, is past what a prepared summary's request may take
// (preparedFits): no summary written before it could leave it room. Only a
// tool step counts: bare already holds a turn's user message.
func (t *turn) stepFillsWindow(bare int) bool {
	grown := t.beforeEst - t.sentEst
	if t.sentEst <= 0 || grown <= 0 || len(t.Raw) == 0 || !hasFunctionResponse(t.Raw[len(t.Raw)-1]) {
		return false
	}
	n := sat.Add(sat.Add(bare, minSummaryTokens), t.Cal.Scale(grown))
	return !preparedFits(t.lim, n, t.before, minSummaryTokens)
}
