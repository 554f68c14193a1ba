package core

import (
	"context"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/trace"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/convo"
	"github.com/adk-contextguard/contextguard/core/internal/countcache"
	"github.com/adk-contextguard/contextguard/core/internal/pairs"
	"github.com/adk-contextguard/contextguard/core/internal/sat"
	"github.com/adk-contextguard/contextguard/core/internal/state"
	"github.com/adk-contextguard/contextguard/core/internal/window"
)

// The compaction every strategy shares: its start, its one loop (compact),
// the trim to the current request, and the compaction from a prepared
// summary (compactPrepared); its end is in compaction_end.go.

// compactionStrategy is how an agent's conversation is compacted
// (ARCHITECTURE.md, Strategies): when to compact beyond the token trigger,
// and which verbatim suffixes to keep beside the summary. Only a suffix:
// the state names one watermark, after which calls send the raw contents.
type compactionStrategy interface {
	// name is the strategy's name in events, logs and spans.
	name() Strategy
	// due reports whether a compaction is due although the request is
	// under the token trigger: its reason ("" for none) and what the log
	// line says about it.
	due(v callView, cs []*genai.Content) (reason string, why []any)
	// suffixes are the starts in c.raw of the verbatim suffixes to try
	// keeping, in order (each pair-safe and after c.first); the loop
	// summarizes everything when none fits.
	suffixes(c *compaction, reason string) []int
}

// callView is what a strategy and a compaction read of the call.
type callView struct {
	measure
	lim          window.Limits
	inj          injection
	before       int
	floor        int
	betweenTurns afterRun
	user         *genai.Content
}

func viewOf(t *turn) callView {
	v := callView{measure: t.measure, lim: t.lim, inj: t.inj, before: t.before, floor: t.prev.Floor, betweenTurns: t.betweenTurns}
	if t.ctx != nil {
		v.user = t.ctx.UserContent()
	}
	return v
}

// compaction is one compaction in progress: what it took of its call when
// it began (newCompaction), and what it has found so far.
type compaction struct {
	callView
	// sess is parked around the summarizer and holds the summary message's memo.
	cfg   *Agent
	req   Request
	call  Call
	sess  *sessionEntry
	log   *slog.Logger
	clock Clock
	tel   *telemetry
	// spanCtx carries the compaction's span to the summarizer call.
	spanCtx   context.Context
	sumWindow int
	// rejected: recovery from the provider's rejection of this request;
	// recall: the request declares the recall tool.
	rejected, recall bool
	compactions      int
	prefix           prefixMatch
	frontier         int

	start time.Time
	// first and cov bound the contents a summary made now may cover:
	// raw[first:cov] (first is the injected summary's cut).
	first, cov int
	// prevSummary is the stored summary when it was injected, else "".
	prevSummary string
	userReq     string
	todos       []TodoItem
	// bare is the calibrated size of the request with an empty summary and
	// no contents (rawBare: raw); budget is the length asked of a summary.
	bare, rawBare, budget int
	// callsLeft is how many more times the summarizer may be asked for the
	// request's summary (a rolling summary's pieces are not counted).
	callsLeft int
	ev        CompactionEvent
	span      trace.Span
	// orig and origEst are the request's contents before compaction and its
	// raw estimate: a compaction whose result is not smaller is not applied.
	orig    []*genai.Content
	origEst int
	input   summarizerInput // the room of one summarizer call
	// rendered caches the transcript lines of raw[first+i] and their size,
	// so each content is rendered and counted once per compaction.
	rendered []renderedContent
	// rolled are the pieces already summarized into a rolling summary, in
	// order: the pieces of a longer span start with the same ones.
	rolled []rolledPiece
	// noCached stops the cached form after a call in it failed, and
	// retryTranscript asks for the transcript form on a retry.
	noCached, retryTranscript, cachedMissLogged bool
	previous                                    previousRequest // lastRequest's memo
	// summarizing is how long a prepared summary took before the call
	// waited for it (compactPrepared), 0 inline.
	summarizing time.Duration
	// unapplied is the state stored when the request goes out as it came
	// (orig); an applied compaction builds on it (compactedState).
	unapplied state.Agent
}

