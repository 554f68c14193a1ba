package core

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/sat"
	"github.com/adk-contextguard/contextguard/core/internal/window"
)

// The summary of a span: asked at the length the span frees, asked again
// shorter while the request does not fit, and the fallback when the
// summarizer fails. Its input is summarizer_input.go's, in rolling pieces
// (summary_rolling.go) when the span does not fit one.

// Sizes of a summary.
const (
	// minSummaryTokens is the smallest summary worth asking for: below it,
	// the guard sends the current request without a summary instead
	// (trimToCurrentRequest).
	minSummaryTokens = 256
	// oversizeTolerance is how far past its budget a summary may run before
	// it counts as oversize.
	oversizeTolerance = 1.25
)

// summaryFreshShare is the share of what a compaction frees beyond the
// previous summary (the summarized contents, less the summary message's own
// text) that the new summary may take on top of the previous summary's
// length; the other half is what the request shrinks by at least. Without
// it a turn-triggered sliding-window compaction asks for half the buffer
// (3,200 tokens at 32k) for a span that can weigh 2,048.
const summaryFreshShare = 0.5

// spanBudget is the length asked of the summary of c.raw[c.first:end]: the
// compaction's budget (summaryBudget), bounded by what replacing that span
// frees (summaryFreshShare), never below minSummaryTokens/2. build is the
// strategy: it returns the request's contents with a given summary, and is
// called with an empty summary to weigh the summary message's own header and
// continuation.
func (c *compaction) spanBudget(build func(summary string) []*genai.Content) int {
	freed := c.Cal.Scale(c.origEst - c.Weigh(build("")))
	prev := c.Text(c.prevSummary)
	b := prev + int(float64(max(freed-prev, 0))*summaryFreshShare)
	return min(c.budget, max(b, minSummaryTokens/2))
}

// summarizeSpan asks the summarizer for a summary of the previous summary
// plus c.raw[c.first:end], calls build with it for the request's contents,
// and weighs them: the fit loop. Every content of the span reaches a
// summarizer input, in rolling pieces when it does not fit one (rollUp).
//
// A summary is accepted whatever its length when the request it makes fits
// under the threshold; otherwise a shorter one is asked for while that can
// help (shorterLength). Any failure takes the deterministic fallback
// summary (callSummarizer), after which the summarizer is not asked again
// during this compaction.
func (c *compaction) summarizeSpan(end int, shorter bool, build func(summary string) []*genai.Content) outcome {
	c.ev.ContentsSummarized = end - c.first
	budget := c.spanBudget(build)
	// asked is the summary's length in the calibrated measure; the
	// summarizer is told it in its own (calibration.unscale).
	asked := min(budget, c.input.answer)
	sreq := c.summaryRequest(asked)
	// kept is how many of the request's newest contents stay verbatim
	// after the summary: the strategy's tail, none for a full summary.
	kept := 0
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

// shorterLength is the length to ask again for when the request a summary s,
// asked tokens long, makes (count) is over the threshold: the longest that
// would let it fit, at most half of asked when s ran past it
// (oversizeTolerance). It is 0, and the request is kept, when s kept to its
// length and shorter is not set, or no attempt or useful length is left; s
// past its length then takes the fallback instead.
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
// with the writer's length unscaled, before its input is filled in
// (summaryInput).
func (c *compaction) summaryRequest(asked int) SummaryRequest {
	return SummaryRequest{
		Agent:         c.ev.Agent,
		UserRequest:   c.input.extras.userRequest,
		Todos:         c.input.extras.todos,
		SummaryTokens: c.Cal.Unscale(asked),
		Instructions:  c.input.extras.instructions,
	}
}

// summaryInput fills in sreq the input of the summary of the previous
// summary plus c.raw[c.first:end], of *asked calibrated tokens, kept of the
// request's newest contents staying after it: the cached form when it can
// be used (cachedSummaryCall, which may shorten *asked), else the
// transcript, in rolling pieces when the span does not fit one input
// (rollUp). After the fallback was taken there is no input to fill.
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

// requestSummary asks for the summary that goes into the request, while
// the compaction's attempts (WithMaxCompactionAttempts) and summarizer
// calls (WithMaxSummarizerCalls) last; when they are spent, or the call
// fails, the compaction takes the fallback summary and "" is returned.
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
			// A model adapter that ignores ToolConfig, or a provider that
			// refuses it, must not cost the summary: the transcript form
			// asks without tools.
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

// callSummarizer is one summarizer call of compaction c, counted, with its
// failure classified: it returns the summary, or "" and the reason the
// compaction falls back (an error, a timeout, a panic, an empty summary),
// and whether asking again in another form may help (not after a timeout
// or a cancellation).
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

// fallBack makes compaction c take the deterministic fallback summary from
// now on, for reason, and logs msg with args.
func (c *compaction) fallBack(msg, reason string, args ...any) {
	c.log.Warn(msg, append([]any{"fallback_reason", reason, "summarizer_model", summarizerModel(c.cfg.summarizer)}, args...)...)
	c.ev.Fallback, c.ev.FallbackReason = true, reason
}

// summaryBudget is the length asked of a summary: want (WithSummaryTokens),
// else about half the buffer (ARCHITECTURE.md, The summarizer), less when
// the irreducible part leaves less room under the threshold, or, when the
// threshold leaves less than minSummaryTokens, what the window leaves
// (possibly too little to be worth a summary).
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

// summaryRoomPercent is the share of the room the irreducible part leaves
// under the threshold (or, when that is too small, under the window) that
// the longest summary asked for may take: a summarizer that overshoots the
// length it was asked for by a quarter still fits.
const summaryRoomPercent = 80
