package core

import (
	"slices"

	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/pairs"
	"github.com/adk-contextguard/contextguard/core/internal/sat"
)

// The cached form over the previous request (ARCHITECTURE.md, The
// summarizer): when one step's new contents (a large tool result) push the
// request so far past the trigger that the cached form of the whole
// request does not fit the summarizer's window, the summary is asked as the
// previous request the provider saw plus the instruction, a prefix the
// provider has cached, and the newer contents stay verbatim after the
// summary.

// previousRequest is the request the provider saw last, as the prefix
// record proves it (prefix_count.go): end is how many contents of c.raw it
// held (0 when no such request is known), contents are its contents as
// they were sent, and est its raw estimate with the system instruction and
// tools.
type previousRequest struct {
	checked  bool
	end      int
	contents []*genai.Content
	est      int
}

// lastRequest is the previous request of the call compaction c compacts,
// found once per compaction. It is known when the prefix record matches
// the request (the same compaction count, summary cut, system instruction
// and tools, and chain of contents) and the request has contents after it:
// its contents are then the leading contents of the request before
// compaction, as they were pruned then (a pruning pass of this call that
// moved the frontier rewrote some of them; they are pruned again to the
// record's frontier). A record of a request that ends at or before the
// stored summary's cut, or after what a summary may cover, gives none.
func (c *compaction) lastRequest() *previousRequest {
	p := &c.previous
	if p.checked {
		return p
	}
	p.checked = true
	n := c.prefix.rec.contents
	if !c.prefix.matched || n <= c.first || n >= len(c.raw) || n > c.cov || c.inj.cut > n {
		return p
	}
	lead := 0
	if c.inj.injected {
		lead = 1
	}
	k := lead + n - c.inj.cut
	if k > len(c.orig) {
		return p
	}
	cs := c.orig[:k:k]
	if c.prefix.rec.frontier != c.frontier {
		cs = c.prunedAsRecorded(lead, n)
	}
	p.end, p.contents, p.est = n, cs, c.weigh(cs)
	return p
}

// asCached is the request the compaction starts from as the provider has
// cached it, when this call's pruning pass moved the frontier past the one
// the previous request was sent with: the same contents pruned to the
// recorded frontier (nil when the pass did not move it, or the prefix
// record does not match). The pass rewrote the request from its first
// newly pruned result on, so the request as the guard would send it shares
// only that much with the provider's cache; the summary replaces the
// history either way, and the contents it keeps are pruned to the new
// frontier (keptTail).
func (c *compaction) asCached() []*genai.Content {
	if !c.prefix.matched || c.prefix.rec.frontier == c.frontier {
		return nil
	}
	lead := 0
	if c.inj.injected {
		lead = 1
	}
	if c.inj.cut > len(c.raw) || len(c.orig) != lead+len(c.raw)-c.inj.cut {
		return nil
	}
	return c.prunedAsRecorded(lead, len(c.raw))
}

// prunedAsRecorded is the request's first lead contents (the injected
// summary message) and its raw contents from the summary's cut up to n,
// pruned to the frontier of the prefix record: as the previous request
// sent them, where this call's pruning moved on.
func (c *compaction) prunedAsRecorded(lead, n int) []*genai.Content {
	sent := make([]*genai.Content, 0, lead+n-c.inj.cut)
	sent = append(sent, c.orig[:lead]...)
	sent = append(sent, c.raw[c.inj.cut:n]...)
	return pruneTo(c.est, c.prefix.rec.frontier, c.recall, c.raw[:n], sent)
}

// withPreviousSplit is the strategy's suffixes followed, when it helps, by
// the split at the end of the previous request (lastRequest): the summary
// then covers what that request held and is asked in the cached form over
// it, and the contents added since stay verbatim. It is offered only when
// the cached form may be used, the cached form of the whole request does
// not fit the summarizer's window and that of the previous request does,
// and the compacted request (the summary message at the length asked, then
// the kept contents, pruned) fits under the threshold, so that trying it
// costs no summarizer call the compaction would not make anyway. When the
// previous request ends with a function call whose response is new, the
// split moves back before the call (pairs.SafeStart), and the instruction
// says how many of the request's newest messages stay.
func (c *compaction) withPreviousSplit(suffixes []int) []int {
	if !c.cachedFormUsable() {
		return suffixes
	}
	p := c.lastRequest()
	if p.end == 0 {
		return suffixes
	}
	split := pairs.SafeStart(c.raw, p.end)
	if split <= c.first || split >= c.cov || slices.Contains(suffixes, split) {
		return suffixes
	}
	whole := min(c.budget, c.input.answer)
	if _, ok := c.fitCached(c.summaryRequest(whole), whole, c.origEst, 0); ok {
		return suffixes
	}
	build := func(summary string) []*genai.Content { return c.keptTail(split, summary) }
	asked := min(c.spanBudget(build), c.input.answer)
	if sat.Add(c.cal.scale(c.weigh(build(""))), asked) > c.lim.threshold {
		return suffixes
	}
	if _, ok := c.fitCached(c.summaryRequest(asked), asked, p.est, p.end-split); !ok {
		return suffixes
	}
	c.log.Debug("contextguard: the request is too large for the cached form; summarizing the previous request in it and keeping the contents added since",
		"previous_request_contents", p.end, "kept_contents", len(c.raw)-split)
	return append(slices.Clip(suffixes), split)
}
