package contextguard

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"
	"google.golang.org/genai"
)

const (
	// minSummaryTokens is the smallest summary worth asking for: below it,
	// the guard sends the current request without a summary instead
	// (trimToCurrentRequest).
	minSummaryTokens = 256
	// summarizerInputShare is the share of the summarizer's window its input
	// may take; the rest is its prompt and its answer (seed 001: 80%).
	summarizerInputShare = 0.80
	// promptOverheadTokens is a bound on the summary prompt's own text.
	promptOverheadTokens = 700
	// oversizeTolerance is how far past its budget a summary may run before
	// it counts as oversize.
	oversizeTolerance = 1.25
)

// compactThreshold is the threshold strategy (DESIGN §5): summarize the
// previous summary plus everything after the watermark, replace the request's
// contents with one summary message, reset calibration and persist.
func (g *ContextGuard) compactThreshold(t *turn) (guardState, error) {
	c, next, err := g.beginCompaction(t, StrategyThreshold, "tokens")
	if c == nil {
		return next, err
	}
	return g.finishCompaction(t, c, g.fullSummary(t, c))
}

// compaction is one compaction in progress: what both strategies share.
type compaction struct {
	start time.Time
	// first and cov bound the contents a summary made now may cover:
	// t.raw[first:cov] (first is the injected summary's cut).
	first, cov int
	// prevSummary is the stored summary when it was injected, else "".
	prevSummary string
	userReq     string
	todos       []TodoItem
	// bare is the calibrated size of the request with an empty summary and
	// no contents; budget is the length asked of a summary.
	bare, budget int
	// callsLeft is how many more times the summarizer may be asked.
	callsLeft int
	ev        CompactionEvent
	span      trace.Span
}

// outcome is what a strategy made of a compaction.
type outcome struct {
	summary string
	// watermark is how many leading raw contents the summary covers.
	watermark int
	// newEst and newCount are the raw and calibrated size of the request
	// as rewritten.
	newEst, newCount int
}

// beginCompaction does what every compaction starts with: it finds what may
// be summarized and the irreducible part of the request, and opens the span.
// A nil compaction means there is nothing to compact, or that nothing can
// help (err then wraps ErrIrreducible); next and err are then the result.
func (g *ContextGuard) beginCompaction(t *turn, strategy Strategy, reason string) (c *compaction, next guardState, err error) {
	c = &compaction{start: time.Now(), cov: coverableLen(t.raw)}
	next = t.prev
	if t.inj.injected {
		c.first = t.inj.cut
		c.prevSummary = t.prev.summary
	}
	c.first = min(c.first, c.cov)

	c.userReq = boundedUserRequest(t)

	// The part no summary can shrink: system instruction, tools and the
	// message that carries the continuation.
	// It is refused only when it exceeds the window by more than the
	// estimate's error margin: the smallest request the guard can make is
	// worth sending while it may fit; the provider is the last judge, and an
	// overflow it reports is recovered.
	// The refusal is decided on the raw estimate plus its margin, never on
	// a calibration factor (calibration.go).
	fixed := requestTokens(t.est, t.req) - contentsTokens(t.est, t.req.Contents)
	rawBare := satAdd(fixed, t.est.content(summaryContent("", c.userReq)))
	c.bare = t.cal.scale(rawBare)
	if n := t.irreducibleSize(rawBare); n > t.lim.hardLimit() {
		if t.prev.floor != c.bare {
			t.log().Error("contextguard: the system instruction, tools and current request alone exceed the context window; nothing the guard can cut will make the request fit",
				"irreducible_tokens", c.bare, "window", t.lim.window, "threshold", t.lim.threshold)
		}
		next.floor = c.bare
		next.lastEstimate = requestTokens(t.est, t.req)
		return nil, next, irreducibleError(n, t.lim.window)
	}
	if c.cov == c.first && c.prevSummary == "" {
		next.lastEstimate = requestTokens(t.est, t.req)
		if n := t.irreducibleSize(next.lastEstimate); n > t.lim.hardLimit() {
			// Only adapter continuations, which a summary may not cover:
			// say so rather than send a request known not to fit.
			t.log().Error("contextguard: the request exceeds the context window and holds nothing the guard can summarize",
				"tokens", n, "window", t.lim.window)
			return nil, next, irreducibleError(n, t.lim.window)
		}
		return nil, next, nil
	}

	c.budget = summaryBudget(t.lim, c.bare)
	if c.budget < minSummaryTokens {
		next, err = trimToCurrentRequest(t, next)
		return nil, next, err
	}
	t.sumWindow = g.summarizerWindow(t)
	c.todos = loadTodos(t.ctx.ReadonlyState())
	c.callsLeft = t.cfg.maxAttempts

	t.spanCtx, c.span = g.tel.startCompaction(t.ctx, t.cfg.name, t.ctx.SessionID(), strategy)
	c.ev = CompactionEvent{
		Agent:        t.cfg.name,
		SessionID:    t.ctx.SessionID(),
		Strategy:     strategy,
		Reason:       reason,
		TokensBefore: t.before,
		Threshold:    t.lim.threshold,
		Window:       t.lim.window,
	}
	return c, next, nil
}

