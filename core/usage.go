package core

import (
	"time"
)

// Usage: how full an agent's context is in a session, as the guard left it.

// Usage is how full an agent's context is in one session, as the guard left
// it after the agent's last guarded model call: what agent UIs show as
// "context: 63%". Counts are 0 until the guard has judged a request of the
// agent in the session.
type Usage struct {
	// Agent is the agent the numbers are for.
	Agent string
	// Tokens is the guard's calibrated count of the last request it let
	// through, after any compaction or pruning: the measure every decision
	// of the guard is made in (ARCHITECTURE.md, Counting).
	Tokens int
	// ProviderTokens is the prompt-token count the provider last reported
	// and the guard believed; 0 when there is none since the last
	// compaction.
	ProviderTokens int
	// Threshold is the trigger the last request was judged against, and
	// Window the context window.
	Threshold int
	Window    int
	// Utilization is the larger of Tokens and ProviderTokens as a fraction
	// of Window (0.63 for 63%); 0 when Window is not known yet.
	Utilization float64
	// Compactions is how many compactions the session's conversation went
	// through.
	Compactions int
	// LastCompaction is when the last compaction was made (the zero time if
	// none), and LastCompactionReason why: a CompactionEvent Reason.
	LastCompaction       time.Time
	LastCompactionReason string
	// CompactionRequested reports a RequestCompaction that the agent's next
	// model call will answer.
	CompactionRequested bool
	// Disabled reports that the guard is switched off for the session
	// (StateKeyDisabled).
	Disabled bool
	// Preparing reports that a summary for the agent's next compaction is
	// being written in the background while tools run
	// (WithPreparedSummaries). It is known to the process that prepares
	// it: Usage reads it from the guard, UsageFromState, which sees only
	// the state, reports false.
	Preparing bool
}

// usageFromState is UsageFromState's work: the agent's Usage as the state
// st holds it.
func (g *Guard) usageFromState(st StateReader, agentName string) (Usage, error) {
	if err := g.checkAgent(agentName); err != nil {
		return Usage{}, err
	}
	sio := stateIO{agent: agentName, log: g.log, missing: g.host.MissingKey}
	s := sio.loadAll(st)
	u := Usage{
		Agent:                agentName,
		Tokens:               s.tokens,
		ProviderTokens:       s.realTokens,
		Threshold:            s.threshold,
		Window:               s.window,
		Compactions:          s.compactions,
		LastCompactionReason: s.compactReason,
		CompactionRequested:  s.request.pending,
		Disabled:             sessionDisabled(st, g.log),
	}
	if u.Window > 0 {
		u.Utilization = float64(max(u.Tokens, u.ProviderTokens)) / float64(u.Window)
	}
	if s.compactedAt != "" {
		at, err := time.Parse(time.RFC3339Nano, s.compactedAt)
		if err != nil {
			g.log.Warn("contextguard: session state is not a valid time; ignoring it",
				"agent", agentName, "key", keyCompactedAt+agentName, "error", err)
		}
		u.LastCompaction = at
	}
	return u, nil
}

// recordUsage sets, in the state a call persists, the calibrated count of
// the request the call lets through: the provider's last count no longer
// applies once a compaction or trim reset it (realTokens 0).
func recordUsage(t *turn, next *guardState) {
	if next.realTokens > 0 {
		next.tokens = t.cal.count(next.lastEstimate)
	} else {
		next.tokens = t.cal.scale(next.lastEstimate)
	}
}

// stampCompaction records when and why an applied compaction was made, for
// Usage. The time comes from the call's context (Host.Now), so a time
// provider ADK honours is honoured here.
func stampCompaction(t *turn, next *guardState, reason string) {
	next.compactedAt = t.cfg.host.Now(t.ctx).UTC().Format(time.RFC3339Nano)
	next.compactReason = reason
}
