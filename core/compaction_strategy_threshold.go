package core

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
	// may take; the rest is its prompt and its answer (the earlier guard's 80%, ARCHITECTURE.md, Origins).
	summarizerInputShare = 0.80
	// promptOverheadTokens is a bound on the summary prompt's own text.
	promptOverheadTokens = 700
	// oversizeTolerance is how far past its budget a summary may run before
	// it counts as oversize.
	oversizeTolerance = 1.25
)

// compactThreshold is the threshold strategy (ARCHITECTURE.md, Strategies): summarize the
// previous summary plus everything after the watermark, replace the request's
// contents with one summary message, reset calibration and persist.
func (g *Guard) compactThreshold(t *turn, reason string) (guardState, error) {
	c, next, err := g.beginCompaction(t, StrategyThreshold, reason)
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
	// callsLeft is how many more times the summarizer may be asked for the
	// summary that goes into the request (the pieces of a rolling summary
	// are not counted: each is needed once).
	callsLeft int
	ev        CompactionEvent
	span      trace.Span
	// orig and origEst are the request's contents before compaction (the
	// stored summary injected, pruned) and its raw estimate: a compaction
	// whose result is not smaller is not applied.
	orig    []*genai.Content
	origEst int
	// input is the room of one summarizer call: what its window leaves for
	// the previous summary and the transcript (see summarizerInput).
	input summarizerInput
	// rendered caches the transcript lines of t.raw[first+i] and their
	// calibrated size, so each content is rendered and counted once per
	// compaction, however many spans and pieces it is part of.
	rendered []renderedContent
	// rolled are the pieces already summarized into a rolling summary, in
	// order: the pieces of a longer span start with the same ones.
	rolled []rolledPiece
}

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
func (g *Guard) beginCompaction(t *turn, strategy Strategy, reason string) (c *compaction, next guardState, err error) {
	c = &compaction{start: time.Now(), cov: coverableLen(t.raw), orig: t.req.Contents}
	c.origEst = requestTokens(t.est, &t.req)
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
	fixed := requestTokens(t.est, &t.req) - contentsTokens(t.est, t.req.Contents)
	rawBare := satAdd(fixed, t.est.content(summaryContent("", c.userReq, requestAttachments(coveredRequest(t, c.cov))...)))
	c.bare = t.cal.scale(rawBare)
	if n := t.irreducibleSize(rawBare); n > t.lim.hardLimit() {
		if t.prev.floor != c.bare {
			t.log().Error("contextguard: the system instruction, tools and current request alone exceed the context window; nothing the guard can cut will make the request fit",
				"irreducible_tokens", c.bare, "threshold", t.lim.threshold, "window", t.lim.window)
		}
		next.floor = c.bare
		next.lastEstimate = requestTokens(t.est, &t.req)
		return nil, next, irreducibleError(n, t.lim.window)
	}
	if c.cov == c.first && c.prevSummary == "" {
		next.lastEstimate = requestTokens(t.est, &t.req)
		if n := t.irreducibleSize(next.lastEstimate); n > t.lim.hardLimit() {
			// Only adapter continuations, which a summary may not cover:
			// say so rather than send a request known not to fit.
			t.log().Error("contextguard: the request exceeds the context window and holds nothing the guard can summarize",
				"tokens", n, "window", t.lim.window)
			return nil, next, irreducibleError(n, t.lim.window)
		}
		return nil, next, nil
	}

	c.budget = summaryBudget(t.lim, c.bare, t.cfg.summaryTokens)
	if c.budget < minSummaryTokens {
		next, err = trimToCurrentRequest(t, next)
		return nil, next, err
	}
	t.sumWindow = g.summarizerWindow(t)
	c.input = newSummarizerInput(t, c.prevSummary, c.budget)
	c.rendered = make([]renderedContent, c.cov-c.first)
	c.todos = loadTodos(t.ro)
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
	_, start := currentRequest(t.ctx.UserContent(), t.raw)
	if start < 0 {
		start = len(t.raw) - 1
	}
	start = pairSafeStart(t.raw, max(start, 0))
	t.req.Contents = t.raw[start:]
	est := requestTokens(t.est, &t.req)
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
func (g *Guard) fullSummary(t *turn, c *compaction) outcome {
	o := g.summarizeSpan(t, c, c.cov, true, func(summary string) {
		t.req.Contents = []*genai.Content{summaryMessage(t, summary, c.userReq, coveredRequest(t, c.cov))}
	})
	o.watermark = max(c.cov, 1)
	return o
}

// summaryFreshShare is the share of what a compaction frees beyond the
// previous summary (the summarized contents, less the summary message's own
// header and continuation) that the new summary may take on top of the
// previous summary's length. The other half is what the request shrinks by
// at least, when the summarizer keeps to the length asked; without this
// bound a turn-triggered sliding-window compaction asks for half the buffer
// (3,200 tokens at 32k) for a span that can weigh 2,048, and the request
// grows.
const summaryFreshShare = 0.5

// spanBudget is the length asked of the summary of t.raw[c.first:end]: the
// compaction's budget (summaryBudget), bounded by what replacing that span
// frees (summaryFreshShare), never below minSummaryTokens/2. build is how
// the strategy rewrites the request; it is called with an empty summary to
// weigh the summary message's own header and continuation.
func spanBudget(t *turn, c *compaction, build func(summary string)) int {
	build("")
	freed := t.cal.scale(c.origEst - requestTokens(t.est, &t.req))
	prev := t.cal.scale(t.est.text(c.prevSummary))
	b := prev + int(float64(max(freed-prev, 0))*summaryFreshShare)
	return min(c.budget, max(b, minSummaryTokens/2))
}

// summarizeSpan asks the summarizer for a summary of the previous summary
// plus t.raw[c.first:end], calls build with it to rewrite the request, and
// counts the result.
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
// summary, as does any other failure (error, empty text, deadline, panic).
// Once the fallback was used the summarizer is not asked again during this
// compaction.
func (g *Guard) summarizeSpan(t *turn, c *compaction, end int, shorter bool, build func(summary string)) outcome {
	span := t.raw[c.first:end]
	c.ev.ContentsSummarized = len(span)
	budget := spanBudget(t, c, build)
	// asked is the summary's length in the calibrated measure; the
	// summarizer is told it in its own (calibration.unscale).
	asked := min(budget, c.input.answer)
	sreq := SummaryRequest{
		Agent:        t.cfg.name,
		UserRequest:  c.userReq,
		Todos:        c.todos,
		MaxTokens:    t.cal.unscale(asked),
		Instructions: t.summaryInstructions(),
	}
	if !c.ev.Fallback {
		var from int
		sreq.PreviousSummary, sreq.Transcript, from = g.rollUp(t, c, sreq, end)
		sreq.Contents = t.raw[from:end]
	}

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
			}
		}
		if reason != "" {
			t.log().Warn("contextguard: summarizer failed; using the fallback summary", "fallback_reason", reason,
				"summarizer_model", summarizerModel(t.cfg.summarizer), "attempt", c.ev.SummarizerCalls)
			c.ev.Fallback, c.ev.FallbackReason = true, reason
		}
		if c.ev.Fallback {
			s = fallbackSummary(t.est, t.cal, c.prevSummary, span, c.todos, budget)
		}
		o.summary = s
		build(s)
		o.newEst = requestTokens(t.est, &t.req)
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
			reason = "summary of " + strconv.Itoa(have) + " tokens exceeds its budget of " + strconv.Itoa(asked) +
				" and the request would not fit under the threshold"
			t.log().Warn("contextguard: summarizer failed; using the fallback summary", "fallback_reason", reason,
				"summarizer_model", summarizerModel(t.cfg.summarizer), "attempt", c.ev.SummarizerCalls)
			c.ev.Fallback, c.ev.FallbackReason = true, reason
			continue
		case shorter && canHelp:
			// The summary kept to its length but the request is still
			// over the threshold: a shorter one can make it fit.
		default:
			return o
		}
		asked = target
		sreq.MaxTokens = t.cal.unscale(asked)
	}
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
	sreq.MaxTokens = t.cal.unscale(c.input.answer)
	for {
		pieceEnd, text, shown := nextPiece(t, c, prev, from, end)
		if pieceEnd >= end {
			return shown, text, from
		}
		sreq.PreviousSummary, sreq.Transcript, sreq.Contents = shown, text, t.raw[from:pieceEnd]
		s, err := g.summarize(t, sreq)
		c.ev.SummarizerCalls++
		c.ev.RollingCalls++
		reason := ""
		switch {
		case err != nil:
			reason = err.Error()
		case strings.TrimSpace(s) == "":
			reason = "empty summary"
		}
		if reason != "" {
			t.log().Warn("contextguard: summarizer failed; using the fallback summary", "fallback_reason", reason,
				"summarizer_model", summarizerModel(t.cfg.summarizer), "attempt", c.ev.SummarizerCalls, "rolling_piece", len(c.rolled)+1)
			c.ev.Fallback, c.ev.FallbackReason = true, reason
			return "", "", from
		}
		t.log().Debug("contextguard: the span does not fit one summarizer input; summarized a piece of it",
			"rolling_piece", len(c.rolled)+1, "contents_summarized", pieceEnd-from, "remaining_contents", end-pieceEnd)
		c.rolled = append(c.rolled, rolledPiece{end: pieceEnd, summary: s})
		prev, from = s, pieceEnd
	}
}

