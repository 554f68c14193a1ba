package core

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/adk-contextguard/contextguard/core/internal/sat"
	"github.com/adk-contextguard/contextguard/core/internal/textcut"
)

// renderedContent is one content's transcript lines, rendered once per
// compaction.
type renderedContent struct {
	text   string
	tokens int
	ok     bool
}

// rolledPiece is a summarized piece of a span too large for one input.
type rolledPiece struct {
	end     int
	summary string
}

// rollUp prepares the input of the last summarizer call: the summary it
// folds in, the transcript and where in c.raw it starts. A span too large
// for one input is cut into pieces, oldest first, each summarized with the
// summary so far folded in, so no content is left out; pieces from this
// compaction are reused. A failure sets the fallback.
func (c *compaction) rollUp(sreq SummaryRequest, end int) (prev, transcript string, from int) {
	var reused int
	prev, from, reused = c.rolledBefore(end)
	c.rolled = c.rolled[:reused]
	sreq.SummaryTokens = c.Cal.Unscale(c.input.answer)
	prev, from = c.digestOldest(prev, from, end)
	for {
		pieceEnd, text, shown := c.nextPiece(prev, from, end)
		if pieceEnd >= end {
			return shown, text, from
		}
		if c.ev.SummarizerCalls+1 >= c.cfg.maxSummarizerCalls {
			// No call would be left for the last piece.
			c.fallBack("contextguard: summarizer calls spent; using the fallback summary for the rest of the span",
				"the span needs more than "+strconv.Itoa(c.cfg.maxSummarizerCalls)+" summarizer calls (WithMaxSummarizerCalls)",
				"rolling_pieces", len(c.rolled), "remaining_contents", end-from)
			return "", "", from
		}
		sreq.PreviousSummary, sreq.Transcript, sreq.Contents = shown, text, c.Raw[from:pieceEnd]
		s, failure, _ := c.callSummarizer(sreq)
		c.ev.RollingCalls++
		if failure != "" {
			c.fallBack("contextguard: summarizer failed; using the fallback summary", failure,
				"attempt", c.ev.SummarizerCalls, "rolling_piece", len(c.rolled)+1)
			return "", "", from
		}
		c.log.Debug("contextguard: the span does not fit one summarizer input; summarized a piece of it",
			"rolling_piece", len(c.rolled)+1, "contents_summarized", pieceEnd-from, "remaining_contents", end-pieceEnd)
		c.rolled = append(c.rolled, rolledPiece{end: pieceEnd, summary: s})
		prev, from = s, pieceEnd
	}
}

// rolledBefore is the summary so far of the pieces ending before end, where
// the rest starts, and how many they are.
func (c *compaction) rolledBefore(end int) (prev string, from, n int) {
	prev, from = c.prevSummary, c.first
	for _, p := range c.rolled {
		if p.end >= end {
			break
		}
		prev, from = p.summary, p.end
		n++
	}
	return prev, from, n
}

// digestOldest bounds the rolling summary to the summarizer calls left,
// less the last call's retries: what those inputs cannot hold (two fifths
// of a budget each) is listed by the fallback summary, with prev, as the
// summary so far. It returns it and where the rest starts.
func (c *compaction) digestOldest(prev string, from, end int) (string, int) {
	calls := c.cfg.maxSummarizerCalls - c.ev.SummarizerCalls - max(c.callsLeft-1, 0)
	capacity := sat.Scale(c.input.budget*2/5, float64(max(calls, 1))) // calls may be near math.MaxInt
	cut, held := end, 0
	for cut > from {
		n := c.render(cut - 1).tokens
		if held+n > capacity {
			break
		}
		held += n
		cut--
	}
	if cut == from {
		return prev, from
	}
	head := "(The conversation's first " + strconv.Itoa(cut) + " messages, listed mechanically: summarizing them too would take more than " +
		strconv.Itoa(c.cfg.maxSummarizerCalls) + " summarizer calls.)\n"
	digest := head + fallbackSummary(c.Est, c.Cal, prev, c.Raw[from:cut], nil, c.input.budget/2-c.Cal.Scale(c.Est.Text(head)))
	c.log.Warn("contextguard: the span needs more summarizer calls than allowed; its oldest messages are listed mechanically",
		"max_summarizer_calls", c.cfg.maxSummarizerCalls, "listed_contents", cut-from, "summarized_contents", end-cut)
	c.rolled = append(c.rolled, rolledPiece{end: cut, summary: digest})
	return digest, cut
}

// fallbackAfterPieces is the fallback summary of c.raw[c.first:end], which
// keeps the last rolled piece (at most half the budget) so nothing the
// summarizer wrote is thrown away.
func (c *compaction) fallbackAfterPieces(end, budget int) string {
	prev, from, _ := c.rolledBefore(end)
	if from == c.first {
		return fallbackSummary(c.Est, c.Cal, c.prevSummary, c.Raw[c.first:end], c.todos, budget)
	}
	if c.Text(prev) > budget/2 {
		prev = excerptToFit(c.measure, prev, budget/2)
	}
	head := "(Summary of the conversation's first " + strconv.Itoa(from) + " messages:)\n" + prev + "\n"
	return head + fallbackSummary(c.Est, c.Cal, "", c.Raw[from:end], c.todos, budget-c.Text(head))
}

func (c *compaction) render(i int) renderedContent {
	r := &c.rendered[i-c.first]
	if !r.ok {
		r.text = renderContent(c.Raw[i], c.input.lim)
		r.tokens = c.Text(r.text)
		r.ok = true
	}
	return *r
}

// nextPiece is the next input from c.raw[from]: the contents that fit
// beside prev as shown (boundPrev). A content larger than the room is its
// piece alone, cut to a marked head and tail excerpt.
func (c *compaction) nextPiece(prev string, from, end int) (pieceEnd int, transcript, shown string) {
	shown = c.input.boundPrev(c.measure, prev)
	room := c.input.budget - c.Text(shown)
	var b strings.Builder
	i := from
	for ; i < end; i++ {
		r := c.render(i)
		if r.tokens > room {
			break
		}
		b.WriteString(r.text)
		room -= r.tokens
	}
	if i > from || from >= end {
		return i, b.String(), shown
	}
	r := c.render(from)
	note := fmt.Sprintf("[message %d of this conversation is larger than the summarizer's window: only its head and tail are shown]\n", from+1)
	return from + 1, note + excerptToFit(c.measure, r.text, room-c.Text(note)), shown
}

// excerptToFit cuts s to a head and tail of about n calibrated tokens, at
// least minExcerptBytes so something shows.
func excerptToFit(m measure, s string, n int) string {
	const minExcerptBytes = 200
	for bytes := max(sat.Scale(n, textcut.BytesPerTokenGuess), minExcerptBytes); ; bytes = sat.MulDiv(bytes, textcut.RetryPercent, 100) {
		cut := textcut.Middle(s, max(bytes, minExcerptBytes))
		if bytes <= minExcerptBytes || m.Text(cut) <= n {
			return cut
		}
	}
}
