package core

import (
	"time"

	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/calib"
	"github.com/adk-contextguard/contextguard/core/internal/sat"
	"github.com/adk-contextguard/contextguard/core/internal/state"
)

// Usage is how full an agent's context is in one session, as the guard left
// it after the agent's last guarded model call: what agent UIs show as
// "context: 63%". Counts are 0 until the guard has judged a request of the
// agent in the session.
type Usage struct {
	Agent string // the agent the numbers are for
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
	// through that stored a summary; a compaction by tool-result pruning
	// alone (StrategyToolResultPruning) is reported to the OnCompaction
	// hook, the log and the compactions metric, not counted here.
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
	// PrefixKeptTokens is how much of the request before the last one
	// (calibrated, as Tokens) the last request kept as its leading part:
	// what a provider's prompt cache can read again at its cached price.
	// InvalidatedTokens is the rest of that request, which the provider
	// reads again at the full price: 0 when the last request extended the
	// one before, the history after the system instruction and tools after
	// a compaction, the part after the first newly pruned result after a
	// pruning pass (WithPruningMinFree).
	PrefixKeptTokens  int
	InvalidatedTokens int
	// CachedTokens is the provider's count of the prompt tokens of the last
	// request it read from its prompt cache (genai's
	// UsageMetadata.CachedContentTokenCount), 0 when it reports none.
	CachedTokens int
	// Preparing reports that a summary for the agent's next compaction is
	// being written in the background while tools run
	// (WithPreparedSummaries). It is known to the process that prepares
	// it: Usage reads it from the guard, UsageFromState, which sees only
	// the state, reports false.
	Preparing bool
}

// usageFromState is the Usage that st holds for sio's agent.
func usageFromState(sio state.IO, st StateReader) Usage {
	s := sio.LoadAll(st)
	u := Usage{
		Agent:                sio.Agent,
		Tokens:               s.Tokens,
		ProviderTokens:       s.RealTokens,
		Threshold:            s.Threshold,
		Window:               s.Window,
		Compactions:          s.Compactions,
		LastCompactionReason: s.CompactReason,
		CompactionRequested:  s.Request.Pending,
		Disabled:             sessionDisabled(st, sio.Log),
		PrefixKeptTokens:     s.PrefixKept,
		InvalidatedTokens:    s.Invalidated,
		CachedTokens:         s.CachedTokens,
	}
	if u.Window > 0 {
		u.Utilization = float64(max(u.Tokens, u.ProviderTokens)) / float64(u.Window)
	}
	if s.CompactedAt != "" {
		at, err := time.Parse(time.RFC3339Nano, s.CompactedAt)
		if err != nil {
			sio.Log.Warn("contextguard: session state is not a valid time; ignoring it",
				"agent", sio.Agent, "key", state.KeyCompactedAt+sio.Agent, "error", err)
		}
		u.LastCompaction = at
	}
	return u
}

// recordUsage stores the calibrated count of the request let through; the
// provider's count no longer applies once a compaction reset it.
func recordUsage(cal calib.Calibration, next *state.Agent) {
	if next.RealTokens > 0 {
		next.Tokens = cal.Count(next.LastEstimate)
	} else {
		next.Tokens = cal.Scale(next.LastEstimate)
	}
}

// prefixKept splits the previous request, of prev raw tokens, into what cs
// (raw estimate est) keeps of it as its prefix, which a prompt cache can
// read again, and the rest, calibrated. rewritten is the first content
// pruning rewrote, -1 for none. Nothing is re-counted: the matched prefix
// record proves cs extends it, and only cs[rewritten:] is estimated.
func prefixKept(m measure, pm *prefixMatch, prev int, cs []*genai.Content, est, rewritten int) (kept, invalidated int) {
	switch {
	case prev == 0:
		return 0, 0 // no previous request
	case pm.stored != "" && !pm.matched:
		// The history changed: only an unchanged instruction and tools
		// are known kept.
		if pm.rec.config == pm.config && pm.rec.contents > 0 {
			kept = min(m.Fixed, prev)
		}
	case rewritten < 0 || rewritten >= len(cs):
		kept = prev // an extension
	default:
		tail := 0
		for _, c := range cs[rewritten:] {
			tail = sat.Add(tail, m.Est.Content(c))
		}
		kept = min(max(est-tail, 0), prev)
	}
	return splitScaled(m.Cal, prev, kept)
}

func splitScaled(cal calib.Calibration, prev, kept int) (int, int) {
	all, k := cal.Scale(prev), cal.Scale(kept)
	return k, all - k
}

// compactionKept is prefixKept for a compaction, which keeps only the
// system instruction and tools.
func compactionKept(m measure, pm *prefixMatch, prev int) (kept, invalidated int) {
	if prev == 0 {
		return 0, 0
	}
	k := min(m.Fixed, prev)
	if pm.stored != "" && pm.rec.contents > 0 && pm.rec.config != pm.config {
		k = 0 // the instruction or tools changed since the previous request
	}
	return splitScaled(m.Cal, prev, k)
}

// stampCompaction records when and why a compaction was made, for Usage.
func stampCompaction(at time.Time, next *state.Agent, reason string) {
	next.CompactedAt = at.UTC().Format(time.RFC3339Nano)
	next.CompactReason = reason
}