// finishCompaction records the outcome: the irreducible floor, the state to
// persist, the event (for the hook), the span and the log line.
//
// A compaction whose request is not smaller than the request before it is
// not applied (discardCompaction).
func (g *Guard) finishCompaction(t *turn, c *compaction, o outcome) (next guardState, err error) {
	// Compared in the calibrated measure, with the provider's count of the
	// request before as its floor (t.before): a provider that charges
	// attachments far above their estimate has said how large the request
	// really was.
	if o.newCount >= t.before {
		return g.discardCompaction(t, c, o)
	}
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
	next.anchor = anchorAt(t.req.Coverage, t.raw, o.watermark)
	next.summarizedAt = t.before
	next.realTokens = 0
	next.lastEstimate = o.newEst
	next.compactions = t.prev.compactions + 1
	stampCompaction(t, &next, c.ev.Reason)

	ev := c.ev
	ev.TokensAfter = o.newCount
	ev.Summary = o.summary
	ev.Duration = time.Since(c.start)
	if n := t.irreducibleSize(o.newEst); n > t.lim.hardLimit() {
		err = irreducibleError(n, t.lim.window)
	}
	g.tel.endCompaction(t.spanCtx, c.span, ev, err)
	t.log().Info("contextguard: compacted",
		"tokens_before", ev.TokensBefore, "tokens_after", ev.TokensAfter,
		"threshold", ev.Threshold, "window", ev.Window, "strategy", ev.Strategy,
		"reason", ev.Reason, "contents_summarized", ev.ContentsSummarized, "kept_contents", len(t.req.Contents)-1,
		"summarizer_model", summarizerModel(t.cfg.summarizer), "summarizer_calls", ev.SummarizerCalls,
		"rolling_calls", ev.RollingCalls, "fallback", ev.Fallback, "duration_ms", ev.Duration.Milliseconds())
	// The hook runs once the session is released (fireHook).
	t.event = &ev
	return next, err
}

