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
