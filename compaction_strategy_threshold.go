package contextguard

import (
	"context"
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"
	"google.golang.org/genai"
)

const (
	// minSummaryTokens is the smallest summary budget ever asked for.
	minSummaryTokens = 256
	// summarizerInputShare is the share of the summarizer's window its input
	// may take; the rest is its prompt and its answer (seed 001: 80%).
	summarizerInputShare = 0.80
	// promptOverheadTokens is a bound on the summary prompt's own text.
	promptOverheadTokens = 700
	// oversizeTolerance is how far past its budget a summary may run before
	// it counts as oversize.
	oversizeTolerance = 1.25
	// continuationShare bounds the quoted user request to this share of the
	// threshold, so a request larger than the window still leaves room.
	continuationShare = 8
)

// compactThreshold is the threshold strategy (DESIGN §5): summarize the
// previous summary plus everything after the watermark, replace the request's
// contents with one summary message, reset calibration and persist.
func (g *ContextGuard) compactThreshold(t *turn) (next guardState, err error) {
	start := time.Now()
	next = t.prev
	cov := coverableLen(t.raw)
	first := 0
	prevSummary := ""
	if t.inj.injected {
		first = t.inj.cut
		prevSummary = t.prev.summary
	}
	if first > cov {
		first = cov
	}
	toSummarize := t.raw[first:cov]

	userReq := boundedUserRequest(t)

	// The part no summary can shrink: system instruction, tools and the
	// message that carries the continuation.
	fixed := requestTokens(t.est, t.req) - contentsTokens(t.est, t.req.Contents)
	bare := t.cal.scale(fixed + t.est.content(summaryContent("", userReq)))
	if bare > t.lim.window {
		if t.prev.floor != bare {
			t.log().Error("contextguard: the system instruction, tools and current request alone exceed the context window; nothing the guard can cut will make the request fit",
				"irreducible_tokens", bare, "window", t.lim.window, "threshold", t.lim.threshold)
		}
		next.floor = bare
		next.lastEstimate = requestTokens(t.est, t.req)
		return next, irreducibleError(bare, t.lim.window)
	}
	if len(toSummarize) == 0 && prevSummary == "" {
		next.lastEstimate = requestTokens(t.est, t.req)
		return next, nil
	}

	budget := summaryBudget(t.lim, bare)
	t.sumWindow = g.summarizerWindow(t)
	fitted, transcript, prevForSummarizer := fitForSummarizer(t, prevSummary, toSummarize, budget)
	sreq := SummaryRequest{
		Agent:           t.cfg.name,
		PreviousSummary: prevForSummarizer,
		Contents:        fitted,
		Transcript:      transcript,
		UserRequest:     userReq,
		Todos:           loadTodos(t.ctx.ReadonlyState()),
		MaxTokens:       budget,
		Instructions:    t.cfg.instructions,
	}

	var span trace.Span
	t.spanCtx, span = g.tel.startCompaction(t.ctx, t.cfg.name, t.ctx.SessionID(), StrategyThreshold)
	ev := CompactionEvent{
		Agent:              t.cfg.name,
		SessionID:          t.ctx.SessionID(),
		Strategy:           StrategyThreshold,
		Reason:             "tokens",
		TokensBefore:       t.before,
		Threshold:          t.lim.threshold,
		Window:             t.lim.window,
		ContentsSummarized: len(toSummarize),
	}

	var summary string
	var newEst, newCount int
	for attempt := 1; ; attempt++ {
		s, err := g.summarize(t, sreq)
		ev.SummarizerCalls++
		reason := ""
		switch {
		case err != nil:
			reason = err.Error()
		case strings.TrimSpace(s) == "":
			reason = "empty summary"
		case t.cal.scale(t.est.text(s)) > int(float64(sreq.MaxTokens)*oversizeTolerance):
			reason = "summary of " + strconv.Itoa(t.cal.scale(t.est.text(s))) + " tokens exceeds its budget of " + strconv.Itoa(sreq.MaxTokens)
			if attempt < t.cfg.maxAttempts {
				t.log().Warn("contextguard: summary too long; asking again for a shorter one", "attempt", attempt, "reason", reason)
				sreq.MaxTokens = max(sreq.MaxTokens/2, minSummaryTokens/2)
				continue
			}
		}
		if reason != "" {
			t.log().Warn("contextguard: summarizer failed; using the fallback summary", "reason", reason, "attempt", attempt)
			ev.Fallback, ev.FallbackReason = true, reason
			s = fallbackSummary(t.est, t.cal, prevSummary, toSummarize, sreq.Todos, budget)
		}
		summary = s
		t.req.Contents = []*genai.Content{t.sess.summary.get(summary, userReq)}
		newEst = requestTokens(t.est, t.req)
		newCount = t.cal.scale(newEst)
		if newCount <= t.lim.threshold || ev.Fallback || attempt >= t.cfg.maxAttempts {
			break
		}
		// The summary fits its budget but the request is still over the
		// threshold: ask for a shorter one only if that can help.
		excess := newCount - t.lim.threshold
		have := t.cal.scale(t.est.text(summary))
		if have-excess < minSummaryTokens/2 {
			break
		}
		sreq.MaxTokens = have - excess
	}

	if newCount > t.lim.threshold {
		if t.prev.floor == 0 {
			t.log().Warn("contextguard: the compacted request is still over the threshold; its irreducible part is too large, so the guard will not compact again until the conversation grows",
				"tokens_after", newCount, "threshold", t.lim.threshold, "window", t.lim.window)
		}
		next.floor = newCount
	} else {
		next.floor = 0
	}

	cov = max(cov, 1)
	next.summary = summary
	next.userRequest = userReq
	next.watermark = cov
	next.fingerprint = t.est.fingerprint(t.raw[cov-1])
	next.summarizedAt = t.before
	next.realTokens = 0
	next.lastEstimate = newEst
	next.compactions = t.prev.compactions + 1

	ev.TokensAfter = newCount
	ev.Duration = time.Since(start)
	if newCount > t.lim.window {
		err = irreducibleError(newCount, t.lim.window)
	}
	g.tel.endCompaction(t.spanCtx, span, ev, err)
	t.log().Info("contextguard: compacted",
		"tokens_before", ev.TokensBefore, "tokens_after", ev.TokensAfter,
		"threshold", ev.Threshold, "window", ev.Window, "strategy", ev.Strategy,
		"summarizer_calls", ev.SummarizerCalls, "fallback", ev.Fallback,
		"duration", ev.Duration)
	if g.hook != nil {
		g.hook(t.ctx, ev)
	}
	return next, err
}

