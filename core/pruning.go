package core

import (
	"slices"
	"strconv"

	"google.golang.org/genai"
)

// Tool-result pruning (ARCHITECTURE.md, Strategies; WithToolResultPruning): the tier before
// summarizing. The payloads of function responses older than the newest K
// tool steps are replaced by a placeholder naming the tool and the size
// removed. ADK rebuilds the request from the session's events on every step,
// so nothing is stored: pruning is a pure function of the contents, applied
// to every request, and the same history always gives the same request.

const (
	// pruneMinResultTokens is the smallest payload (estimated tokens) that is
	// ever pruned, so each replacement gains at least about 175 tokens (the
	// placeholder costs about 25). A smaller result is usually one crisp
	// fact (a status, a count, an ID) that the model is better off keeping,
	// and replacing it would save little.
	pruneMinResultTokens = 200
	// prunedKey is the key of the placeholder payload.
	prunedKey = "pruned"
)

// prunedContent is the pruned copy of one content, computed once per
// distinct content and kept with its count in the session's cache.
type prunedContent struct {
	// content is the copy with placeholders, nil when no payload in the
	// content is large enough to prune.
	content *genai.Content
}

// pruneToolResults returns cs with the payloads of old function responses
// replaced by placeholders, or cs itself when pruning is off or prunes
// nothing. Only the payloads of response parts change: the parts, their IDs
// and names, every other part and every user text stay, so pair structure is
// kept.
//
// Which results are old is decided on the history ADK built (t.raw), which
// only ever grows: its tool steps are numbered from the first, and with K =
// t.cfg.pruneKeep, steps 1..F are pruned where F = floor((N-K)/K)*K for N
// steps. The newest K steps are thus never pruned, and pruning advances K
// steps at a time, so the request (and the provider's prompt cache) changes
// once every K steps rather than on every step. A step's fate depends only
// on its number and N, so the same history always gives the same request,
// a result once pruned stays pruned, and a compaction does not bring pruned
// results back. cs must end with the newest steps of t.raw, as every request
// the guard builds does.
func pruneToolResults(t *turn, cs []*genai.Content) []*genai.Content {
	keep := t.cfg.pruneKeep
	if keep <= 0 {
		return cs
	}
	n := 0
	for _, c := range t.raw {
		if hasFunctionResponse(c) {
			n++
		}
	}
	frontier := (n - keep) / keep * keep
	if frontier <= 0 {
		return cs
	}
	t.frontier = frontier
	m := 0
	for _, c := range cs {
		if hasFunctionResponse(c) {
			m++
		}
	}
	var out []*genai.Content
	recall := declaresRecall(t.req.Config)
	step := n - m // the number of the step before cs's first
	for i, c := range cs {
		if !hasFunctionResponse(c) {
			continue
		}
		if step++; step > frontier {
			break
		}
		if p := prunedFor(t.est, c, recall); p.content != nil {
			if out == nil {
				out = slices.Clone(cs)
			}
			out[i] = p.content
		}
	}
	if out == nil {
		return cs
	}
	return out
}

// hasFunctionResponse reports whether c holds a function response: one tool
// step.
func hasFunctionResponse(c *genai.Content) bool {
	for _, p := range partsOf(c) {
		if p != nil && p.FunctionResponse != nil {
			return true
		}
	}
	return false
}

// prunedFor returns the pruned copy of c, from the session's cache when c was
// seen before; recall: the placeholders say how to recall the result.
func prunedFor(e cachedEstimator, c *genai.Content, recall bool) *prunedContent {
	ent := e.cache.entry(e.tokenEstimator, e.salt, c)
	if ent == nil {
		return buildPruned(e.tokenEstimator, c, recall)
	}
	slot := &ent.pruned
	if recall {
		slot = &ent.prunedRecall
	}
	if *slot == nil {
		*slot = buildPruned(e.tokenEstimator, c, recall)
	}
	return *slot
}

// buildPruned makes the pruned copy of c: each function response whose
// payload is at least pruneMinResultTokens gets a placeholder payload such as
// {"pruned": "kubectl_logs output of 48213 bytes removed to save context; ask
// again if needed"}; inline parts of the response are dropped with it.
func buildPruned(e tokenEstimator, c *genai.Content, recall bool) *prunedContent {
	var parts []*genai.Part
	for j, p := range c.Parts {
		if p == nil || p.FunctionResponse == nil {
			continue
		}
		before := partTokens(e, p)
		if before < pruneMinResultTokens {
			continue
		}
		fr := *p.FunctionResponse
		size := len(marshalJSON(fr.Response))
		for _, rp := range fr.Parts {
			if rp != nil && rp.InlineData != nil {
				size += len(rp.InlineData.Data)
			}
		}
		text := placeholderText(fr.Name, size)
		if recall {
			text = recallPlaceholderText(fr.Name, fr.ID, size)
		}
		fr.Response = map[string]any{prunedKey: text}
		fr.Parts = nil
		np := *p
		np.FunctionResponse = &fr
		after := partTokens(e, &np)
		if before-after <= 0 {
			continue
		}
		if parts == nil {
			parts = slices.Clone(c.Parts)
		}
		parts[j] = &np
	}
	if parts == nil {
		return &prunedContent{}
	}
	return &prunedContent{content: &genai.Content{Role: c.Role, Parts: parts}}
}

// placeholderText says what was removed and that the model may ask again.
func placeholderText(tool string, bytes int) string {
	if tool == "" {
		tool = "tool"
	}
	return tool + " output of " + strconv.Itoa(bytes) + " bytes removed to save context; ask again if needed"
}

// recallPlaceholderText is placeholderText for a model that has the recall
// tool: it names the call_id that recalls the result whole.
func recallPlaceholderText(tool, callID string, bytes int) string {
	if tool == "" {
		tool = "tool"
	}
	how := "call " + RecallToolName + " with words from it to find it again"
	if callID != "" {
		how = "call " + RecallToolName + " with call_id " + strconv.Quote(callID) + " to get it whole"
	}
	return tool + " output of " + strconv.Itoa(bytes) + " bytes removed to save context; " + how
}

// partTokens is the estimate of one part, framing excluded.
func partTokens(e tokenEstimator, p *genai.Part) int {
	return e.content(&genai.Content{Parts: []*genai.Part{p}}) - e.content(&genai.Content{})
}
