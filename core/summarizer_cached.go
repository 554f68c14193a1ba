package core

import (
	"bytes"
	_ "embed"
	"fmt"
	"math"
	"slices"
	"strings"
	"text/template"

	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/pairs"
	"github.com/adk-contextguard/contextguard/core/internal/sat"
	"github.com/adk-contextguard/contextguard/core/internal/window"
)

// The cached form of a summary request (ARCHITECTURE.md, The summarizer):
// the agent's own request plus one instruction, so the provider's prefix
// cache serves all but the instruction. When that does not fit the
// summarizer's window, it is asked over the previous request the provider
// saw, and the newer contents stay verbatim after the summary.

//go:embed prompts/summary_cached.md
var summaryCachedText string

var summaryCachedTmpl = template.Must(template.New("summary_cached").Parse(summaryCachedText))

// renderCachedInstruction is the cached form's instruction for a summary of
// req.SummaryTokens, prev reporting that the request starts with an earlier
// summary and kept how many of its newest contents stay after the summary.
func renderCachedInstruction(req SummaryRequest, prev bool, kept int) (string, error) {
	var pb, b bytes.Buffer
	if err := summarySystemTmpl.Execute(&pb, map[string]any{
		"MaxWords":     summaryWords(req.SummaryTokens),
		"HasTodos":     len(req.Todos) > 0,
		"Instructions": req.Instructions,
	}); err != nil {
		return "", fmt.Errorf("contextguard: rendering summary instruction: %w", err)
	}
	if err := summaryCachedTmpl.Execute(&b, map[string]any{
		"Prompt":          strings.TrimSpace(pb.String()),
		"PreviousSummary": prev,
		"Kept":            kept,
		"Todos":           req.Todos,
	}); err != nil {
		return "", fmt.Errorf("contextguard: rendering summary instruction: %w", err)
	}
	return b.String(), nil
}

// cachedMinSummaryShare is the least share of the length asked that the
// cached form may ask for when the request leaves less room: a shorter
// summary read from the cache (billed at a tenth to a half, in one call
// where the transcript takes two or more) is worth it down to half.
const cachedMinSummaryShare = 0.5

// cachedSummaryCall is the cached form's call for the summary sreq asks of
// c.raw[c.first:end], asked calibrated tokens long with kept newest
// contents staying after it, and the length it asks for (less when the
// request leaves less room, cachedMinSummaryShare at least). The summary
// covers the whole request and the instruction says which part stays, so a
// model that misjudges the start repeats rather than omits. When the whole
// request leaves too little room, the call is the previous request the
// provider cached (lastRequest) if the summary ends within it. It is nil
// (the transcript form) when the form may not be used or neither request
// leaves the summary room in the summarizer's window.
func (c *compaction) cachedSummaryCall(sreq SummaryRequest, asked, end, kept int) (*CachedSummaryCall, int) {
	if !c.cachedFormUsable() {
		return nil, asked
	}
	base, est := c.orig, c.origEst
	if cs := c.asCached(); cs != nil {
		base, est = cs, c.Weigh(cs)
	}
	fit, ok := c.fitCached(sreq, asked, est, kept)
	if !ok && len(base) > 0 && len(c.orig) > 0 && &base[0] != &c.orig[0] {
		base = c.orig
		fit, ok = c.fitCached(sreq, asked, c.origEst, kept)
	}
	if p := c.lastRequest(); !ok && p.end > 0 && end <= p.end {
		base = p.contents
		fit, ok = c.fitCached(sreq, asked, p.est, p.end-end)
	}
	if !ok {
		if fit.err == nil && !c.cachedMissLogged {
			c.cachedMissLogged = true
			c.log.Debug("contextguard: the request leaves too little room for the summary in the summarizer's window; asking in the transcript form",
				"request_tokens", fit.in, "summary_tokens", asked, "summarizer_window", c.sumWindow)
		}
		return nil, asked
	}
	last := &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: fit.instr}}}
	contents := make([]*genai.Content, 0, len(base)+1)
	contents = append(contents, base...)
	contents = append(contents, last)
	cfg := &genai.GenerateContentConfig{
		ToolConfig: &genai.ToolConfig{FunctionCallingConfig: &genai.FunctionCallingConfig{
			Mode: genai.FunctionCallingConfigModeNone,
		}},
		// Twice the length asked, as the transcript form's LLM summarizer
		// sets it, within the room the window leaves.
		MaxOutputTokens: int32(min(2*fit.asked, fit.room, math.MaxInt32)),
	}
	if a := c.req.Config; a != nil {
		cfg.SystemInstruction, cfg.Tools, cfg.CachedContent = a.SystemInstruction, a.Tools, a.CachedContent
	}
	return &CachedSummaryCall{Contents: contents, Config: cfg, Instruction: fit.instr}, fit.asked
}

// cachedFormUsable reports whether compaction c may ask in the cached form
// at all: the form is on, the summarizer shares the agent's model, no
// cached call of this compaction failed, and the provider did not reject
// this very request.
func (c *compaction) cachedFormUsable() bool {
	if c.cfg.summaryForm == SummaryFormTranscript || c.noCached || c.rejected {
		return false
	}
	s, ok := c.cfg.summarizer.(CachedSummarizer)
	return ok && s.SharesModel(c.req.Model)
}

