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
)

// The summary of a span: the summarizer's input, sized to its window and to
// what the span frees, in rolling pieces when the span does not fit one
// input.

// Sizes of a summary and of the summarizer's input.
const (
	// minSummaryTokens is the smallest summary worth asking for: below it,
	// the guard sends the current request without a summary instead
	// (trimToCurrentRequest).
	minSummaryTokens = 256
	// summarizerInputShare is the share of the summarizer's window its input
	// may take; the rest is its prompt and its answer (the earlier guard's 80%, ARCHITECTURE.md, Origins).
	summarizerInputShare = 0.80
	// promptOverheadTokens is a bound on the summary prompt's own text.
	promptOverheadTokens = 700
	// oversizeTolerance is how far past its budget a summary may run before
	// it counts as oversize.
	oversizeTolerance = 1.25
)

// summaryFreshShare is the share of what a compaction frees beyond the
// previous summary (the summarized contents, less the summary message's own
// header and continuation) that the new summary may take on top of the
// previous summary's length. The other half is what the request shrinks by
// at least, when the summarizer keeps to the length asked; without this
// bound a turn-triggered sliding-window compaction asks for half the buffer
// (3,200 tokens at 32k) for a span that can weigh 2,048, and the request
// grows.
const summaryFreshShare = 0.5

const (
	// minSummarizerInput is the smallest input budget assumed, so a tiny
	// summarizer window still gets readable excerpts.
	minSummarizerInput = 512
	// summarizerAnswerShare bounds the summary asked of a summarizer whose
	// window is small beside the agent's (a 12,800-token summary cannot be
	// asked of an 8k model): it keeps most of its window for its input, so
	// a rolling summary needs few pieces. The agent's own model is never
	// bound by it (half the buffer is at most a tenth of the window).
	summarizerAnswerShare = 0.25
)

// renderedContent is one content as transcript lines, with its calibrated
// size; ok reports that it was rendered.
type renderedContent struct {
	text   string
	tokens int
	ok     bool
}

// rolledPiece is a piece of a span too large for one summarizer input,
// already summarized: summary covers the previous summary and
// t.raw[first:end].
type rolledPiece struct {
	end     int
	summary string
}

// spanBudget is the length asked of the summary of t.raw[c.first:end]: the
// compaction's budget (summaryBudget), bounded by what replacing that span
// frees (summaryFreshShare), never below minSummaryTokens/2. build is the
// strategy: it returns the request's contents with a given summary, and is
// called with an empty summary to weigh the summary message's own header and
// continuation.
func spanBudget(m measure, c *compaction, build func(summary string) []*genai.Content) int {
	freed := m.cal.scale(c.origEst - m.weigh(build("")))
	prev := m.text(c.prevSummary)
	b := prev + int(float64(max(freed-prev, 0))*summaryFreshShare)
	return min(c.budget, max(b, minSummaryTokens/2))
}

