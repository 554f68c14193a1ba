package core

import (
	"slices"

	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/convo"
	"github.com/adk-contextguard/contextguard/core/internal/pairs"
)

// The sliding-window strategy: the newest turns kept verbatim, the rest
// summarized (ARCHITECTURE.md, Strategies).

// slidingTailShare is the share of the room under the trigger that the
// turns kept verbatim may take: half leaves as much again for the
// conversation to grow, so a compaction is not paid for on every step.
const slidingTailShare = 0.5

// keepTurns is how many of the newest turns a sliding-window compaction
// keeps verbatim at most, half of maxTurns rounded up: each summarizer call
// is amortized over several turns while the model always sees at least
// half its turn budget verbatim.
func keepTurns(maxTurns int) int { return max((maxTurns+1)/2, 1) }

// turnStarts are the indexes in raw[from:to] of the messages the user wrote.
func turnStarts(raw []*genai.Content, from, to int) []int {
	var starts []int
	for i := from; i < to; i++ {
		if convo.IsUserMessage(raw[i]) {
			starts = append(starts, i)
		}
	}
	return starts
}

// A turn-triggered compaction waits until what it would summarize weighs at
// least about half the buffer, bounded to [slidingMinSpanFloor,
// slidingMinSpanCap], plus the first summary message's own header:
// summarizing less could make the request grow. The cap keeps the turn
// budget in charge in large windows.
const (
	slidingMinSpanFloor = 2 * minSummaryTokens
	slidingMinSpanCap   = 2_048
)

// slidingWindow is the sliding-window strategy (WithSlidingWindow): the
// newest turns kept verbatim, fewer while the request does not fit; it also
// compacts when more than maxTurns turns were added since the last
// compaction.
type slidingWindow struct{ maxTurns int }

func (slidingWindow) name() Strategy { return StrategySlidingWindow }

func (s slidingWindow) due(v callView, cs []*genai.Content) (string, []any) {
	turns, due := s.turnsDue(v, cs)
	if !due {
		return "", nil
	}
	return ReasonTurns, []any{"turns", turns}
}

// turnsDue counts the turns after the injected summary's cut and reports
// whether a turn-triggered compaction is due: more than maxTurns turns, and
// enough to summarize before the newest keepTurns (slidingMinSpanFloor).
func (s slidingWindow) turnsDue(v callView, cs []*genai.Content) (turns int, due bool) {
	from := 0
	if v.inj.injected {
		from = min(v.inj.cut, len(v.Raw))
	}
	cov := max(convo.CoverableLen(v.Raw), from)
	starts := turnStarts(v.Raw, from, cov)
	turns = len(starts) + v.betweenTurns.turnsComing()
	if turns <= s.maxTurns {
		return turns, false
	}
	if f := v.floor; f > 0 && v.before <= f {
		// The last compaction did not shrink the request (or could not get
		// it under the threshold): wait until the request outgrows it.
		return turns, false
	}
	split := cov
	if kept := v.betweenTurns.turnsKept(keepTurns(s.maxTurns)); kept > 0 {
		split = pairs.SafeStart(v.Raw, starts[len(starts)-kept])
	}
	if split <= from {
		return turns, false
	}
	// Weigh the span as it is sent (pruned, when pruning is on): cs holds
	// v.raw[from:] as its last contents.
	span := v.Raw[from:split]
	if off := len(cs) - (len(v.Raw) - from); off >= 0 {
		span = cs[off : off+split-from]
	}
	need := min(max(v.lim.Buffer/2, slidingMinSpanFloor), slidingMinSpanCap)
	if !v.inj.injected {
		// The first summary message also adds its header and continuation.
		atts := convo.RequestAttachments(v.coveredRequest(split))
		need += v.Cal.Scale(v.Est.Base.Content(summaryContent("", v.boundedUserRequest(), false, atts...)))
	}
	return turns, v.Cal.Scale(v.Est.Sum(span)) >= need
}

// suffixes are the starts of the newest keepTurns turns, then of fewer,
// down to the newest turn, whose kept contents fit slidingTailShare of the
// room (the newest turn alone may take all of it for ReasonTurns).
func (s slidingWindow) suffixes(c *compaction, reason string) []int {
	starts := turnStarts(c.Raw, c.first, c.cov)
	room := c.lim.Threshold - c.bare - c.budget
	share := int(float64(room) * slidingTailShare)

	var splits []int
	tail, counted := 0, len(c.Raw) // raw tokens of c.raw[counted:]
	for k := 1; k <= min(c.betweenTurns.turnsKept(keepTurns(s.maxTurns)), len(starts)); k++ {
		split := pairs.SafeStart(c.Raw, starts[len(starts)-k])
		if split <= c.first {
			break // nothing left to summarize, with this many turns or more
		}
		if len(splits) > 0 && split >= splits[len(splits)-1] {
			continue // pair safety made it the same split as fewer turns
		}
		for counted > split {
			counted--
			tail += c.Est.Content(c.Raw[counted])
		}
		n := c.Cal.Scale(tail)
		if n > share && (k > 1 || reason != ReasonTurns || n > room) {
			break // more turns only weigh more
		}
		splits = append(splits, split)
	}
	slices.Reverse(splits)
	return splits
}
