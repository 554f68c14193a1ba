package core

import (
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/pairs"
	"github.com/adk-contextguard/contextguard/core/internal/sat"
)

// The tail-retention strategy: the newest contents, up to a share of the
// window, kept verbatim; the rest summarized (ARCHITECTURE.md, Strategies).

// StrategyTailRetention keeps the newest contents verbatim, up to a share of
// the window by tokens, and summarizes the rest (WithTailRetention).
const StrategyTailRetention Strategy = "tail_retention"

// tailRetention compacts at the token trigger only and offers one suffix,
// the longest pair-safe one within fraction of the window and the room.
type tailRetention struct{ fraction float64 }

func (tailRetention) name() Strategy { return StrategyTailRetention }

func (tailRetention) due(callView, []*genai.Content) (string, []any) { return "", nil }

func (s tailRetention) suffixes(c *compaction, _ string) []int {
	limit := min(sat.Scale(c.lim.Window, s.fraction), c.lim.Threshold-c.bare-c.budget)
	// The longest suffix within limit that leaves something to summarize
	// after the previous watermark.
	from, tail := len(c.Raw), 0
	for from > c.first+1 {
		n := sat.Add(tail, c.Est.Content(c.Raw[from-1]))
		if c.Cal.Scale(n) > limit {
			break
		}
		from, tail = from-1, n
	}
	// Pair safety can only move a start back, past the limit: take the
	// first pair-safe start at or after it, which keeps less.
	for ; from < c.cov; from++ {
		if pairs.SafeStart(c.Raw, from) == from {
			return []int{from}
		}
	}
	return nil
}