// outcome is what a strategy made of a compaction.
type outcome struct {
	contents  []*genai.Content // the request's contents with the summary
	summary   string
	watermark int // leading raw contents the summary covers
	// newEst and newCount are the raw and calibrated size of the request.
	newEst, newCount int
}

// beginCompaction finds what may be summarized in cs and the irreducible
// part of the request, and opens the span. A nil compaction means nothing
// to compact or nothing can help (its error then wraps ErrIrreducible); the
// step is then the result. next is the state of cs sent as it is.
func (g *Guard) beginCompaction(t *turn, cs []*genai.Content, next state.Agent, strategy Strategy, reason string) (*compaction, step) {
	if p := t.sess.prepared.Load(); p != nil && p.agent == t.cfg.name {
		t.sess.dropPrepared(t.ctx, "another compaction came first")
	}
	c := newCompaction(t, cs, next, g.clock.Now())
	if done, stop := c.nothingToDo(); stop {
		return nil, done
	}
	c.budget = summaryBudget(c.lim, c.bare, c.cfg.summaryTokens)
	if c.budget < minSummaryTokens {
		return nil, trimToCurrentRequest(t, next)
	}
	c.clock, c.tel = g.clock, g.tel
	c.sumWindow = g.summarizerWindow(c.cfg, c.req.Model, c.lim.Window, c.log)
	c.todos = loadTodos(t.ro)
	c.input = newSummarizerInput(c.measure, c.log, c.sumWindow, c.budget, c.prevSummary, extraParts{
		instructions: c.cfg.instructions, focus: t.focus, hook: t.hookInstructions, userRequest: c.userReq, todos: c.todos})
	c.rendered = make([]renderedContent, c.cov-c.first)
	c.callsLeft = c.cfg.maxAttempts
	c.open(strategy, reason)
	c.ev.InlineReason = t.inlineReason(reason, c.bare)
	c.ev.PrefixKeptTokens, c.ev.InvalidatedTokens = compactionKept(t.measure, &t.prefix, t.prev.LastEstimate)
	return c, step{contents: cs, next: next}
}

// newCompaction is the compaction of cs, whose state sent as they are is
// next: the span a summary may cover, the user's request as the
// continuation quotes it, and the irreducible part (bare).
func newCompaction(t *turn, cs []*genai.Content, next state.Agent, start time.Time) *compaction {
	c := &compaction{callView: viewOf(t), cfg: t.cfg, req: t.req, call: t.ctx, sess: t.sess, log: t.log(),
		rejected: t.rejected, recall: t.recall, compactions: t.prev.Compactions, prefix: t.prefix, frontier: t.frontier,
		start: start, cov: convo.CoverableLen(t.Raw), orig: cs, unapplied: next}
	c.origEst = c.Weigh(cs)
	if c.inj.injected {
		c.first = c.inj.cut
		c.prevSummary = t.prev.Summary
	}
	c.first = min(c.first, c.cov)
	c.userReq = c.boundedUserRequest()
	c.rawBare = sat.Add(c.Fixed, c.Est.Content(summaryContent("", c.userReq, false, convo.RequestAttachments(c.coveredRequest(c.cov))...)))
	c.bare = c.Cal.Scale(c.rawBare)
	return c
}

// irreducible is the size of a request of raw estimate n, and the error of
// one known not to fit; calibrated only when the provider rejected this
// request and said how large it was.
func (c *compaction) irreducible(n int) (int, error) {
	if c.rejected {
		n = c.Cal.Scale(n)
	}
	if n > c.lim.HardLimit() {
		return n, irreducibleError(n, c.lim.Window)
	}
	return n, nil
}