// summarizeSpan asks the summarizer for a summary of the previous summary
// plus t.raw[c.first:end], calls build with it for the request's contents,
// and weighs them: the fit loop.
//
// Every content of the span reaches a summarizer input: when the span does
// not fit one (summarizerInput), it is summarized in pieces, oldest first,
// each piece's summary folded into the next piece's input (rollUp); only the
// last piece's summary goes into the request.
//
// A summary is accepted whatever its length when the request it makes fits
// under the threshold. When the request does not fit, a shorter summary is
// asked for, while attempts remain, if the summary ran past the length asked
// (oversizeTolerance) or, with shorter set, if a shorter one can make the
// request fit; a summary past its length that leaves the request over the
// threshold once attempts are spent takes the deterministic fallback
// summary, as does any other failure (callSummarizer). Once the fallback
// was used the summarizer is not asked again during this compaction.
func (g *Guard) summarizeSpan(t *turn, c *compaction, end int, shorter bool, build func(summary string) []*genai.Content) outcome {
	c.ev.ContentsSummarized = end - c.first
	budget := spanBudget(t.measure, c, build)
	// asked is the summary's length in the calibrated measure; the
	// summarizer is told it in its own (calibration.unscale).
	asked := min(budget, c.input.answer)
	sreq := c.summaryRequest(t.cal, asked)
	// kept is how many of the request's newest contents stay verbatim
	// after the summary: the strategy's tail, none for a full summary.
	kept := 0
	if end < c.cov {
		kept = len(t.raw) - end
	}
	g.summaryInput(t, c, &sreq, end, &asked, kept)

	for {
		s := ""
		if !c.ev.Fallback {
			s = g.requestSummary(t, c, sreq)
			if c.retryTranscript {
				c.retryTranscript = false
				g.summaryInput(t, c, &sreq, end, &asked, kept)
				continue
			}
		}
		if c.ev.Fallback {
			s = fallbackAfterPieces(t.measure, c, end, budget)
		}
		cs := build(s)
		o := outcome{contents: cs, summary: s, newEst: t.weigh(cs)}
		o.newCount = t.cal.scale(o.newEst)
		if o.newCount <= t.lim.threshold || c.ev.Fallback {
			return o
		}
		// The request does not fit under the threshold. The longest
		// summary that would let it fit is target; a summary longer than
		// it was asked to be is asked again for at most half as much.
		have := t.cal.scale(t.est.text(s))
		target := have - (o.newCount - t.lim.threshold)
		over := have > int(float64(asked)*oversizeTolerance)
		if over {
			target = min(target, asked/2)
		}
		canHelp := c.callsLeft > 0 && target >= minSummaryTokens/2
		switch {
		case over && canHelp:
			t.log().Warn("contextguard: summary too long for the request to fit; asking again for a shorter one",
				"attempt", c.ev.SummarizerCalls, "summary_tokens", have, "asked_tokens", asked, "tokens_after", o.newCount, "threshold", t.lim.threshold)
		case over:
			c.fallBack(t, "contextguard: summarizer failed; using the fallback summary",
				"summary of "+strconv.Itoa(have)+" tokens exceeds its budget of "+strconv.Itoa(asked)+
					" and the request would not fit under the threshold", "attempt", c.ev.SummarizerCalls)
			continue
		case shorter && canHelp:
			// The summary kept to its length but the request is still
			// over the threshold: a shorter one can make it fit.
		default:
			return o
		}
		asked = target
		sreq.SummaryTokens = t.cal.unscale(asked)
		if sreq.Cached != nil {
			// The instruction states the length, and the call bounds it.
			g.summaryInput(t, c, &sreq, end, &asked, kept)
		}
	}
}

// summaryRequest is the request of a summary of asked calibrated tokens,
// with the writer's length unscaled by cal, before its input is filled in
// (summaryInput).
func (c *compaction) summaryRequest(cal calibration, asked int) SummaryRequest {
	return SummaryRequest{
		Agent:         c.ev.Agent,
		UserRequest:   c.input.extras.userRequest,
		Todos:         c.input.extras.todos,
		SummaryTokens: cal.unscale(asked),
		Instructions:  c.input.extras.instructions,
	}
}

// summaryInput fills in sreq the input of the summary of the previous
// summary plus t.raw[c.first:end], of *asked calibrated tokens, kept of the
// request's newest contents staying after it: the cached form when it can
// be used (cachedSummaryCall, which may shorten *asked), else the
// transcript, in rolling pieces when the span does not fit one input
// (rollUp). After the fallback was taken there is no input to fill.
func (g *Guard) summaryInput(t *turn, c *compaction, sreq *SummaryRequest, end int, asked *int, kept int) {
	sreq.Cached = nil
	if c.ev.Fallback {
		return
	}
	if call, n := cachedSummaryCall(t, c, *sreq, *asked, end, kept); call != nil {
		*asked, sreq.SummaryTokens = n, t.cal.unscale(n)
		sreq.Cached = call
		sreq.PreviousSummary, sreq.Transcript, sreq.Contents = c.prevSummary, "", t.raw[c.first:end]
		return
	}
	var from int
	sreq.PreviousSummary, sreq.Transcript, from = g.rollUp(t, c, *sreq, end)
	sreq.Contents = t.raw[from:end]
}

