package core

import (
	"log/slog"

	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/calib"
	"github.com/adk-contextguard/contextguard/core/internal/countcache"
	"github.com/adk-contextguard/contextguard/core/internal/sat"
	"github.com/adk-contextguard/contextguard/core/internal/state"
	"github.com/adk-contextguard/contextguard/core/internal/window"
)

// agentMemory is what the guard keeps in memory for one agent of a session
// beside the session state, because state written in BeforeModelCallback
// rides on the model-response event, which ADK drops when the model call
// fails. Guarded by the session entry's mutex.
type agentMemory struct {
	agent string
	log   *slog.Logger // the guard's
	// The state keys of the compaction counter and of a requested compaction.
	compactionsKey string
	requestKey     string
	// compacted is the state the latest compaction wrote, kept until the
	// session state shows it, so a summary already paid for is reused;
	// compactedBetweenTurns says it was made after a run ended.
	compacted             *state.Agent
	compactedBetweenTurns bool
	// A compaction between turns that was not smaller (compaction.discard)
	// is not tried again until the conversation outgrows turnsFloor, while
	// the compaction counter is still turnsFloorAt.
	turnsFloor, turnsFloorAt int
	overflow                 *pendingOverflow // a provider overflow the next call acts on
	// With a recovery model: the request last let through (compared by
	// identity: Request.Origin), the contents ADK built for it and what
	// they retain (retainedBytesPerToken).
	sentReq   any
	sentRaw   []*genai.Content
	sentBytes int
	sentLen   int // contents ADK built for the request last let through
	// trimmed: requests are trimmed to the current request
	// (trimToCurrentRequest), logged once; no compaction between turns.
	trimmed bool
	prefix  countcache.Memo
	recall  *recallIndex // nil until the agent's first recall in this process
	model   string       // of the request last let through, for the recall tool's counts
	// The growth prediction (prepared_start.go): the raw estimate of the
	// request last let through, the latest growths per step (growthAt
	// counts them), what a summary prepared while the response's tools run
	// starts from, and why the next call would compact inline ("": unknown).
	lastEst    int
	growth     [growthSteps]int
	growthAt   int
	candidate  prepareCandidate
	unprepared InlineReason
	message    messageMeasure // between_turns_message.go
}

// Sizes of the growth prediction.
const (
	// growthSteps is how many of an agent's latest steps its growth per
	// step is the largest of: eight span the last few turns, enough to see
	// a large step that comes back every few turns (a test run). With four,
	// the stress matrix's debug sessions compacted inline each time it came.
	growthSteps = 8
	// growthMargin scales the predicted growth: a step a quarter larger
	// than the largest recent one still finds its summary prepared.
	growthMargin = 1.25
)

// prepareCandidate is what a call that did not compact keeps for its
// response's AfterModel when the next request is predicted to reach the
// trigger: what a background summary of this request starts from.
type prepareCandidate struct {
	ok     bool
	req    Request // contents, model and configuration; no Origin or Coverage
	sent   []*genai.Content
	prev   state.Agent
	inj    injection
	lim    window.Limits
	cal    calib.Calibration
	before int
	growth int // the next step's predicted growth, with its margin
}

// pendingOverflow is a provider overflow recorded for the next call.
type pendingOverflow struct {
	real     int // the provider's count of the rejected request, 0 if unknown
	limit    int // the provider's limit, 0 if unknown
	estimate int // the guard's raw estimate of the rejected request
	ratio    int // learned from the overflow, per mille; 0: none
	// contents is how many contents ADK built for the rejected request, 0
	// if unknown: a next request with fewer does not hold it (IncludeContents
	// "none"), and only the ratio learned applies.
	contents int
}

// memory returns agent's record, creating it.
func (e *sessionEntry) memory(agent string) *agentMemory {
	for _, m := range e.agents {
		if m.agent == agent {
			return m
		}
	}
	m := &agentMemory{agent: agent, log: e.log, compactionsKey: state.KeyCompactions + agent, requestKey: state.KeyCompactRequest + agent}
	e.agents = append(e.agents, m)
	return m
}

// quietLog discards the warnings of state reads the guard already logged.
var quietLog = slog.New(slog.DiscardHandler)

// rememberCompaction keeps the state a compaction of this call wrote (the
// counter is past before) so it survives a failed model call.
func (m *agentMemory) rememberCompaction(st StateReader, before int) {
	v, err := st.Get(m.compactionsKey)
	if err != nil {
		return
	}
	if n, ok := state.DecodeInt(v); !ok || n <= before {
		return
	}
	s := state.IO{Agent: m.agent, Log: quietLog}.LoadAll(st)
	m.compacted, m.compactedBetweenTurns = &s, false
}

// recall applies at the start of a call what the agent's memory knows and
// the session state does not, and returns the state the call starts from.
func (g *Guard) recall(call Call, cfg *Agent, m *agentMemory, st State, sio state.IO, req *Request, prev state.Agent) state.Agent {
	m.sentLen = len(req.Contents)
	if cfg.recoveryLLM != nil {
		m.sentReq, m.sentRaw = req.Origin, req.Contents
		m.sentBytes = sat.Scale(prev.LastEstimate, retainedBytesPerToken)
	}
	if m.compacted != nil {
		prev = m.reapplyCompaction(call.SessionID(), st, sio, req, prev)
	}
	if m.overflow != nil {
		prev = m.applyOverflow(call.SessionID(), g.requestLimits(cfg, req), st, sio, len(req.Contents), prev)
	}
	return prev
}

