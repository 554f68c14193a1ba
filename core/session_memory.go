package core

import (
	"log/slog"

	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/calib"
	"github.com/adk-contextguard/contextguard/core/internal/contentid"
	"github.com/adk-contextguard/contextguard/core/internal/sat"
	"github.com/adk-contextguard/contextguard/core/internal/window"
)

// The session memory: what the guard remembers of each agent of a session in
// this process beside the session state, because state written in
// BeforeModelCallback rides on the model-response event, which ADK drops
// when the model call fails: the state of the latest compaction, so a
// summary already paid for is reused; a provider overflow the next call
// acts on (kept across eviction, keepLocked); with a recovery model, the
// request last let through and the contents ADK built for it.

// agentMemory is what the guard keeps in memory for one agent of one
// session beside the session state. Guarded by the session entry's mutex.
type agentMemory struct {
	agent string
	log   *slog.Logger // the guard's
	// compactionsKey is the state key of the agent's compaction counter,
	// and requestKey of a requested compaction (compaction_request.go).
	compactionsKey string
	requestKey     string
	// compacted is the state the latest compaction wrote, kept until the
	// session state shows it; compactedBetweenTurns says it was made after
	// a run ended (between_turns.go), not lost with a failed model call.
	compacted             *guardState
	compactedBetweenTurns bool
	// turnsFloor is the size a compaction between turns came out at when
	// it was not smaller (compaction.discard), while the compaction counter
	// is still turnsFloorAt: it is not tried again until the conversation
	// outgrows it.
	turnsFloor, turnsFloorAt int
	// overflow is a provider overflow the next call acts on.
	overflow *pendingOverflow
	// sentReq is the request last let through (the adapter's, compared by
	// identity only: Request.Origin) and sentRaw the contents ADK built
	// for it, before the guard rewrote them (recovery model only).
	sentReq any
	sentRaw []*genai.Content
	// sentBytes is what sentRaw retains, about (retainedBytesPerToken).
	sentBytes int
	// sentLen is how many contents ADK built for the request last let
	// through: an overflow of it records it (pendingOverflow.contents).
	sentLen int
	// trimmed records that the session's requests are trimmed to the
	// current request (trimToCurrentRequest: the system instruction and
	// tools leave no room for a summary). It is logged once, and no
	// compaction is made between turns for the session (between_turns.go).
	trimmed bool
	// prefix is the chain of the contents last built for the agent
	// (prefix_mark.go).
	prefix prefixMemo
	// recall is the agent's recall index (recall.go), nil until the agent's
	// first recall in this process.
	recall *recallIndex
	// model is the model of the agent's request last let through: the
	// recall tool counts its answers with that model's estimator.
	model string
	// lastEst is the raw estimate of the request last let through, growth
	// the latest growths per step in raw tokens (growthAt counts them),
	// candidate what the last call keeps for a summary prepared while its
	// response's tools run (prepared_growth.go), and unprepared why the
	// next call would compact inline ("": not known, InlineNotPrepared).
	lastEst    int
	growth     [growthSteps]int
	growthAt   int
	candidate  prepareCandidate
	unprepared InlineReason
	// message is what the user's message of the agent's turn cost at the
	// provider's count (between_turns_message.go).
	message messageMeasure
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
// response's AfterModel, when the next request is predicted to reach the
// trigger: the values a background summary of this request starts from.
type prepareCandidate struct {
	ok     bool
	req    Request // contents, model and configuration; no Origin or Coverage
	sent   []*genai.Content
	prev   guardState
	inj    injection
	lim    window.Limits
	cal    calib.Calibration
	before int
	// growth is the next step's predicted growth (with its margin).
	growth int
}

// pendingOverflow is a provider overflow recorded for the next call.
type pendingOverflow struct {
	real     int // the provider's count of the rejected request, 0 if unknown
	limit    int // the provider's limit, 0 if unknown
	estimate int // the guard's raw estimate of the rejected request
	// ratio is the provider ratio the session learns from the overflow
	// (calib.LearnFromOverflow), per mille; 0 if nothing was learned.
	ratio int
	// contents is how many contents ADK built for the rejected request, 0
	// if unknown. A next request with fewer does not hold the rejected one
	// (a new turn of an agent with IncludeContents "none"): the rejected
	// request's count says nothing of its size, only the ratio learned
	// applies.
	contents int
}

// memory returns the record of agent in the session, creating it.
func (e *sessionEntry) memory(agent string) *agentMemory {
	for _, m := range e.agents {
		if m.agent == agent {
			return m
		}
	}
	m := &agentMemory{agent: agent, log: e.log, compactionsKey: keyCompactions + agent, requestKey: keyCompactRequest + agent}
	e.agents = append(e.agents, m)
	return m
}

// quietLog discards the warnings of state reads the guard already logged.
var quietLog = slog.New(slog.DiscardHandler)

// rememberCompaction records the state a compaction of this call wrote, so
// that it survives a failed model call. before is the compaction counter the
// call started from.
func (m *agentMemory) rememberCompaction(st StateReader, before int) {
	v, err := st.Get(m.compactionsKey)
	if err != nil {
		return
	}
	if n, ok := decodeInt(v); !ok || n <= before {
		return
	}
	s := stateIO{agent: m.agent, log: quietLog}.loadAll(st)
	m.compacted, m.compactedBetweenTurns = &s, false
}

// recall applies, at the start of a call, what the agent's memory knows and
// the session state does not (reapplyCompaction, applyOverflow), and
// returns the state the call starts from.
func (g *Guard) recall(call Call, cfg *Agent, m *agentMemory, st State, sio stateIO, req *Request, prev guardState) guardState {
	m.sentLen = len(req.Contents)
	if cfg.recoveryLLM != nil {
		m.sentReq, m.sentRaw = req.Origin, req.Contents
		m.sentBytes = sat.Scale(prev.lastEstimate, retainedBytesPerToken)
	}
	if m.compacted != nil {
		prev = m.reapplyCompaction(call.SessionID(), st, sio, req, prev)
	}
	if m.overflow != nil {
		prev = m.applyOverflow(call.SessionID(), g.requestLimits(cfg, req), st, sio, len(req.Contents), prev)
	}
	return prev
}

// compactedAhead reports whether the compaction the record holds
// (m.compacted) is one the session state prev does not: a compaction prev
// has not counted, or, made between turns, a pruning frontier past prev's
// (a pruning pass reported as a compaction, prunedAtTrigger, counts none).
func (m *agentMemory) compactedAhead(prev guardState) bool {
	c := m.compacted
	if c == nil {
		return false
	}
	return c.compactions > prev.compactions ||
		(m.compactedBetweenTurns && c.compactions == prev.compactions && c.pruneFrontier > prev.pruneFrontier)
}

// reapplyCompaction applies, and persists again, the compaction m holds and
// the session state does not (lost with a failed model call, or made
// between turns), when req still holds what it covers; it forgets it once
// the state has it, or something newer.
func (m *agentMemory) reapplyCompaction(session string, st State, sio stateIO, req *Request, prev guardState) guardState {
	c := m.compacted
	if !m.compactedAhead(prev) {
		m.compacted = nil
		return prev
	}
	if c.compactions > prev.compactions {
		// A summary applies only where its cut is found; a pruning
		// frontier applies to any request, whose tool steps it numbers.
		if w, _, _, _ := locateCut(req.Contents, *c, contentid.Fingerprint, req.Coverage); w == 0 {
			m.compacted = nil
			return prev
		}
	}
	msg := "contextguard: the state of the last compaction was lost with a failed model call; reusing its summary"
	if m.compactedBetweenTurns {
		msg = "contextguard: applying the compaction made between turns, which the session state does not hold"
	}
	m.log.Info(msg, "agent", m.agent, "session", session, "compactions", c.compactions, "watermark", c.watermark)
	if m.compactedBetweenTurns {
		// A compaction requested since the run ended is still to be
		// answered (one pending then stops it, between_turns.go).
		c.request = prev.request
	}
	if st != nil {
		sio.save(st, prev, *c)
	}
	return *c
}

// applyOverflow turns the provider's rejection of the agent's previous
// request as too long (m.overflow) into the state a call of n contents
// and limits lim starts from: the ratio it taught, kept in state, and, when
// the request still holds the rejected one, a count over the threshold
// that makes the call compact first.
func (m *agentMemory) applyOverflow(session string, lim window.Limits, st State, sio stateIO, n int, prev guardState) guardState {
	ov := m.overflow
	m.overflow = nil
	if ov.ratio > 0 && ov.ratio != prev.providerRatio {
		// What the overflow taught survives the compaction it causes:
		// written here, since the failed call's state delta was lost.
		if st != nil {
			sio.set(st, keyProviderRatio, prev.providerRatio, ov.ratio)
		}
		prev.providerRatio = ov.ratio
	}
	if ov.contents > n {
		m.log.Info("contextguard: the provider rejected the previous request as too long; this request does not hold it, so it is judged with the ratio learned",
			"agent", m.agent, "session", session, "real_tokens", ov.real, "limit", ov.limit, "provider_ratio", float64(prev.providerRatio)/calib.RatioScale)
		return prev
	}
	real := ov.real
	if real <= 0 {
		// The provider did not say: the request was over its limit, and
		// at least as large as the ratio learned from it says.
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
	prev.realTokens = max(real, lim.Threshold+1)
	switch {
	case ov.estimate > 0:
		prev.lastEstimate = ov.estimate
	case prev.lastEstimate <= 0:
		prev.lastEstimate = prev.realTokens
	}
	prev.floor = 0
	m.log.Info("contextguard: the provider rejected the previous request as too long; compacting first",
		"agent", m.agent, "session", session, "real_tokens", ov.real, "limit", ov.limit, "estimated_tokens", ov.estimate,
		"provider_ratio", float64(prev.providerRatio)/calib.RatioScale)
	return prev
}

// keptMemory is what an evicted session's agents had learned that the
// session state cannot show yet: the provider overflows their next calls
// act on, whose only copy is in memory (ARCHITECTURE.md, Recovery); losing
// them, every later turn of the session would overflow again.
type keptMemory struct {
	key       string
	overflows []keptOverflow
}

// keptOverflow is one agent's pending overflow.
type keptOverflow struct {
	agent string
	ov    *pendingOverflow
}

// keepLocked keeps, when the table evicts e, its agents' pending
// overflows for the session's next call: those of at most as many of the
// most recently evicted sessions as the table holds, a few words each. The
// caller holds the table's mutex and e is idle.
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

// restoreLocked gives a new entry e what its session's evicted entry kept
// (keepLocked). The caller holds the table's mutex; e is not yet shared.
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