// requestSummary asks for the summary that goes into the request, while
// the compaction's attempts (WithMaxCompactionAttempts) and summarizer
// calls (WithMaxSummarizerCalls) last; when they are spent, or the call
// fails, the compaction takes the fallback summary and "" is returned.
func (g *Guard) requestSummary(t *turn, c *compaction, sreq SummaryRequest) string {
	reason := ""
	s := ""
	switch {
	case c.callsLeft <= 0:
		reason = "summarizer attempts spent"
	case c.ev.SummarizerCalls >= t.cfg.maxSummarizerCalls:
		reason = "summarizer calls spent (WithMaxSummarizerCalls)"
	default:
		c.callsLeft--
		var retry bool
		s, reason, retry = g.callSummarizer(t, c, sreq)
		if reason != "" && sreq.Cached != nil && retry && c.callsLeft > 0 {
			// A model adapter that ignores ToolConfig, or a provider that
			// refuses it, must not cost the summary: the transcript form
			// asks without tools.
			t.log().Warn("contextguard: the summary in the cached form failed; asking in the transcript form",
				"reason", reason, "attempt", c.ev.SummarizerCalls, "summarizer_model", summarizerModel(t.cfg.summarizer))
			c.noCached, c.retryTranscript = true, true
			return ""
		}
	}
	if reason != "" {
		c.fallBack(t, "contextguard: summarizer failed; using the fallback summary", reason, "attempt", c.ev.SummarizerCalls)
	}
	return s
}