// compactedAhead reports whether m.compacted is ahead of prev: a compaction
// prev has not counted, or, made between turns, a pruning frontier past
// prev's (prunedAtTrigger counts no compaction).
func (m *agentMemory) compactedAhead(prev state.Agent) bool {
	c := m.compacted
	if c == nil {
		return false
	}
	return c.Compactions > prev.Compactions ||
		(m.compactedBetweenTurns && c.Compactions == prev.Compactions && c.PruneFrontier > prev.PruneFrontier)
}

// reapplyCompaction applies and persists again the compaction m holds and
// the state does not, when req still holds what it covers; it forgets it
// once the state has it or something newer.
func (m *agentMemory) reapplyCompaction(session string, st State, sio state.IO, req *Request, prev state.Agent) state.Agent {
	c := m.compacted
	if !m.compactedAhead(prev) {
		m.compacted = nil
		return prev
	}
	if c.Compactions > prev.Compactions {
		// A summary applies only where its cut is found; a frontier anywhere.
		if w, _, _, _ := locateCut(req.Contents, *c, req.Coverage); w == 0 {
			m.compacted = nil
			return prev
		}
	}
	msg := "contextguard: the state of the last compaction was lost with a failed model call; reusing its summary"
	if m.compactedBetweenTurns {
		msg = "contextguard: applying the compaction made between turns, which the session state does not hold"
	}
	m.log.Info(msg, "agent", m.agent, "session", session, "compactions", c.Compactions, "watermark", c.Watermark)
	if m.compactedBetweenTurns {
		// A compaction requested since the run ended is still to be answered.
		c.Request = prev.Request
	}
	if st != nil {
		sio.Save(st, prev, *c)
	}
	return *c
}

// applyOverflow turns m.overflow into the state a call of n contents starts
// from: the ratio it taught and, when the request still holds the rejected
// one, a count over the threshold that makes the call compact first.
func (m *agentMemory) applyOverflow(session string, lim window.Limits, st State, sio state.IO, n int, prev state.Agent) state.Agent {
	ov := m.overflow
	m.overflow = nil
	if ov.ratio > 0 && ov.ratio != prev.ProviderRatio {
		// Written here: the failed call's state delta was lost.
		if st != nil {
			sio.Set(st, state.KeyProviderRatio, prev.ProviderRatio, ov.ratio)
		}
		prev.ProviderRatio = ov.ratio
	}
	if ov.contents > n {
		m.log.Info("contextguard: the provider rejected the previous request as too long; this request does not hold it, so it is judged with the ratio learned",
			"agent", m.agent, "session", session, "real_tokens", ov.real, "limit", ov.limit, "provider_ratio", float64(prev.ProviderRatio)/calib.RatioScale)
		return prev
	}
	real := ov.real
	if real <= 0 {
		// Unstated: over the limit, and as large as the ratio learned says.
		limit := lim.Window
		if ov.limit > 0 && ov.limit < limit {
			limit = ov.limit
		}
		real = max(sat.Add(limit, 1), sat.Scale(ov.estimate, float64(ov.ratio)/calib.RatioScale))
	}
	if ov.limit > 0 && ov.limit < lim.Threshold {
		m.log.Warn("contextguard: the provider's limit is below the guard's threshold; set WithMaxTokens to the provider's limit",
			"agent", m.agent, "session", session, "limit", ov.limit, "window", lim.Window, "threshold", lim.Threshold)
	}
	prev.RealTokens = max(real, lim.Threshold+1)
	switch {
	case ov.estimate > 0:
		prev.LastEstimate = ov.estimate
	case prev.LastEstimate <= 0:
		prev.LastEstimate = prev.RealTokens
	}
	prev.Floor = 0
	m.log.Info("contextguard: the provider rejected the previous request as too long; compacting first",
		"agent", m.agent, "session", session, "real_tokens", ov.real, "limit", ov.limit, "estimated_tokens", ov.estimate,
		"provider_ratio", float64(prev.ProviderRatio)/calib.RatioScale)
	return prev
}

// keptMemory is an evicted session's pending overflows, whose only copy is
// in memory: losing them, every later turn would overflow again.
type keptMemory struct {
	key       string
	overflows []keptOverflow
}

type keptOverflow struct {
	agent string
	ov    *pendingOverflow
}

// keepLocked keeps an evicted e's pending overflows for the session's next
// call, for at most as many sessions as the table holds. The caller holds
// the table's mutex and e is idle.
func (s *sessionTable) keepLocked(e *sessionEntry) {
	var kept []keptOverflow
	for _, m := range e.agents {
		if m.overflow != nil {
			kept = append(kept, keptOverflow{agent: m.agent, ov: m.overflow})
		}
	}
	if len(kept) == 0 {
		return
	}
	if el, ok := s.kept[e.key]; ok {
		s.keptOrder.Remove(el)
	}
	s.kept[e.key] = s.keptOrder.PushFront(&keptMemory{key: e.key, overflows: kept})
	for s.keptOrder.Len() > max(s.max.sessions, 1) {
		old := s.keptOrder.Remove(s.keptOrder.Back()).(*keptMemory)
		delete(s.kept, old.key)
	}
}

// restoreLocked gives a new entry e what keepLocked kept. The caller holds
// the table's mutex; e is not yet shared.
func (s *sessionTable) restoreLocked(e *sessionEntry) {
	el, ok := s.kept[e.key]
	if !ok {
		return
	}
	delete(s.kept, e.key)
	k := s.keptOrder.Remove(el).(*keptMemory)
	for _, o := range k.overflows {
		e.memory(o.agent).overflow = o.ov
	}
}