// nothingToDo reports whether no summary can help the request (stop), with
// the step to take instead: the request as it is, with an error only past
// the window's hard limit, as the smallest request may still fit.
func (c *compaction) nothingToDo() (step, bool) {
	done := step{contents: c.orig, next: c.unapplied}
	if _, err := c.irreducible(c.rawBare); err != nil {
		if c.floor != c.bare {
			c.log.Error("contextguard: the system instruction, tools and current request alone exceed the context window; nothing the guard can cut will make the request fit",
				"irreducible_tokens", c.bare, "threshold", c.lim.Threshold, "window", c.lim.Window)
		}
		done.next.Floor = c.bare
		done.next.LastEstimate = c.origEst
		done.err = err
		return done, true
	}
	if c.cov != c.first || c.prevSummary != "" {
		return done, false
	}
	done.next.LastEstimate = c.origEst
	var n int
	if n, done.err = c.irreducible(c.origEst); done.err != nil {
		c.log.Error("contextguard: the request exceeds the context window and holds nothing the guard can summarize",
			"tokens", n, "window", c.lim.Window)
	}
	return done, true
}

// open opens the compaction's span and starts its event.
func (c *compaction) open(strategy Strategy, reason string) {
	c.spanCtx, c.span = c.tel.startCompaction(c.call, c.cfg.name, c.call.SessionID(), strategy)
	c.ev = CompactionEvent{
		Agent:        c.cfg.name,
		SessionID:    c.call.SessionID(),
		Strategy:     strategy,
		Reason:       reason,
		TokensBefore: c.before,
		Threshold:    c.lim.Threshold,
		Window:       c.lim.Window,
		Ran:          c.betweenTurns.ran(),
	}
}

// compact is the one compaction loop, for every strategy: it takes the
// first verbatim suffix the strategy offers that fits under the threshold
// beside a summary of what precedes it, else summarizes everything. Any
// summarizer fault takes the fallback summary, never the raw history.
func (g *Guard) compact(t *turn, cs []*genai.Content, next state.Agent, s compactionStrategy, reason string) step {
	c, done := g.beginCompaction(t, cs, next, s.name(), reason)
	if c == nil {
		return done
	}
	return c.compactWith(s, reason)
}

// compactWith is compact's loop over a begun compaction.
func (c *compaction) compactWith(s compactionStrategy, reason string) step {
	for _, split := range c.withPreviousSplit(s.suffixes(c, reason)) {
		o := c.summarizeSpan(split, false, func(summary string) []*genai.Content {
			return c.keptTail(split, summary)
		})
		if o.newCount <= c.lim.Threshold {
			o.watermark = split
			return c.finish(o)
		}
		c.log.Info("contextguard: the kept turns do not fit beside the summary; keeping fewer",
			"tokens_after", o.newCount, "threshold", c.lim.Threshold, "window", c.lim.Window, "kept_contents", len(c.Raw)-split)
	}
	return c.finish(c.fullSummary())
}

// keptTail is the request's contents with summary covering raw[:split] and
// the contents from split on kept verbatim, pruned.
func (c *compaction) keptTail(split int, summary string) []*genai.Content {
	tail := c.Raw[split:]
	out := make([]*genai.Content, 0, len(tail)+1)
	out = append(out, c.summaryMessage(summary, c.coveredRequest(split)))
	out = append(out, tail...)
	out, _ = pruneToolResults(c.Est, c.cfg.pruneKeep, c.recall, c.Raw, out)
	return out
}

// fullSummary summarizes everything the compaction may cover and makes the
// summary message the request's only content.
func (c *compaction) fullSummary() outcome {
	o := c.summarizeSpan(c.cov, true, func(summary string) []*genai.Content {
		return []*genai.Content{c.summaryMessage(summary, c.coveredRequest(c.cov))}
	})
	o.watermark = max(c.cov, 1)
	return o
}

// summaryMessage is the summary message, carrying the attachments of cur.
func (c *compaction) summaryMessage(summary string, cur *genai.Content) *genai.Content {
	return c.sess.summary.message(summary, c.userReq, c.recall, cur)
}

