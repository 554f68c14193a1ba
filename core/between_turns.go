package core

import (
	"context"
	"slices"
	"time"

	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/calib"
	"github.com/adk-contextguard/contextguard/core/internal/contentid"
	"github.com/adk-contextguard/contextguard/core/internal/convo"
	"github.com/adk-contextguard/contextguard/core/internal/sat"
	"github.com/adk-contextguard/contextguard/core/internal/state"
)

// Compaction between turns (ARCHITECTURE.md, Compaction between turns): the
// model call's pipeline, run on the request the next turn will start with.

// betweenTurnsMargin is the share by which the next turn's first request
// may outgrow its estimate, since the next message is not known yet: a
// tenth, the estimator's p90 error (ARCHITECTURE.md, Counting).
const betweenTurnsMargin = 1.10

// standInMessage stands for the user's next message when the run had no
// user content to measure (a run resumed without one): a short message,
// weighed for the trigger and counted as a turn, never sent or stored.
const standInMessage = "Please continue with the next step."

// SessionAppender writes a state delta to a session from outside a model
// call, the way an application does with its session service: each
// plugin's WithSessionService wraps the session service the runner uses.
// For adapters.
type SessionAppender interface {
	AppendState(ctx context.Context, appName, userID, sessionID string, delta map[string]any) error
}

// RunEnd is what the engine needs of a run that has ended (ADK's after-run
// callback): the session's state, and its last two contents as the host
// puts them into a model request. For adapters.
type RunEnd struct {
	// State is the session's state after the run.
	State StateReader
	// Final is the session's last content and FinalAuthor the author of
	// its event; Before is the content before it. Nil when the session
	// has none.
	Final       *genai.Content
	FinalAuthor string
	Before      *genai.Content
}

// AfterRun compacts, once a run has ended, a session whose next turn would
// probably reach the trigger (ARCHITECTURE.md, Compaction between turns),
// persists the compaction with the session service (WithSessionService)
// and fires the OnCompaction hook. c is the run's context and session. For
// adapters.
func (g *Guard) AfterRun(c Call, end RunEnd) {
	if g == nil || IsNil(c) {
		return
	}
	ev, delta := g.compactBetweenTurns(c, end)
	if delta != nil && g.appender != nil {
		// With the session released: the session service is user code.
		if err := g.appender.AppendState(c, c.AppName(), c.UserID(), c.SessionID(), delta); err != nil {
			g.log.Warn("contextguard: persisting the compaction made between turns failed; the session's next call in this process applies it from memory, another process compacts again",
				"agent", ev.Agent, "session", c.SessionID(), "error", err)
		}
	}
	g.fireHook(c, ev)
}

// rememberCall keeps req, a request of cfg's guarded in mode, as the
// session's last guarded call, for the run's end; size is about what its
// contents retain, in tokens. It allocates nothing.
func (e *sessionEntry) rememberCall(cfg *Agent, req Request, mode callMode, size int) {
	if cfg.betweenTurns == BetweenTurnsOff || mode == modeApplyOnly {
		e.last = lastCall{}
		return
	}
	req.Origin = nil
	e.last = lastCall{cfg: cfg, req: req, bytes: sat.Scale(size, retainedBytesPerToken)}
}

// deltaState collects the writes of a state save as a state delta.
type deltaState map[string]any

func (d deltaState) Get(key string) (any, error) { return d[key], nil }

func (d deltaState) Set(key string, v any) error {
	d[key] = v
	return nil
}

// compactBetweenTurns is AfterRun's work while it owns the session: it
// returns the compaction made (nil for none) and the state delta to
// persist (nil for none).
func (g *Guard) compactBetweenTurns(c Call, end RunEnd) (*CompactionEvent, map[string]any) {
	sess, err := g.sessions.acquire(c, sessionKey(c))
	if err != nil {
		g.log.Debug("contextguard: not compacting between turns: the session is busy", "session", c.SessionID(), "error", err)
		return nil, nil
	}
	defer g.sessions.release(sess)
	in, req, ok := sess.betweenTurnsCall(c, end)
	if !ok {
		return nil, nil
	}
	t, cs := g.newTurn(in, req)
	s := g.decide(t, cs)
	if s.event == nil {
		return nil, nil
	}
	if err := c.Err(); err != nil {
		g.log.Info("contextguard: the run's context ended during the compaction between turns; nothing is kept, the next model call compacts as needed",
			"agent", in.cfg.name, "session", c.SessionID(), "error", err)
		return nil, nil
	}
	return s.event, sess.memory(in.cfg.name).keepBetweenTurns(in, s.event.Discarded, s.next, t.Cal, in.cfg.stateIO(g.log), end.State)
}

// keepBetweenTurns keeps the compaction made between turns in the agent's
// memory and returns the state delta that persists it. A discarded one is
// remembered so that the next runs' ends do not pay for it again.
func (m *agentMemory) keepBetweenTurns(in callInput, discarded bool, next state.Agent, cal calib.Calibration, sio state.IO, st StateReader) map[string]any {
	prev, delta := in.prev, deltaState{}
	if discarded {
		m.turnsFloor, m.turnsFloorAt = next.Floor, prev.Compactions
		sio.Set(delta, state.KeyIrreducibleFloor, prev.Floor, next.Floor)
		return delta
	}
	m.turnsFloor = 0
	// Usage then shows the compacted history's count.
	recordUsage(cal, &next)
	m.compacted, m.compactedBetweenTurns = &next, true
	sio.Save(delta, prev, next)
	sio.Set(delta, keyPrefix, in.storedPrefix, "")
	if next.RealTokens == 0 {
		// The provider's counts were of the request before: no response
		// follows a compaction between turns to replace its cached count,
		// so Usage would show it beside a count of 0.
		sio.Set(delta, state.KeyCachedTokens, sio.Num(st, state.KeyCachedTokens), 0)
	}
	return delta
}