// discardCompaction handles a compaction whose request came out no smaller
// than the request before it (a summary about as long as what it replaces):
// applying it would only make the request grow, so the request is sent as it
// was, nothing is stored, and the size it came out at is kept as the floor,
// so the guard compacts again only once the request has grown past it (the
// token trigger then waits for half the room left, see decide; the turn
// trigger for the request to outgrow the floor, see slidingTurnsDue). It is
// logged once until a compaction is applied.
func (g *Guard) discardCompaction(t *turn, c *compaction, o outcome) (guardState, error) {
	t.req.Contents = c.orig
	next := t.prev
	next.lastEstimate = c.origEst
	next.floor = max(o.newCount, t.before)
	if t.prev.floor == 0 {
		msg := "contextguard: the compacted request is not smaller than the request; sending the request as it is and compacting again once it has grown"
		if o.newCount > t.lim.threshold {
			msg = "contextguard: the request is still over the threshold and compacting does not make it smaller; its irreducible part is too large, so the guard sends it as it is and will not compact again until the conversation grows"
		}
		t.log().Warn(msg, "tokens_before", t.before, "tokens_after", o.newCount, "threshold", t.lim.threshold,
			"window", t.lim.window, "strategy", c.ev.Strategy, "reason", c.ev.Reason,
			"summarizer_model", summarizerModel(t.cfg.summarizer), "summarizer_calls", c.ev.SummarizerCalls)
	}
	ev := c.ev
	ev.Discarded = true
	ev.TokensAfter = t.before
	ev.Duration = time.Since(c.start)
	var err error
	if n := t.irreducibleSize(c.origEst); n > t.lim.hardLimit() {
		err = irreducibleError(n, t.lim.window)
	}
	g.tel.endCompaction(t.spanCtx, c.span, ev, err)
	t.event = &ev
	return next, err
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

// summarizerWindow is the window of the model that writes the summary:
// WithSummarizerWindow's, else the agent's own when it is the same model (or
// a custom Summarizer), else the registry's; a model the registry does not
// know gets DefaultContextWindow, with a warning once per agent and model
// that names WithSummarizerWindow.
func (g *Guard) summarizerWindow(t *turn) int {
	if t.cfg.summarizerWindow > 0 {
		return t.cfg.summarizerWindow
	}
	s, ok := t.cfg.summarizer.(ModelNamer)
	if !ok {
		return t.lim.window
	}
	name, ok := s.ModelName()
	if !ok || name == t.req.Model {
		return t.lim.window
	}
	if w, known := g.knownWindow(name); known {
		return w
	}
	if _, seen := g.triggerWarned.LoadOrStore("summarizer\x00"+t.cfg.name+"\x00"+name, true); !seen {
		t.log().Warn("contextguard: the summarizer's model is unknown; assuming the default context window for it (set WithSummarizerWindow to override)",
			"summarizer_model", name, "window", DefaultContextWindow)
	}
	return DefaultContextWindow
}

// knownWindow is the registry's window for model, and whether the registry
// knows the model, without the registry's own warning about unknown
// models (which names the agent's option, WithMaxTokens).
func (g *Guard) knownWindow(model string) (int, bool) {
	if r, ok := g.registry.(*crushRegistry); ok {
		info, ok := r.find(model)
		return info.ContextWindow, ok
	}
	w := g.registry.ContextWindow(model)
	return w, w > 0
}

// summarizerInput is the room of one summarizer call, in calibrated tokens:
// answer is the longest summary it is asked for (the compaction's budget,
// at most summarizerAnswerShare of its window); budget is what its window
// leaves for the previous summary and the transcript (summarizerInputShare
// of it, or less when the room reserved for the answer needs more, less the
// prompt's own text), of which the previous summary may take half; lim bounds the excerpts of the transcript, scaled
// to what the compaction's previous summary leaves.
type summarizerInput struct {
	answer int
	budget int
	lim    excerptLimits
}

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

// newSummarizerInput is the room of one call to the turn's summarizer.
func newSummarizerInput(t *turn, prev string, summaryTokens int) summarizerInput {
	w := t.guardSummarizerWindow()
	answer := max(min(summaryTokens, int(float64(w)*summarizerAnswerShare)), minSummaryTokens/2)
	// The answer's room is what the call reserves for it (MaxOutputTokens,
	// twice the length asked), which some providers count against the
	// window; the input share keeps the estimate's margin.
	budget := min(int(float64(w)*summarizerInputShare), w-2*answer) - promptOverheadTokens
	in := summarizerInput{answer: answer, budget: max(budget, minSummarizerInput)}
	remaining := in.budget - t.cal.scale(t.est.text(in.boundPrev(t, prev)))
	in.lim = limitsForBudget(remaining * 3)
	return in
}

// boundPrev bounds a previous summary to about half the input, cutting its
// middle.
func (in summarizerInput) boundPrev(t *turn, prev string) string {
	if t.cal.scale(t.est.text(prev)) > in.budget/2 {
		return truncateMiddle(prev, in.budget*3/2)
	}
	return prev
}

// render returns the transcript lines of t.raw[i] and their calibrated size,
// rendering each content once per compaction.
func (c *compaction) render(t *turn, i int) renderedContent {
	r := &c.rendered[i-c.first]
	if !r.ok {
		r.text = renderContent(t.raw[i], c.input.lim)
		r.tokens = t.cal.scale(t.est.text(r.text))
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
func nextPiece(t *turn, c *compaction, prev string, from, end int) (pieceEnd int, transcript, shown string) {
	shown = c.input.boundPrev(t, prev)
	room := c.input.budget - t.cal.scale(t.est.text(shown))
	var b strings.Builder
	i := from
	for ; i < end; i++ {
		r := c.render(t, i)
		if r.tokens > room {
			break
		}
		b.WriteString(r.text)
		room -= r.tokens
	}
	if i > from || from >= end {
		return i, b.String(), shown
	}
	r := c.render(t, from)
	note := fmt.Sprintf("[message %d of this conversation is larger than the summarizer's window: only its head and tail are shown]\n", from+1)
	return from + 1, note + excerptToFit(t, r.text, room-t.cal.scale(t.est.text(note))), shown
}

// excerptToFit cuts s to a head and tail excerpt of at most about n
// calibrated tokens (minExcerptBytes at least, so something of it shows).
func excerptToFit(t *turn, s string, n int) string {
	const minExcerptBytes = 200
	for bytes := max(n*3, minExcerptBytes); ; bytes = bytes * 3 / 4 {
		cut := truncateMiddle(s, max(bytes, minExcerptBytes))
		if bytes <= minExcerptBytes || t.cal.scale(t.est.text(cut)) <= n {
			return cut
		}
	}
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
// even when the summarizer ignores its context (CallBounded): on expiry the
// guard stops waiting and the caller takes the fallback summary. The
// session's mutex is released meanwhile (park), and the summarizer's context
// is marked, so that a call it makes back into the guard for this session
// gets ErrReentrant rather than deadlocking. A panic is turned into an error
// (logged with its stack) so the agent survives it.
func (g *Guard) summarize(t *turn, req SummaryRequest) (string, error) {
	parent := context.Context(t.ctx)
	if t.spanCtx != nil {
		parent = t.spanCtx
	}
	ctx, cancel := context.WithTimeout(parent, t.cfg.summaryTimeout)
	defer cancel()
	began := time.Now()
	sum := t.cfg.summarizer // the goroutine must not capture t: it would escape
	s, err := CallBounded(t.sess.park(ctx), func(ctx context.Context) (string, error) {
		return sum.Summarize(ctx, req)
	})
	t.sess.unpark()
	g.tel.summarizerCall(parent, t.cfg.name, time.Since(began))
	if err != nil && ctx.Err() != nil && parent.Err() == nil {
		err = fmt.Errorf("no summary within the summary timeout of %v: %w", t.cfg.summaryTimeout, err)
	}
	var p *PanicError
	if errors.As(err, &p) {
		t.log().Error("contextguard: summarizer panicked", "summarizer_model", summarizerModel(t.cfg.summarizer),
			"panic", fmt.Sprint(p.Value), "stack", string(p.Stack))
		return "", fmt.Errorf("summarizer panicked: %v", p.Value)
	}
	return s, err
}