// trimToCurrentRequest handles a request whose system instruction and tools
// leave no room for a summary: it sends the contents from the user's
// current request on, pair-safe, the smallest request that still carries
// the task; nothing is stored, so the next call trims again.
func trimToCurrentRequest(t *turn, next state.Agent) step {
	_, start := convo.CurrentRequest(t.ctx.UserContent(), t.Raw)
	if start < 0 {
		start = len(t.Raw) - 1
	}
	start = pairs.SafeStart(t.Raw, max(start, 0))
	cs := t.Raw[start:]
	est := t.Weigh(cs)
	if mem := t.sess.memory(t.cfg.name); !mem.trimmed {
		mem.trimmed = true
		t.log().Warn("contextguard: the system instruction and tools leave no room for a summary; sending only the newest contents from the user's current request on",
			"tokens_after", t.Cal.Scale(est), "threshold", t.lim.Threshold, "window", t.lim.Window, "kept_contents", len(cs))
	}
	next.Floor = 0
	next.RealTokens = 0
	next.LastEstimate = est
	next.PrefixKept, next.Invalidated = prefixKept(t.measure, &t.prefix, t.prev.LastEstimate, cs, est, 0)
	s := step{contents: cs, next: next}
	if n := t.irreducibleSize(est); n > t.lim.HardLimit() {
		s.err = irreducibleError(n, t.lim.Window)
	}
	return s
}

// checkPrepared drops agent's prepared summary when raw no longer starts
// with what it covers or the compaction counter moved (another branch, an
// edited log, a compaction stored elsewhere).
func (e *sessionEntry) checkPrepared(ctx context.Context, agent string, raw []*genai.Content, chain *countcache.Chain, compactions int) {
	p := e.prepared.Load()
	if p == nil || p.agent != agent {
		return
	}
	if p.end > len(raw) || chain.At(raw, p.end) != p.chain || p.compactions != compactions {
		e.dropPrepared(ctx, "the history it covers is no longer the request's")
	}
}

func (e *sessionEntry) dropPrepared(ctx context.Context, why string) {
	if p := e.takePrepared(); p != nil {
		p.drop(ctx, why)
	}
}

// compactPrepared sends the prepared summary and the contents after it,
// waiting at most the summary timeout. A summary that cannot be used or
// does not fit is wasted and the compaction runs inline.
func (g *Guard) compactPrepared(t *turn, cs []*genai.Content, next state.Agent, p *preparedSummary, s compactionStrategy, reason string) step {
	t.sess.takePrepared() // p: this call uses or wastes it
	c, done := g.beginCompaction(t, cs, next, s.name(), reason)
	if c == nil {
		p.waste(t.ctx, "nothing to compact")
		return done
	}
	end := p.end
	switch {
	case c.first != p.first || c.prevSummary != p.prevSummary || end > c.cov || end <= c.first ||
		(c.userReq != p.userReq && c.coveredRequest(end) != nil):
		// A covered request must be the one it was written for.
		p.waste(t.ctx, "the request changed since it was prepared")
		return c.compactWith(s, reason)
	case t.hookInstructions != "":
		p.waste(t.ctx, "the before-compaction hook gave instructions")
		return c.compactWith(s, reason)
	case pairs.SafeStart(t.Raw, end) != end:
		p.waste(t.ctx, "it ends inside a call/response pair")
		return c.compactWith(s, reason)
	}
	waited, ok := p.await(t.ctx, t.sess, t.cfg.summaryTimeout)
	if !ok || p.failed {
		p.waste(t.ctx, "it was not written within the summary timeout")
		return c.compactWith(s, reason)
	}
	out := c.keptTail(end, p.summary)
	o := outcome{contents: out, summary: p.summary, watermark: end, newEst: t.Weigh(out)}
	o.newCount = t.Cal.Scale(o.newEst)
	if !preparedFits(t.lim, o.newCount, t.before, c.budget) {
		p.waste(t.ctx, "the request it makes is too large")
		return c.compactWith(s, reason)
	}
	c.ev.Ran, c.ev.Prepared, c.ev.InlineReason = t.betweenTurns.preparedRan(), true, ""
	c.ev.Waited = t.betweenTurns.waited(waited)
	c.ev.SummarizerCalls, c.ev.RollingCalls = p.ev.SummarizerCalls, p.ev.RollingCalls
	c.ev.Fallback, c.ev.FallbackReason = p.ev.Fallback, p.ev.FallbackReason
	c.ev.SummaryForm = p.ev.SummaryForm
	c.ev.ContentsSummarized = end - c.first
	c.summarizing = max(p.took-waited, 0)
	p.use(t.ctx)
	return c.finish(o)
}
