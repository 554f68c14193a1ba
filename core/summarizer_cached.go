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

// The cached form of a summary request (ARCHITECTURE.md, The summarizer).

//go:embed prompts/summary_cached.md
var summaryCachedText string

var summaryCachedTmpl = template.Must(template.New("summary_cached").Parse(summaryCachedText))

// renderCachedInstruction is the cached form's instruction for a summary of
// req.SummaryTokens, prev reporting that the request starts with an earlier
// summary and kept how many of its newest contents stay after the summary.
func renderCachedInstruction(req SummaryRequest, prev bool, kept int) (string, error) {
	prompt, err := renderSummarySystem(req)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := summaryCachedTmpl.Execute(&b, map[string]any{
		"Prompt":          strings.TrimSpace(prompt),
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
// c.raw[c.first:end], asked calibrated tokens long with kept newest contents
// staying after it, and the length it asks for. The instruction says which
// part stays, so a model that misjudges the start repeats rather than omits.
// When the whole request leaves too little room it falls back to the
// previous request the provider cached (lastRequest); nil means the
// transcript form.
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

// cachedFormUsable reports whether c may ask in the cached form at all.
func (c *compaction) cachedFormUsable() bool {
	if c.cfg.summaryForm == SummaryFormTranscript || c.noCached || c.rejected {
		return false
	}
	s, ok := c.cfg.summarizer.(CachedSummarizer)
	return ok && s.SharesModel(c.req.Model)
}

// cachedFit is how a request fits the summarizer's window in the cached
// form; in is its calibrated size with the instruction.
type cachedFit struct {
	instr    string
	asked    int
	room, in int
	err      error
}

// fitCached sizes the cached form over a request of est raw tokens, kept of
// whose newest contents stay after the summary: ok is false when the window
// leaves less than cachedMinSummaryShare of asked, or the instruction does
// not render (fit.err, logged).
func (c *compaction) fitCached(sreq SummaryRequest, asked, est, kept int) (fit cachedFit, ok bool) {
	prev := c.prevSummary != ""
	instr, err := renderCachedInstruction(sreq, prev, kept)
	if err != nil {
		c.log.Error("contextguard: the summary instruction does not render; asking in the transcript form", "error", err)
		return cachedFit{err: err}, false
	}
	w := c.sumWindow
	in := c.Cal.Scale(sat.Add(est, c.Est.Base.Content(&genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: instr}}})))
	room := w - in - window.OutputMargin(w)
	fit = cachedFit{instr: instr, asked: asked, room: room, in: in}
	if room >= sat.Scale(asked, oversizeTolerance) {
		return fit, true
	}
	short := int(float64(room) / oversizeTolerance)
	if short < max(int(float64(asked)*cachedMinSummaryShare), minSummaryTokens/2) {
		return fit, false
	}
	// The instruction states the shorter length; its size barely changes.
	fit.asked = short
	sreq.SummaryTokens = c.Cal.Unscale(short)
	if fit.instr, err = renderCachedInstruction(sreq, prev, kept); err != nil {
		return cachedFit{err: err}, false
	}
	return fit, true
}

// previousRequest is the request the provider saw last, as the prefix
// record proves it (prefix_count.go): end is how many contents of c.raw it
// held (0: none known), est its raw estimate with the system instruction.
type previousRequest struct {
	checked  bool
	end      int
	contents []*genai.Content
	est      int
}

// lastRequest is the previous request, found once per compaction, pruned
// again to the record's frontier if this call's pass moved it; none when
// the record does not match or the request ends outside [c.first, c.cov].
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
// it, pruned to the recorded frontier; nil when this call's pruning did not
// move the frontier or the record does not match.
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
// summary message) and raw[cut:n], pruned to the prefix record's frontier.
func (c *compaction) prunedAsRecorded(lead, n int) []*genai.Content {
	sent := make([]*genai.Content, 0, lead+n-c.inj.cut)
	sent = append(sent, c.orig[:lead]...)
	sent = append(sent, c.Raw[c.inj.cut:n]...)
	return pruneTo(c.Est, c.prefix.rec.frontier, c.recall, c.Raw[:n], sent)
}

// withPreviousSplit adds to the strategy's suffixes the split at the end of
// the previous request (lastRequest), summarized in the cached form with
// the contents added since kept verbatim: only when the whole request's
// cached form does not fit the summarizer's window, the previous request's
// does, and the result fits under the threshold.
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
