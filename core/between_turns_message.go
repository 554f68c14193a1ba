package core

import (
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/convo"
	"github.com/adk-contextguard/contextguard/core/internal/sat"
	"github.com/adk-contextguard/contextguard/core/internal/state"
)

// The user's message at the provider's count (ARCHITECTURE.md, Compaction
// between turns): the estimator can rate a message far below what the
// provider charges (an image billed by its encoded size), so the provider's
// counts of a turn's first request and of the one before say what it cost.

// messageMeasure follows the first request of an agent's turn until the
// provider's count of it comes back, and keeps what the last two turns
// measured cost.
type messageMeasure struct {
	// from is the provider's count of the request before the turn's first
	// (the last one the agent sent), 0 when nothing is pending; est is the
	// raw estimate of the turn's first request as sent, and compactions
	// the compaction counter then: a later count is of that request while
	// the state's last estimate and counter still match it.
	from, est, compactions int
	// last and before are what the user's message of the last two turns
	// measured cost: how much more the provider counted the turn's first
	// request than the request before it, less the reply between them.
	last, before int
}

// observe settles a pending measure from the provider's count in prev, and
// starts measuring a call that starts a turn when asBuilt: its request goes
// out uncompacted and extends the last one the provider counted.
func (m *messageMeasure) observe(prev state.Agent, cm measure, asBuilt bool, next state.Agent) {
	m.settle(prev)
	if !startsTurn(cm.Raw) {
		return
	}
	m.from = 0
	if asBuilt && prev.RealTokens > 0 {
		m.from, m.est, m.compactions = sat.Add(prev.RealTokens, lastReply(cm)), next.LastEstimate, next.Compactions
	}
}

// lastReply is the calibrated estimate of the model's reply before the
// user's message, taken out so the measure is of the message alone.
func lastReply(m measure) int {
	n := len(m.Raw)
	if n < 2 || m.Raw[n-2] == nil || m.Raw[n-2].Role != genai.RoleModel {
		return 0
	}
	return m.Cal.Scale(m.Est.Content(m.Raw[n-2]))
}

// settle records the turn's cost when prev, a later call's state, holds
// the provider's count of the turn's first request. A count below the one
// before (a request pruned since) measures no cost.
func (m *messageMeasure) settle(prev state.Agent) {
	if m.from == 0 || prev.RealTokens == 0 || prev.LastEstimate != m.est || prev.Compactions != m.compactions {
		return
	}
	m.before, m.last, m.from = m.last, max(prev.RealTokens-m.from, 0), 0
}

// cost is what the next turn's message is judged to cost at least: what
// both of the last two turns measured did, so one large message does not
// make every later turn compact early.
func (m *messageMeasure) cost() int {
	return min(m.last, m.before)
}

// startsTurn reports whether a request of contents raw is the first of a
// turn: it ends with the user's message.
func startsTurn(raw []*genai.Content) bool {
	return len(raw) > 0 && convo.IsUserMessage(raw[len(raw)-1])
}