// betweenTurnsCall is the call a compaction between turns makes from the
// session's last guarded call and the run's end, with e owned: its input
// and the next turn's history as its request; ok is false when there is
// nothing to compact now.
func (e *sessionEntry) betweenTurnsCall(c Call, end RunEnd) (in callInput, req Request, ok bool) {
	last := e.last
	e.last = lastCall{}
	cfg := last.cfg
	if cfg == nil || sessionDisabled(end.State, e.log) || c.Err() != nil {
		// With the run's context done, the summarizer would only give the
		// fallback summary.
		return in, req, false
	}
	raw, why := nextHistory(last.req.Contents, end, cfg.name)
	if why != "" {
		e.log.Debug("contextguard: not compacting between turns", "agent", cfg.name, "session", c.SessionID(), "reason", why)
		return in, req, false
	}
	sio := cfg.stateIO(e.log)
	mem := e.memory(cfg.name)
	prev := sio.Load(end.State)
	prev.Request = sio.RequestAt(end.State, mem.requestKey)
	if prev.Request.Pending || prev.CompactNext != 0 || mem.overflow != nil ||
		mem.compactedAhead(prev) {
		// A requested compaction, the output-limit stop, overflow recovery and
		// a compaction the state does not show yet run in the next model call.
		return in, req, false
	}
	if mem.trimmed {
		// Each model call sends only the current request
		// (trimToCurrentRequest), which a summary would only make larger.
		e.log.Debug("contextguard: not compacting between turns: the instruction and tools leave no room for a summary", "agent", cfg.name, "session", c.SessionID())
		return in, req, false
	}
	if mem.turnsFloorAt == prev.Compactions {
		prev.Floor = max(prev.Floor, mem.turnsFloor)
	}
	req = withContents(last.req, raw)
	if r, ok := req.Coverage.(interface{ Refresh() Coverage }); ok {
		// The host's log has grown by the final response since the call.
		req.Coverage = r.Refresh()
	}
	mem.message.settle(prev)
	in = callInput{call: c, ro: end.State, cfg: cfg, sess: e, prev: prev, memo: &mem.prefix,
		storedPrefix: sio.Str(end.State, keyPrefix), mode: modeCompact, betweenTurns: true}
	return in, req, true
}

// nextHistory is the history the next turn's first request will start
// with, the user's next message aside: the last request's coverable
// contents and the run's final response; why says why it cannot be told
// ("" when it can).
func nextHistory(raw []*genai.Content, end RunEnd, agent string) (next []*genai.Content, why string) {
	n := convo.CoverableLen(raw)
	switch {
	case n == 0:
		return nil, "the last request had no contents"
	case end.Final == nil || end.FinalAuthor != agent || end.Final.Role != genai.RoleModel:
		return nil, "the run did not end with the agent's response"
	case slices.ContainsFunc(end.Final.Parts, func(p *genai.Part) bool {
		return p != nil && (p.FunctionCall != nil || p.FunctionResponse != nil)
	}):
		return nil, "the run ended with a tool call or result"
	case end.Before == nil || contentid.Fingerprint(end.Before) != contentid.Fingerprint(raw[n-1]):
		return nil, "the session does not continue the last request with the final response"
	}
	next = make([]*genai.Content, n+1)
	copy(next, raw[:n])
	next[n] = end.Final
	return next, ""
}

// nextTurnCount is what decide compares with the trigger for a request of
// calibrated count n: between turns and above the floor, n plus a user
// message like the run's own (at least messageMeasure's cost) and
// betweenTurnsMargin; n otherwise.
func (t *turn) nextTurnCount(n int) int {
	if !t.betweenTurns || (t.prev.Floor > 0 && n <= t.prev.Floor) {
		return n
	}
	msg := t.ctx.UserContent()
	if !convo.IsUserMessage(msg) {
		msg = genai.NewContentFromText(standInMessage, genai.RoleUser)
	}
	return sat.Scale(sat.Add(n, max(t.Cal.Scale(t.Est.Content(msg)), t.sess.memory(t.cfg.name).message.cost())), betweenTurnsMargin)
}

// afterRun marks a call made once the agent's run ended, to compact
// between turns (compactBetweenTurns); false for a model call.
type afterRun bool

// turnsComing is how many turns the request starts before it is sent: the
// user's next message, between turns (slidingWindow.turnsDue).
func (b afterRun) turnsComing() int {
	if b {
		return 1
	}
	return 0
}

// turnsKept is how many of the request's own turns a compaction keeps so
// that the request it serves holds the newest keep turns.
func (b afterRun) turnsKept(keep int) int {
	return max(keep-b.turnsComing(), 0)
}

// ran is how the turn's compaction runs (CompactionEvent.Ran).
func (b afterRun) ran() CompactionRun {
	if b {
		return RanBetweenTurns
	}
	return RanInline
}

// preparedRan is how a compaction from a prepared summary runs.
func (b afterRun) preparedRan() CompactionRun {
	if b {
		return RanBetweenTurns
	}
	return RanPrepared
}

// waited is how long the model call waited for a compaction that took d.
func (b afterRun) waited(d time.Duration) time.Duration {
	if b {
		return 0
	}
	return d
}
