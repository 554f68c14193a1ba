package core

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/sat"
	"github.com/adk-contextguard/contextguard/core/internal/textcut"
	"github.com/adk-contextguard/contextguard/core/internal/window"
)

const (
	// minSummaryTokens is the smallest summary worth asking for: below it
	// the current request is sent alone (trimToCurrentRequest).
	minSummaryTokens = 256
	// oversizeTolerance is how far past its budget a summary may run.
	oversizeTolerance = 1.25
	// summaryFreshShare is the share of what a compaction frees beyond the
	// previous summary that the new one may add to it; the rest is what the
	// request shrinks by at least. Without it a turn-triggered compaction
	// asks 3,200 tokens at 32k for a span of 2,048.
	summaryFreshShare = 0.5
)

// spanBudget is the length asked of the summary of c.raw[c.first:end]:
// summaryBudget, bounded by what replacing the span frees, never below
// minSummaryTokens/2. build returns the request's contents with a summary;
// an empty one weighs the summary message's own text.
func (c *compaction) spanBudget(build func(summary string) []*genai.Content) int {
	freed := c.Cal.Scale(c.origEst - c.Weigh(build("")))
	prev := c.Text(c.prevSummary)
	b := prev + int(float64(max(freed-prev, 0))*summaryFreshShare)
	return min(c.budget, max(b, minSummaryTokens/2))
}

// summarizeSpan is the fit loop: it summarizes the previous summary plus
// c.raw[c.first:end] (in rolling pieces when it does not fit one input),
// builds the request and weighs it. A summary whose request fits is
// accepted whatever its length; otherwise a shorter one is asked for while
// that can help. Any failure takes the fallback for the rest of the
// compaction.
func (c *compaction) summarizeSpan(end int, shorter bool, build func(summary string) []*genai.Content) outcome {
	c.ev.ContentsSummarized = end - c.first
	budget := c.spanBudget(build)
	asked := min(budget, c.input.answer) // calibrated; the summarizer is told it unscaled
	sreq := c.summaryRequest(asked)
	kept := 0 // the newest contents staying verbatim after the summary
	if end < c.cov {
		kept = len(c.Raw) - end
	}
	c.summaryInput(&sreq, end, &asked, kept)

	for {
		s := ""
		if !c.ev.Fallback {
			s = c.requestSummary(sreq)
			if c.retryTranscript {
				c.retryTranscript = false
				c.summaryInput(&sreq, end, &asked, kept)
				continue
			}
		}
		if c.ev.Fallback {
			s = c.fallbackAfterPieces(end, budget)
		}
		cs := build(s)
		o := outcome{contents: cs, summary: s, newEst: c.Weigh(cs)}
		o.newCount = c.Cal.Scale(o.newEst)
		if o.newCount <= c.lim.Threshold || c.ev.Fallback {
			return o
		}
		next := c.shorterLength(s, o.newCount, asked, shorter)
		if c.ev.Fallback {
			continue
		}
		if next == 0 {
			return o
		}
		asked = next
		sreq.SummaryTokens = c.Cal.Unscale(asked)
		if sreq.Cached != nil {
			// The instruction states the length, and the call bounds it.
			c.summaryInput(&sreq, end, &asked, kept)
		}
	}
}

// shorterLength is the length to ask again for when summary s makes a
// request of count over the threshold: the longest that fits, at most
// asked/2 when s overran. 0 keeps the request (s kept to its length and not
// shorter, or nothing useful left); an overrun s then takes the fallback.
func (c *compaction) shorterLength(s string, count, asked int, shorter bool) int {
	have := c.Cal.Scale(c.Est.Text(s))
	target := have - (count - c.lim.Threshold)
	over := have > int(float64(asked)*oversizeTolerance)
	if over {
		target = min(target, asked/2)
	}
	canHelp := c.callsLeft > 0 && target >= minSummaryTokens/2
	switch {
	case over && canHelp:
		c.log.Warn("contextguard: summary too long for the request to fit; asking again for a shorter one",
			"attempt", c.ev.SummarizerCalls, "summary_tokens", have, "asked_tokens", asked, "tokens_after", count, "threshold", c.lim.Threshold)
	case over:
		c.fallBack("contextguard: summarizer failed; using the fallback summary",
			"summary of "+strconv.Itoa(have)+" tokens exceeds its budget of "+strconv.Itoa(asked)+
				" and the request would not fit under the threshold", "attempt", c.ev.SummarizerCalls)
		return 0
	case !shorter || !canHelp:
		return 0
	}
	return target
}