// trimToCurrentRequest handles a request whose irreducible part leaves no
// room for a summary worth asking for (the system instruction and tools
// nearly fill the window): it sends the newest contents from the user's
// current request on, verbatim and pair-safe, which is the smallest request
// that still carries the task; no summary is paid for or stored, and the
// next call over the trigger trims again. It is logged once per session.
func trimToCurrentRequest(t *turn, next guardState) (guardState, error) {
	start := len(t.raw) - 1
	for i := len(t.raw) - 1; i >= 0; i-- {
		if c := t.raw[i]; c != nil && c.Role == genai.RoleUser && !isSynthetic(c) && contentText(c) != "" {
			start = i
			break
		}
	}
	start = pairSafeStart(t.raw, max(start, 0))
	t.req.Contents = t.raw[start:]
	est := requestTokens(t.est, t.req)
	if mem := t.sess.memory(t.cfg.name); !mem.trimWarned {
		mem.trimWarned = true
		t.log().Warn("contextguard: the system instruction and tools leave no room for a summary; sending only the newest contents from the user's current request on",
			"tokens_after", t.cal.scale(est), "threshold", t.lim.threshold, "window", t.lim.window, "kept_contents", len(t.req.Contents))
	}
	next.floor = 0
	next.realTokens = 0
	next.lastEstimate = est
	if n := t.irreducibleSize(est); n > t.lim.hardLimit() {
		return next, irreducibleError(n, t.lim.window)
	}
	return next, nil
}

// fullSummary summarizes everything the compaction may cover and makes the
// summary message the request's only content (the threshold behaviour).
func (g *ContextGuard) fullSummary(t *turn, c *compaction) outcome {
	span := t.raw[c.first:c.cov]
	o := g.summarizeSpan(t, c, span, true, func(summary string) {
		t.req.Contents = []*genai.Content{t.sess.summary.get(summary, c.userReq)}
	})
	o.watermark = max(c.cov, 1)
	return o
}

// summarizeSpan asks the summarizer for a summary of the previous summary
// plus span, calls build with it to rewrite the request, and counts the
// result. A summary over its budget is asked for again, shorter, while
// attempts remain; any other failure (error, empty text, deadline, panic),
// an oversize summary on the last attempt, or attempts already spent take
// the deterministic fallback summary, and once the fallback was used the
// summarizer is not asked again during this compaction. With shorter set, a
// request still over the threshold asks for a shorter summary when that can
// help.
func (g *ContextGuard) summarizeSpan(t *turn, c *compaction, span []*genai.Content, shorter bool, build func(summary string)) outcome {
	fitted, transcript, prevForSummarizer := fitForSummarizer(t, c.prevSummary, span, c.budget)
	sreq := SummaryRequest{
		Agent:           t.cfg.name,
		PreviousSummary: prevForSummarizer,
		Contents:        fitted,
		Transcript:      transcript,
		UserRequest:     c.userReq,
		Todos:           c.todos,
		MaxTokens:       c.budget,
		Instructions:    t.cfg.instructions,
	}
	c.ev.ContentsSummarized = len(span)

	var o outcome
	for {
		var s string
		reason := ""
		switch {
		case c.ev.Fallback:
			// The summarizer already failed during this compaction.
		case c.callsLeft <= 0:
			reason = "summarizer attempts spent"
		default:
			var err error
			s, err = g.summarize(t, sreq)
			c.ev.SummarizerCalls++
			c.callsLeft--
			switch {
			case err != nil:
				reason = err.Error()
			case strings.TrimSpace(s) == "":
				reason = "empty summary"
			case t.cal.scale(t.est.text(s)) > int(float64(sreq.MaxTokens)*oversizeTolerance):
				reason = "summary of " + strconv.Itoa(t.cal.scale(t.est.text(s))) + " tokens exceeds its budget of " + strconv.Itoa(sreq.MaxTokens)
				if c.callsLeft > 0 {
					t.log().Warn("contextguard: summary too long; asking again for a shorter one", "attempt", c.ev.SummarizerCalls, "reason", reason)
					sreq.MaxTokens = max(sreq.MaxTokens/2, minSummaryTokens/2)
					continue
				}
			}
		}
		if reason != "" {
			t.log().Warn("contextguard: summarizer failed; using the fallback summary", "reason", reason, "attempt", c.ev.SummarizerCalls)
			c.ev.Fallback, c.ev.FallbackReason = true, reason
		}
		if c.ev.Fallback {
			s = fallbackSummary(t.est, t.cal, c.prevSummary, span, sreq.Todos, c.budget)
		}
		o.summary = s
		build(s)
		o.newEst = requestTokens(t.est, t.req)
		o.newCount = t.cal.scale(o.newEst)
		if o.newCount <= t.lim.threshold || c.ev.Fallback || c.callsLeft <= 0 || !shorter {
			return o
		}
		// The summary fits its budget but the request is still over the
		// threshold: ask for a shorter one only if that can help.
		excess := o.newCount - t.lim.threshold
		have := t.cal.scale(t.est.text(s))
		if have-excess < minSummaryTokens/2 {
			return o
		}
		sreq.MaxTokens = have - excess
	}
}