// summaryBudget is the length asked of a summary: about half the buffer
// (DESIGN §7), less when the irreducible part leaves less room under the
// threshold, never below minSummaryTokens.
func summaryBudget(lim limits, bare int) int {
	b := lim.buffer / 2
	if room := (lim.threshold - bare) * 8 / 10; room < b {
		b = room
	}
	return max(b, minSummaryTokens)
}

// boundedUserRequest is the user's current request, bounded so that a
// request larger than the window still leaves room for the summary.
func boundedUserRequest(t *turn) string {
	s := sanitizeUTF8(latestUserText(t.ctx.UserContent(), t.raw))
	maxTokens := max(t.lim.threshold/continuationShare, 64)
	if t.cal.scale(t.est.text(s)) <= maxTokens {
		return s
	}
	bytes := maxTokens * 3
	for bytes > 64 {
		cut := truncateMiddle(s, bytes)
		if t.cal.scale(t.est.text(cut)) <= maxTokens {
			return cut
		}
		bytes = bytes * 3 / 4
	}
	return truncateMiddle(s, 64)
}

// summarizerWindow is the window of the model that writes the summary: the
// agent's own when it is the same model, else the registry's.
func (g *ContextGuard) summarizerWindow(t *turn) int {
	if s, ok := t.cfg.summarizer.(*LLMSummarizer); ok && s.llm != nil && s.llm.Name() != t.req.Model {
		if w := g.registry.ContextWindow(s.llm.Name()); w > 0 {
			return w
		}
	}
	return t.lim.window
}

// fitForSummarizer renders the contents newest first until the summarizer's
// input budget is spent (O(n): each content is rendered and counted once);
// older contents are dropped and a note says how many. The previous summary
// is kept, bounded to half the budget.
func fitForSummarizer(t *turn, prev string, cs []*genai.Content, summaryTokens int) ([]*genai.Content, string, string) {
	budget := int(float64(t.guardSummarizerWindow())*summarizerInputShare) - summaryTokens - promptOverheadTokens
	budget = max(budget, 512)
	if p := t.cal.scale(t.est.text(prev)); p > budget/2 {
		prev = truncateMiddle(prev, budget*3/2)
	}
	remaining := budget - t.cal.scale(t.est.text(prev))
	lim := limitsForBudget(remaining * 3)

	rendered := make([]string, len(cs))
	first := len(cs)
	for i := len(cs) - 1; i >= 0; i-- {
		r := renderContent(cs[i], lim)
		n := t.cal.scale(t.est.text(r))
		if n > remaining {
			if i == len(cs)-1 {
				// The newest message always goes in, cut to what fits.
				rendered[i] = truncateMiddle(r, max(remaining*3, 200))
				first = i
			}
			break
		}
		rendered[i] = r
		remaining -= n
		first = i
	}
	var b strings.Builder
	if first > 0 {
		fmt.Fprintf(&b, "[%d earlier messages omitted: they did not fit the summarizer's window]\n", first)
	}
	for _, r := range rendered[first:] {
		b.WriteString(r)
	}
	return cs[first:], b.String(), prev
}

// guardSummarizerWindow is the summarizer's window for this turn (see
// summarizerWindow), the agent's when unset.
func (t *turn) guardSummarizerWindow() int {
	if t.sumWindow > 0 {
		return t.sumWindow
	}
	return t.lim.window
}

// summarize calls the agent's summarizer with the summary timeout, turning a
// panic into an error (logged with its stack) so the agent survives it.
func (g *ContextGuard) summarize(t *turn, req SummaryRequest) (s string, err error) {
	defer func() {
		if r := recover(); r != nil {
			t.log().Error("contextguard: summarizer panicked", "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			s, err = "", fmt.Errorf("summarizer panicked: %v", r)
		}
	}()
	parent := context.Context(t.ctx)
	if t.spanCtx != nil {
		parent = t.spanCtx
	}
	ctx, cancel := context.WithTimeout(parent, t.cfg.summaryTimeout)
	defer cancel()
	began := time.Now()
	defer func() { g.tel.summarizerCall(parent, t.cfg.name, time.Since(began)) }()
	return t.cfg.summarizer.Summarize(ctx, req)
}
