package core

import (
	"time"

	"go.opentelemetry.io/otel/trace"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/convo"
	"github.com/adk-contextguard/contextguard/core/internal/pairs"
	"github.com/adk-contextguard/contextguard/core/internal/sat"
)

// The compaction every strategy shares: its start (the span, the budget,
// the hook), its one loop (compact), its end (applied, or discarded when
// not smaller), and the trim to the current request.

// compactionStrategy is how an agent's conversation is compacted
// (ARCHITECTURE.md, Strategies): when to compact beyond the token trigger,
// and which verbatim suffixes of the request to try keeping beside the
// summary. Every strategy runs the same loop (compact).
//
// A strategy can only keep a verbatim suffix. The stored state names one
// watermark: the summary covers the raw contents before it, and every
// later call sends the contents from the watermark on exactly as ADK built
// them (summary injection). A content kept verbatim before a summarized one
// could not be told apart from what the summary covers, so a strategy
// chooses where the kept suffix starts, never what it holds.
type compactionStrategy interface {
	// name is the strategy's name in events, logs and spans.
	name() Strategy
	// due reports whether a compaction is due although the request is
	// under the token trigger: its reason ("" for none) and what the log
	// line says about it.
	due(t *turn, cs []*genai.Content) (reason string, why []any)
	// suffixes are the starts in t.raw of the verbatim suffixes to try
	// keeping, in order (each pair-safe and after c.first); the loop
	// summarizes everything when none fits.
	suffixes(t *turn, c *compaction, reason string) []int
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
	// no contents, and rawBare its raw estimate; budget is the length asked
	// of a summary.
	bare, rawBare, budget int
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
	// noCached stops the cached form after a call in it failed, and
	// retryTranscript asks the span to prepare the transcript form for a
	// retry (requestSummary); cachedMissLogged marks the log line of a
	// request too large for the cached form (summarizer_cached.go).
	noCached, retryTranscript, cachedMissLogged bool
	// previous is the request the provider saw last, once looked up
	// (summarizer_cached_previous.go).
	previous previousRequest
	// summarizing is how long a prepared summary took before the call
	// waited for it (prepared_use.go), 0 inline.
	summarizing time.Duration
	// unapplied is the state stored when the request goes out as it came
	// (orig); an applied compaction builds on it (compactedState).
	unapplied guardState
}

// outcome is what a strategy made of a compaction.
type outcome struct {
	// contents are the request's contents with the summary.
	contents []*genai.Content
	summary  string
	// watermark is how many leading raw contents the summary covers.
	watermark int
	// newEst and newCount are the raw and calibrated size of the request
	// as rewritten.
	newEst, newCount int
}

// beginCompaction does what every compaction starts with: it finds what may
// be summarized in cs (the contents so far) and the irreducible part of the
// request, and opens the span. A nil compaction means there is nothing to
// compact, or that nothing can help (its error then wraps ErrIrreducible);
// the step is then the result. next is the state of cs sent as it is.
func (g *Guard) beginCompaction(t *turn, cs []*genai.Content, next guardState, strategy Strategy, reason string) (*compaction, step) {
	if p := t.sess.prepared.Load(); p != nil && p.agent == t.cfg.name {
		t.sess.dropPrepared(t.ctx, "another compaction came first")
	}
	c := newCompaction(t, cs, next, g.clock.Now())
	if done, stop := c.nothingToDo(t); stop {
		return nil, done
	}
	c.budget = summaryBudget(t.lim, c.bare, t.cfg.summaryTokens)
	if c.budget < minSummaryTokens {
		return nil, trimToCurrentRequest(t, next)
	}
	t.sumWindow = g.summarizerWindow(t)
	c.todos = loadTodos(t.ro)
	c.input = newSummarizerInput(t, c.prevSummary, c.budget, c.todos, c.userReq)
	c.rendered = make([]renderedContent, c.cov-c.first)
	c.callsLeft = t.cfg.maxAttempts
	g.openCompaction(t, c, strategy, reason)
	return c, step{contents: cs, next: next}
}