// finishCompaction records the outcome: the irreducible floor, the state to
// persist, the event (for the hook), the span and the log line.
func (g *ContextGuard) finishCompaction(t *turn, c *compaction, o outcome) (next guardState, err error) {
	next = t.prev
	if o.newCount > t.lim.threshold {
		if t.prev.floor == 0 {
			t.log().Warn("contextguard: the compacted request is still over the threshold; its irreducible part is too large, so the guard will not compact again until the conversation grows",
				"tokens_after", o.newCount, "threshold", t.lim.threshold, "window", t.lim.window)
		}
		next.floor = o.newCount
	} else {
		next.floor = 0
	}

	next.summary = o.summary
	next.userRequest = c.userReq
	next.watermark = o.watermark
	next.fingerprint = t.est.fingerprint(t.raw[o.watermark-1])
	next.summarizedAt = t.before
	next.realTokens = 0
	next.lastEstimate = o.newEst
	next.compactions = t.prev.compactions + 1

	ev := c.ev
	ev.TokensAfter = o.newCount
	ev.Duration = time.Since(c.start)
	if n := t.irreducibleSize(o.newEst); n > t.lim.hardLimit() {
		err = irreducibleError(n, t.lim.window)
	}
	g.tel.endCompaction(t.spanCtx, c.span, ev, err)
	t.log().Info("contextguard: compacted",
		"tokens_before", ev.TokensBefore, "tokens_after", ev.TokensAfter,
		"threshold", ev.Threshold, "window", ev.Window, "strategy", ev.Strategy,
		"reason", ev.Reason, "kept_contents", len(t.req.Contents)-1,
		"summarizer_calls", ev.SummarizerCalls, "fallback", ev.Fallback,
		"duration", ev.Duration)
	// The hook runs once the session is released (fireHook).
	t.event = &ev
	return next, err
}

// summaryBudget is the length asked of a summary: about half the buffer
// (DESIGN §7), less when the irreducible part leaves less room under the
// threshold, or, when the threshold leaves less than minSummaryTokens, what
// the window leaves (possibly too little to be worth a summary).
func summaryBudget(lim limits, bare int) int {
	b := lim.buffer / 2
	if room := (lim.threshold - bare) * 8 / 10; room < b {
		b = room
	}
	if b >= minSummaryTokens {
		return b
	}
	return max(min(minSummaryTokens, (lim.window-bare)*8/10), 0)
}

// boundedUserRequest is the continuation's text: the user's current request
// (currentRequest), its attachments named, quoted in full when it fits its
// bound (continuationBound) and by head and tail beyond it, so that a request
// larger than the window still leaves room for the summary.
func boundedUserRequest(t *turn) string {
	return boundContinuation(t, continuationText(coveredRequest(t, len(t.raw))))
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

// summarize calls the agent's summarizer, bounded by the summary timeout
// even when the summarizer ignores its context (callBounded): on expiry the
// guard stops waiting and the caller takes the fallback summary. The
// session's mutex is released meanwhile (park), and the summarizer's context
// is marked, so that a call it makes back into the guard for this session
// gets ErrReentrant rather than deadlocking. A panic is turned into an error
// (logged with its stack) so the agent survives it.
func (g *ContextGuard) summarize(t *turn, req SummaryRequest) (string, error) {
	parent := context.Context(t.ctx)
	if t.spanCtx != nil {
		parent = t.spanCtx
	}
	ctx, cancel := context.WithTimeout(parent, t.cfg.summaryTimeout)
	defer cancel()
	began := time.Now()
	sum := t.cfg.summarizer // the goroutine must not capture t: it would escape
	s, err := callBounded(t.sess.park(ctx), func(ctx context.Context) (string, error) {
		return sum.Summarize(ctx, req)
	})
	t.sess.unpark()
	g.tel.summarizerCall(parent, t.cfg.name, time.Since(began))
	if err != nil && ctx.Err() != nil && parent.Err() == nil {
		err = fmt.Errorf("no summary within the summary timeout of %v: %w", t.cfg.summaryTimeout, err)
	}
	var p *panicError
	if errors.As(err, &p) {
		t.log().Error("contextguard: summarizer panicked", "panic", fmt.Sprint(p.value), "stack", string(p.stack))
		return "", fmt.Errorf("summarizer panicked: %v", p.value)
	}
	return s, err
}