// summaryRequest is the request of a summary of asked calibrated tokens,
// before its input is filled in.
func (c *compaction) summaryRequest(asked int) SummaryRequest {
	return SummaryRequest{
		Agent:         c.ev.Agent,
		UserRequest:   c.input.extras.userRequest,
		Todos:         c.input.extras.todos,
		SummaryTokens: c.Cal.Unscale(asked),
		Instructions:  c.input.extras.instructions,
	}
}

// summaryInput fills in sreq's input for c.raw[c.first:end]: the cached
// form when it can be used (which may shorten *asked), else the transcript,
// rolled up when the span does not fit one input.
func (c *compaction) summaryInput(sreq *SummaryRequest, end int, asked *int, kept int) {
	sreq.Cached = nil
	if c.ev.Fallback {
		return
	}
	if call, n := c.cachedSummaryCall(*sreq, *asked, end, kept); call != nil {
		*asked, sreq.SummaryTokens = n, c.Cal.Unscale(n)
		sreq.Cached = call
		sreq.PreviousSummary, sreq.Transcript, sreq.Contents = c.prevSummary, "", c.Raw[c.first:end]
		return
	}
	var from int
	sreq.PreviousSummary, sreq.Transcript, from = c.rollUp(*sreq, end)
	sreq.Contents = c.Raw[from:end]
}

// requestSummary asks for a summary while the compaction's attempts and
// summarizer calls last; when they are spent or the call fails, it takes
// the fallback and returns "".
func (c *compaction) requestSummary(sreq SummaryRequest) string {
	reason := ""
	s := ""
	switch {
	case c.callsLeft <= 0:
		reason = "summarizer attempts spent"
	case c.ev.SummarizerCalls >= c.cfg.maxSummarizerCalls:
		reason = "summarizer calls spent (WithMaxSummarizerCalls)"
	default:
		c.callsLeft--
		var retry bool
		s, reason, retry = c.callSummarizer(sreq)
		if reason != "" && sreq.Cached != nil && retry && c.callsLeft > 0 {
			// An adapter or provider refusing ToolConfig must not cost the
			// summary: the transcript form asks without tools.
			c.log.Warn("contextguard: the summary in the cached form failed; asking in the transcript form",
				"reason", reason, "attempt", c.ev.SummarizerCalls, "summarizer_model", summarizerModel(c.cfg.summarizer))
			c.noCached, c.retryTranscript = true, true
			return ""
		}
	}
	if reason != "" {
		c.fallBack("contextguard: summarizer failed; using the fallback summary", reason, "attempt", c.ev.SummarizerCalls)
	}
	return s
}

// callSummarizer is one counted summarizer call: the summary, or "" and why
// the compaction falls back, and whether another form may help (not after a
// timeout or a cancellation).
func (c *compaction) callSummarizer(sreq SummaryRequest) (summary, failure string, retry bool) {
	s, err := c.summarize(sreq)
	c.ev.SummarizerCalls++
	c.ev.SummaryForm = SummaryFormTranscript
	if sreq.Cached != nil {
		c.ev.SummaryForm = SummaryFormCached
	}
	switch {
	case err != nil:
		return "", err.Error(), !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled)
	case strings.TrimSpace(s) == "":
		return "", "empty summary", true
	}
	return s, "", false
}

// fallBack makes c take the fallback summary from now on.
func (c *compaction) fallBack(msg, reason string, args ...any) {
	c.log.Warn(msg, append([]any{"fallback_reason", reason, "summarizer_model", summarizerModel(c.cfg.summarizer)}, args...)...)
	c.ev.Fallback, c.ev.FallbackReason = true, reason
}

// summaryBudget is the length asked of a summary: want, else half the
// buffer, bounded by the room the irreducible part leaves under the
// threshold, else under the window (maybe too little to be worth one).
func summaryBudget(lim window.Limits, bare, want int) int {
	b := lim.Buffer / 2
	if want > 0 {
		b = want
	}
	if room := sat.MulDiv(lim.Threshold-bare, summaryRoomPercent, 100); room < b {
		b = room
	}
	if b >= minSummaryTokens {
		return b
	}
	return max(min(minSummaryTokens, sat.MulDiv(lim.Window-bare, summaryRoomPercent, 100)), 0)
}

// summaryRoomPercent is the share of that room a summary may take, so one
// overshooting by a quarter still fits.
const summaryRoomPercent = 80

// The rolling pieces of a span too large for one summarizer input.

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