// newCompaction is the compaction of cs, the request's contents so far,
// whose state sent as they are is next, begun at start: the span a summary may cover (from the injected
// summary's cut to the last coverable content), the user's request as the
// continuation quotes it, and the irreducible part (bare): the system
// instruction, the tools and the message that carries the continuation,
// calibrated.
func newCompaction(t *turn, cs []*genai.Content, next guardState, start time.Time) *compaction {
	c := &compaction{start: start, cov: convo.CoverableLen(t.raw), orig: cs, unapplied: next}
	c.origEst = t.weigh(cs)
	if t.inj.injected {
		c.first = t.inj.cut
		c.prevSummary = t.prev.summary
	}
	c.first = min(c.first, c.cov)
	c.userReq = boundedUserRequest(t)
	c.rawBare = sat.Add(t.fixed, t.est.content(summaryContent("", c.userReq, convo.RequestAttachments(coveredRequest(t, c.cov))...)))
	c.bare = t.cal.scale(c.rawBare)
	return c
}

// nothingToDo reports whether no summary can help the request (stop), with
// the step to take instead: the request as it is (c.orig), with an error
// when it is known not to fit.
//
// The irreducible part is refused only when it exceeds the window by more
// than the estimate's error margin: the smallest request the guard can make
// is worth sending while it may fit; the provider is the last judge, and an
// overflow it reports is recovered. The refusal is decided on the raw
// estimate plus its margin, never on a calibration factor (calibration.go).
// A request with nothing to summarize (only adapter continuations, which a
// summary may not cover) is refused when it is known not to fit, rather
// than sent.
func (c *compaction) nothingToDo(t *turn) (step, bool) {
	done := step{contents: c.orig, next: c.unapplied}
	if n := t.irreducibleSize(c.rawBare); n > t.lim.hardLimit() {
		if t.prev.floor != c.bare {
			t.log().Error("contextguard: the system instruction, tools and current request alone exceed the context window; nothing the guard can cut will make the request fit",
				"irreducible_tokens", c.bare, "threshold", t.lim.threshold, "window", t.lim.window)
		}
		done.next.floor = c.bare
		done.next.lastEstimate = c.origEst
		done.err = irreducibleError(n, t.lim.window)
		return done, true
	}
	if c.cov != c.first || c.prevSummary != "" {
		return done, false
	}
	done.next.lastEstimate = c.origEst
	if n := t.irreducibleSize(c.origEst); n > t.lim.hardLimit() {
		t.log().Error("contextguard: the request exceeds the context window and holds nothing the guard can summarize",
			"tokens", n, "window", t.lim.window)
		done.err = irreducibleError(n, t.lim.window)
	}
	return done, true
}

// openCompaction opens the compaction's span and starts its event: who,
// why, the counts before, how it runs and, for one that runs inline for
// tokens, why it could not use a prepared summary.
func (g *Guard) openCompaction(t *turn, c *compaction, strategy Strategy, reason string) {
	t.spanCtx, c.span = g.tel.startCompaction(t.ctx, t.cfg.name, t.ctx.SessionID(), strategy)
	c.ev = CompactionEvent{
		Agent:        t.cfg.name,
		SessionID:    t.ctx.SessionID(),
		Strategy:     strategy,
		Reason:       reason,
		TokensBefore: t.before,
		Threshold:    t.lim.threshold,
		Window:       t.lim.window,
		Ran:          t.betweenTurns.ran(),
		InlineReason: t.inlineReason(reason, c.bare),
	}
	c.ev.PrefixKeptTokens, c.ev.InvalidatedTokens = compactionKept(t.measure, &t.prefix, t.prev.lastEstimate)
}

// compact is the one compaction loop, for every strategy: it tries to keep
// each verbatim suffix the strategy offers beside a summary of what comes
// before it, and takes the first whose request fits under the threshold;
// when none does, it summarizes everything. Candidate contents are weighed
// as values, never sent, until one is chosen. Any summarizer fault takes
// the deterministic fallback summary, never the raw history.
func (g *Guard) compact(t *turn, cs []*genai.Content, next guardState, s compactionStrategy, reason string) step {
	c, done := g.beginCompaction(t, cs, next, s.name(), reason)
	if c == nil {
		return done
	}
	return g.compactWith(t, c, s, reason)
}