// callSummarizer is one summarizer call of compaction c, counted, with its
// failure classified: it returns the summary, or "" and the reason the
// compaction falls back (an error, a timeout, a panic, an empty summary),
// and whether asking again in another form may help (not after a timeout
// or a cancellation).
func (g *Guard) callSummarizer(t *turn, c *compaction, sreq SummaryRequest) (summary, failure string, retry bool) {
	s, err := g.summarize(t, sreq)
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

// fallBack makes compaction c take the deterministic fallback summary from
// now on, for reason, and logs msg with args.
func (c *compaction) fallBack(t *turn, msg, reason string, args ...any) {
	t.log().Warn(msg, append([]any{"fallback_reason", reason, "summarizer_model", summarizerModel(t.cfg.summarizer)}, args...)...)
	c.ev.Fallback, c.ev.FallbackReason = true, reason
}

// rollUp prepares the input of the summarizer call whose summary goes into
// the request: it returns the summary that call folds in, the transcript it
// summarizes, and where in t.raw that transcript starts. When the previous
// summary and t.raw[c.first:end] do not fit one summarizer input, the span
// is cut into pieces, oldest first, each as large as the input leaves room
// for beside the summary so far (nextPiece), and every piece but the last is
// summarized with that summary folded in (a rolling summary), at the
// longest length the summarizer is asked for: no content is left out. Pieces summarized for a
// shorter span during this compaction are reused (the pieces of a span do
// not depend on where it ends, but for its last). A summarizer failure sets
// the compaction's fallback and the result is then unused.
func (g *Guard) rollUp(t *turn, c *compaction, sreq SummaryRequest, end int) (prev, transcript string, from int) {
	prev, from = c.prevSummary, c.first
	reused := 0
	for _, p := range c.rolled {
		if p.end >= end {
			break
		}
		prev, from = p.summary, p.end
		reused++
	}
	c.rolled = c.rolled[:reused]
	sreq.SummaryTokens = t.cal.unscale(c.input.answer)
	prev, from = digestOldest(t, c, prev, from, end)
	for {
		pieceEnd, text, shown := nextPiece(t.measure, c, prev, from, end)
		if pieceEnd >= end {
			return shown, text, from
		}
		if c.ev.SummarizerCalls+1 >= t.cfg.maxSummarizerCalls {
			// This piece would leave no call for the last: the pieces
			// summarized so far are kept, the fallback lists the rest
			// (fallbackAfterPieces).
			c.fallBack(t, "contextguard: summarizer calls spent; using the fallback summary for the rest of the span",
				"the span needs more than "+strconv.Itoa(t.cfg.maxSummarizerCalls)+" summarizer calls (WithMaxSummarizerCalls)",
				"rolling_pieces", len(c.rolled), "remaining_contents", end-from)
			return "", "", from
		}
		sreq.PreviousSummary, sreq.Transcript, sreq.Contents = shown, text, t.raw[from:pieceEnd]
		s, failure, _ := g.callSummarizer(t, c, sreq)
		c.ev.RollingCalls++
		if failure != "" {
			c.fallBack(t, "contextguard: summarizer failed; using the fallback summary", failure,
				"attempt", c.ev.SummarizerCalls, "rolling_piece", len(c.rolled)+1)
			return "", "", from
		}
		t.log().Debug("contextguard: the span does not fit one summarizer input; summarized a piece of it",
			"rolling_piece", len(c.rolled)+1, "contents_summarized", pieceEnd-from, "remaining_contents", end-pieceEnd)
		c.rolled = append(c.rolled, rolledPiece{end: pieceEnd, summary: s})
		prev, from = s, pieceEnd
	}
}

// digestOldest bounds the rolling summary of t.raw[from:end], which folds
// in prev, to the summarizer calls the compaction has left
// (WithMaxSummarizerCalls), less the retries its last call may need. When
// the transcript outweighs what that many inputs hold (each two fifths of
// the input budget: half is left beside the summary so far, boundPrev, less
// where a piece ends before a content that does not fit whole), its oldest
// contents, with prev, are listed by the fallback summary in half an input,
// which stands as the summary so far of a rolled piece: the summarizer then
// reads that list beside the newest contents. It returns the summary so far
// and where the contents still to summarize start.
func digestOldest(t *turn, c *compaction, prev string, from, end int) (string, int) {
	calls := t.cfg.maxSummarizerCalls - c.ev.SummarizerCalls - max(c.callsLeft-1, 0)
	capacity := sat.Scale(c.input.budget*2/5, float64(max(calls, 1))) // calls may be near math.MaxInt
	cut, held := end, 0
	for cut > from {
		n := c.render(t.measure, cut-1).tokens
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
		strconv.Itoa(t.cfg.maxSummarizerCalls) + " summarizer calls.)\n"
	digest := head + fallbackSummary(t.est, t.cal, prev, t.raw[from:cut], nil, c.input.budget/2-t.cal.scale(t.est.text(head)))
	t.log().Warn("contextguard: the span needs more summarizer calls than allowed; its oldest messages are listed mechanically",
		"max_summarizer_calls", t.cfg.maxSummarizerCalls, "listed_contents", cut-from, "summarized_contents", end-cut)
	c.rolled = append(c.rolled, rolledPiece{end: cut, summary: digest})
	return digest, cut
}

// fallbackAfterPieces is the deterministic fallback summary of the
// previous summary and t.raw[c.first:end], of budget tokens. When pieces of
// a rolling summary were summarized for the span, the last is kept (at
// most half the budget, by head and tail) and the fallback lists the
// contents after it: nothing the summarizer already wrote is thrown away.
func fallbackAfterPieces(m measure, c *compaction, end, budget int) string {
	prev, from := c.prevSummary, c.first
	for _, p := range c.rolled {
		if p.end >= end {
			break
		}
		prev, from = p.summary, p.end
	}
	if from == c.first {
		return fallbackSummary(m.est, m.cal, c.prevSummary, m.raw[c.first:end], c.todos, budget)
	}
	if m.text(prev) > budget/2 {
		prev = excerptToFit(m, prev, budget/2)
	}
	head := "(Summary of the conversation's first " + strconv.Itoa(from) + " messages:)\n" + prev + "\n"
	return head + fallbackSummary(m.est, m.cal, "", m.raw[from:end], c.todos, budget-m.text(head))
}

// summaryBudget is the length asked of a summary: want (WithSummaryTokens),
// else about half the buffer (ARCHITECTURE.md, The summarizer), less when
// the irreducible part leaves less room under the threshold, or, when the
// threshold leaves less than minSummaryTokens, what the window leaves
// (possibly too little to be worth a summary).
func summaryBudget(lim limits, bare, want int) int {
	b := lim.buffer / 2
	if want > 0 {
		b = want
	}
	if room := sat.MulDiv(lim.threshold-bare, summaryRoomPercent, 100); room < b {
		b = room
	}
	if b >= minSummaryTokens {
		return b
	}
	return max(min(minSummaryTokens, sat.MulDiv(lim.window-bare, summaryRoomPercent, 100)), 0)
}

// summaryRoomPercent is the share of the room the irreducible part leaves
// under the threshold (or, when that is too small, under the window) that
// the longest summary asked for may take: a summarizer that overshoots the
// length it was asked for by a quarter still fits.
const summaryRoomPercent = 80

// boundedUserRequest is the continuation's text: the user's current request
// (convo.CurrentRequest), its attachments named, quoted in full when it fits its
// bound (continuationBound) and by head and tail beyond it, so that a request
// larger than the window still leaves room for the summary.
func boundedUserRequest(t *turn) string {
	return boundContinuation(t.measure, t.lim.threshold, continuationText(coveredRequest(t, len(t.raw))))
}

// summarizerInput is the room of one summarizer call, in calibrated tokens:
// answer is the longest summary it is asked for (the compaction's budget,
// at most summarizerAnswerShare of its window); budget is what its window
// leaves for the previous summary and the transcript (summarizerInputShare
// of it, or less when the room reserved for the answer needs more, less the
// prompt's own text and the parts beside the transcript, summarizer_input.go),
// of which the previous summary may take half; lim bounds the excerpts of the transcript, scaled
// to what the compaction's previous summary leaves.
type summarizerInput struct {
	answer int
	budget int
	lim    excerptLimits
	// extras are the parts of every input beside the transcript and the
	// previous summary, already taken out of budget.
	extras summarizerExtras
}

// newSummarizerInput is the room of one call to the turn's summarizer,
// with the parts of its input beside the transcript (the instructions, the
// todo list, the user's request) bounded to their shares of it and taken
// out of its budget.
func newSummarizerInput(t *turn, prev string, summaryTokens int, todos []TodoItem, userRequest string) summarizerInput {
	w := t.guardSummarizerWindow()
	answer := max(min(summaryTokens, int(float64(w)*summarizerAnswerShare)), minSummaryTokens/2)
	// The answer's room is what the call reserves for it (MaxOutputTokens,
	// twice the length asked), which some providers count against the
	// window; the input share keeps the estimate's margin.
	budget := max(min(int(float64(w)*summarizerInputShare), w-2*answer)-promptOverheadTokens, minSummarizerInput)
	extras := newSummarizerExtras(t, budget, todos, userRequest)
	in := summarizerInput{answer: answer, budget: budget - extras.tokens, extras: extras}
	remaining := in.budget - t.text(in.boundPrev(t.measure, prev))
	in.lim = limitsForBudget(sat.Scale(remaining, textcut.BytesPerTokenGuess))
	return in
}

// boundPrev bounds a previous summary to half the input, cutting its
// middle (counted, not guessed from its bytes: a summary dense in
// identifiers would otherwise crowd out the transcript, and a rolling
// summary would need a piece per few contents).
func (in summarizerInput) boundPrev(m measure, prev string) string {
	if m.text(prev) > in.budget/2 {
		return excerptToFit(m, prev, in.budget/2)
	}
	return prev
}

// render returns the transcript lines of t.raw[i] and their calibrated size,
// rendering each content once per compaction.
func (c *compaction) render(m measure, i int) renderedContent {
	r := &c.rendered[i-c.first]
	if !r.ok {
		r.text = renderContent(m.raw[i], c.input.lim)
		r.tokens = m.text(r.text)
		r.ok = true
	}
	return *r
}

// nextPiece is the next summarizer input of a span, from t.raw[from] on,
// after the summary so far (prev): the contents, oldest first, that fit
// beside prev, up to end. It returns the end of the piece, its transcript,
// and prev as shown to the summarizer (bounded to half the input). A content
// larger than the whole room is the only content of its piece, cut to a
// head and tail excerpt that fits, and the transcript says so: nothing is
// left out silently.
func nextPiece(m measure, c *compaction, prev string, from, end int) (pieceEnd int, transcript, shown string) {
	shown = c.input.boundPrev(m, prev)
	room := c.input.budget - m.text(shown)
	var b strings.Builder
	i := from
	for ; i < end; i++ {
		r := c.render(m, i)
		if r.tokens > room {
			break
		}
		b.WriteString(r.text)
		room -= r.tokens
	}
	if i > from || from >= end {
		return i, b.String(), shown
	}
	r := c.render(m, from)
	note := fmt.Sprintf("[message %d of this conversation is larger than the summarizer's window: only its head and tail are shown]\n", from+1)
	return from + 1, note + excerptToFit(m, r.text, room-m.text(note)), shown
}

// excerptToFit cuts s to a head and tail excerpt of at most about n
// calibrated tokens (minExcerptBytes at least, so something of it shows).
func excerptToFit(m measure, s string, n int) string {
	const minExcerptBytes = 200
	for bytes := max(sat.Scale(n, textcut.BytesPerTokenGuess), minExcerptBytes); ; bytes = sat.MulDiv(bytes, textcut.RetryPercent, 100) {
		cut := textcut.Middle(s, max(bytes, minExcerptBytes))
		if bytes <= minExcerptBytes || m.text(cut) <= n {
			return cut
		}
	}
}