// cachedFit is how a request fits the summarizer's window in the cached
// form: its instruction, the length it asks for, the room the window
// leaves for the answer, and the request's calibrated size with the
// instruction (in).
type cachedFit struct {
	instr    string
	asked    int
	room, in int
	err      error
}

// fitCached sizes the cached form over a request of est raw tokens (its
// system instruction, tools and contents), kept of whose newest contents
// stay after the summary: ok is false when the window leaves less room
// than the summary needs, down to cachedMinSummaryShare of asked, or the
// instruction does not render (fit.err, logged).
func (c *compaction) fitCached(sreq SummaryRequest, asked, est, kept int) (fit cachedFit, ok bool) {
	prev := c.prevSummary != ""
	instr, err := renderCachedInstruction(sreq, prev, kept)
	if err != nil {
		c.log.Error("contextguard: the summary instruction does not render; asking in the transcript form", "error", err)
		return cachedFit{err: err}, false
	}
	w := c.sumWindow
	in := c.Cal.Scale(sat.Add(est, c.Est.tokenEstimator.Content(&genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: instr}}})))
	room := w - in - window.OutputMargin(w)
	fit = cachedFit{instr: instr, asked: asked, room: room, in: in}
	if room >= sat.Scale(asked, oversizeTolerance) {
		return fit, true
	}
	short := int(float64(room) / oversizeTolerance)
	if short < max(int(float64(asked)*cachedMinSummaryShare), minSummaryTokens/2) {
		return fit, false
	}
	// The instruction states the shorter length; its size barely changes
	// (a number of fewer digits at most).
	fit.asked = short
	sreq.SummaryTokens = c.Cal.Unscale(short)
	if fit.instr, err = renderCachedInstruction(sreq, prev, kept); err != nil {
		return cachedFit{err: err}, false
	}
	return fit, true
}

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

// lastRequest is the previous request, found once per compaction: known
// when the prefix record matches and the request has contents after it;
// its contents are the request's leading contents, pruned again to the
// record's frontier if this call's pass moved it. One that ends at or
// before the summary's cut, or past what a summary may cover, gives none.
func (c *compaction) lastRequest() *previousRequest {
	p := &c.previous
	if p.checked {
		return p
	}
	p.checked = true
	n := c.prefix.rec.contents
	if !c.prefix.matched || n <= c.first || n >= len(c.Raw) || n > c.cov || c.inj.cut > n {
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
	p.end, p.contents, p.est = n, cs, c.Weigh(cs)
	return p
}

// asCached is the request the compaction starts from as the provider cached
// it, when this call's pruning pass moved the frontier past the recorded
// one: the same contents pruned to the recorded frontier (nil when the pass
// did not move it, or the record does not match). The contents a summary
// keeps are pruned to the new frontier either way (keptTail).
func (c *compaction) asCached() []*genai.Content {
	if !c.prefix.matched || c.prefix.rec.frontier == c.frontier {
		return nil
	}
	lead := 0
	if c.inj.injected {
		lead = 1
	}
	if c.inj.cut > len(c.Raw) || len(c.orig) != lead+len(c.Raw)-c.inj.cut {
		return nil
	}
	return c.prunedAsRecorded(lead, len(c.Raw))
}

// prunedAsRecorded is the request's first lead contents (the injected
// summary message) and its raw contents from the summary's cut up to n,
// pruned to the frontier of the prefix record: as the previous request
// sent them, where this call's pruning moved on.
func (c *compaction) prunedAsRecorded(lead, n int) []*genai.Content {
	sent := make([]*genai.Content, 0, lead+n-c.inj.cut)
	sent = append(sent, c.orig[:lead]...)
	sent = append(sent, c.Raw[c.inj.cut:n]...)
	return pruneTo(c.Est, c.prefix.rec.frontier, c.recall, c.Raw[:n], sent)
}

// withPreviousSplit is the strategy's suffixes followed, when it helps, by
// the pair-safe split at the end of the previous request (lastRequest): the
// summary covers that request in the cached form and the contents added
// since stay verbatim. It is offered only when the whole request's cached
// form does not fit the summarizer's window, the previous request's does,
// and the result fits under the threshold, so it costs no extra call.
func (c *compaction) withPreviousSplit(suffixes []int) []int {
	if !c.cachedFormUsable() {
		return suffixes
	}
	p := c.lastRequest()
	if p.end == 0 {
		return suffixes
	}
	split := pairs.SafeStart(c.Raw, p.end)
	if split <= c.first || split >= c.cov || slices.Contains(suffixes, split) {
		return suffixes
	}
	whole := min(c.budget, c.input.answer)
	if _, ok := c.fitCached(c.summaryRequest(whole), whole, c.origEst, 0); ok {
		return suffixes
	}
	build := func(summary string) []*genai.Content { return c.keptTail(split, summary) }
	asked := min(c.spanBudget(build), c.input.answer)
	if sat.Add(c.Cal.Scale(c.Weigh(build(""))), asked) > c.lim.Threshold {
		return suffixes
	}
	if _, ok := c.fitCached(c.summaryRequest(asked), asked, p.est, p.end-split); !ok {
		return suffixes
	}
	c.log.Debug("contextguard: the request is too large for the cached form; summarizing the previous request in it and keeping the contents added since",
		"previous_request_contents", p.end, "kept_contents", len(c.Raw)-split)
	return append(slices.Clip(suffixes), split)
}