// compactWith is compact's loop over a compaction already begun.
func (g *Guard) compactWith(t *turn, c *compaction, s compactionStrategy, reason string) step {
	for _, split := range withPreviousSplit(t, c, s.suffixes(t, c, reason)) {
		tail := t.raw[split:]
		o := g.summarizeSpan(t, c, split, false, func(summary string) []*genai.Content {
			return keptTail(t, c, split, summary)
		})
		if o.newCount <= t.lim.threshold {
			o.watermark = split
			return g.finishCompaction(t, c, o)
		}
		t.log().Info("contextguard: the kept turns do not fit beside the summary; keeping fewer",
			"tokens_after", o.newCount, "threshold", t.lim.threshold, "window", t.lim.window, "kept_contents", len(tail))
	}
	return g.finishCompaction(t, c, g.fullSummary(t, c))
}

// keptTail is the request's contents with summary covering t.raw[:split]
// and the contents from split on kept verbatim, pruned.
func keptTail(t *turn, c *compaction, split int, summary string) []*genai.Content {
	tail := t.raw[split:]
	out := make([]*genai.Content, 0, len(tail)+1)
	out = append(out, summaryMessage(t, summary, c.userReq, coveredRequest(t, split)))
	out = append(out, tail...)
	out, _ = pruneToolResults(t.est, t.cfg.pruneKeep, t.recall, t.raw, out)
	return out
}

// fullSummary summarizes everything the compaction may cover and makes the
// summary message the request's only content.
func (g *Guard) fullSummary(t *turn, c *compaction) outcome {
	o := g.summarizeSpan(t, c, c.cov, true, func(summary string) []*genai.Content {
		return []*genai.Content{summaryMessage(t, summary, c.userReq, coveredRequest(t, c.cov))}
	})
	o.watermark = max(c.cov, 1)
	return o
}

// trimToCurrentRequest handles a request whose irreducible part leaves no
// room for a summary worth asking for (the system instruction and tools
// nearly fill the window): it sends the newest contents from the user's
// current request on, verbatim and pair-safe, which is the smallest request
// that still carries the task; no summary is paid for or stored, and the
// next call over the trigger trims again. It is logged once per session;
// next is the state of the request before the trim.
func trimToCurrentRequest(t *turn, next guardState) step {
	_, start := convo.CurrentRequest(t.ctx.UserContent(), t.raw)
	if start < 0 {
		start = len(t.raw) - 1
	}
	start = pairs.SafeStart(t.raw, max(start, 0))
	cs := t.raw[start:]
	est := t.weigh(cs)
	if mem := t.sess.memory(t.cfg.name); !mem.trimmed {
		mem.trimmed = true
		t.log().Warn("contextguard: the system instruction and tools leave no room for a summary; sending only the newest contents from the user's current request on",
			"tokens_after", t.cal.scale(est), "threshold", t.lim.threshold, "window", t.lim.window, "kept_contents", len(cs))
	}
	next.floor = 0
	next.realTokens = 0
	next.lastEstimate = est
	next.prefixKept, next.invalidated = prefixKept(t.measure, &t.prefix, t.prev.lastEstimate, cs, est, 0)
	s := step{contents: cs, next: next}
	if n := t.irreducibleSize(est); n > t.lim.hardLimit() {
		s.err = irreducibleError(n, t.lim.window)
	}
	return s
}

// finishCompaction records the outcome: the irreducible floor, the state to
// persist, the event (for the hook), the span and the log line.
//
// A compaction whose request is not smaller than the request before it is
// not applied (discardCompaction).
func (g *Guard) finishCompaction(t *turn, c *compaction, o outcome) step {
	// Compared in the calibrated measure, with the provider's count of the
	// request before as its floor (t.before): a provider that charges
	// attachments far above their estimate has said how large the request
	// really was.
	if o.newCount >= t.before {
		return g.discardCompaction(t, c, o)
	}
	next := compactedState(t, c, o)
	ev, err := g.reportCompaction(t, c, o)
	// The hook runs once the session is released (fireHook).
	return step{contents: o.contents, next: next, event: &ev, err: err}
}

// compactedState is the state a compaction stores: its summary and
// watermark, what the request it makes counts, and the floor a request
// still over the threshold leaves.
func compactedState(t *turn, c *compaction, o outcome) guardState {
	next := c.unapplied
	// A prepared summary's request past the trigger holds the step the
	// summary kept verbatim, not a part no summary can shrink: it sets no
	// floor, and the next request compacts again (preparedFits).
	if o.newCount > t.lim.threshold && !c.ev.Prepared {
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
	next.pruneFrontier = pruneFrontier(t.cfg.pruneKeep, t.raw) // as compact pruned the kept contents
	next.prefixKept, next.invalidated = c.ev.PrefixKeptTokens, c.ev.InvalidatedTokens
	stampCompaction(t.cfg.host.Now(t.ctx), &next, c.ev.Reason)
	return next
}

// reportCompaction completes the compaction's event with its outcome, ends
// its span and writes the "compacted" log line. err wraps ErrIrreducible
// when the request it makes is still known not to fit.
func (g *Guard) reportCompaction(t *turn, c *compaction, o outcome) (CompactionEvent, error) {
	ev := c.ev
	ev.TokensAfter = o.newCount
	ev.Summary = o.summary
	ev.Duration = g.clock.Now().Sub(c.start)
	if ev.Prepared {
		// Waited is what the call waited for (compactPrepared).
		ev.Duration += c.summarizing
	} else {
		ev.Waited = t.betweenTurns.waited(ev.Duration)
	}
	var err error
	if n := t.irreducibleSize(o.newEst); n > t.lim.hardLimit() {
		err = irreducibleError(n, t.lim.window)
	}
	g.tel.endCompaction(t.spanCtx, c.span, ev, err)
	t.log().Info("contextguard: compacted",
		"tokens_before", ev.TokensBefore, "tokens_after", ev.TokensAfter,
		"threshold", ev.Threshold, "window", ev.Window, "strategy", ev.Strategy,
		"reason", ev.Reason, "contents_summarized", ev.ContentsSummarized, "kept_contents", len(o.contents)-1,
		"summarizer_model", summarizerModel(t.cfg.summarizer), "summarizer_calls", ev.SummarizerCalls,
		"rolling_calls", ev.RollingCalls, "summary_form", ev.SummaryForm, "fallback", ev.Fallback, "duration_ms", ev.Duration.Milliseconds(),
		"ran", ev.Ran, "prepared", ev.Prepared, "waited_ms", ev.Waited.Milliseconds(), "inline_reason", ev.InlineReason,
		"prefix_kept_tokens", ev.PrefixKeptTokens, "invalidated_tokens", ev.InvalidatedTokens)
	return ev, err
}

// discardCompaction handles a compaction whose request came out no smaller
// than the request before it (a summary about as long as what it replaces):
// applying it would only make the request grow, so the request is sent as it
// was, nothing is stored, and the size it came out at is kept as the floor,
// so the guard compacts again only once the request has grown past it (the
// token trigger then waits for half the room left, see decide; the turn
// trigger for the request to outgrow the floor, see slidingWindow.turnsDue). It is
// logged once until a compaction is applied.
func (g *Guard) discardCompaction(t *turn, c *compaction, o outcome) step {
	next := c.unapplied
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
	ev.PrefixKeptTokens, ev.InvalidatedTokens = next.prefixKept, next.invalidated
	ev.Duration = g.clock.Now().Sub(c.start)
	ev.Waited = t.betweenTurns.waited(ev.Duration)
	var err error
	if n := t.irreducibleSize(c.origEst); n > t.lim.hardLimit() {
		err = irreducibleError(n, t.lim.window)
	}
	g.tel.endCompaction(t.spanCtx, c.span, ev, err)
	return step{contents: c.orig, next: next, event: &ev, err: err}
}
