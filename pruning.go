package contextguard

import (
	"slices"
	"strconv"

	"google.golang.org/genai"
)

// Tool-result pruning (DESIGN §5, WithToolResultPruning): the tier before
// summarizing. The payloads of function responses older than the newest K
// tool steps are replaced by a placeholder naming the tool and the size
// removed. ADK rebuilds the request from the session's events on every step,
// so nothing is stored: pruning is a pure function of the contents, applied
// to every request, and the same history always gives the same request.

const (
	// pruneMinResultTokens is the smallest payload (estimated tokens) that is
	// ever pruned. The placeholder itself costs about 25 tokens; a smaller
	// result is usually one crisp fact (a status, a count, an ID) that the
	// model is better off keeping, and replacing it would save little.
	pruneMinResultTokens = 200
	// pruneBatchShare is the least gain, as a share of the trigger, that
	// makes pruning advance. Each newly pruned result changes the request
	// from that point on and so costs the provider's prompt cache for
	// everything after it; advancing in batches of 5% of the trigger bounds
	// that to one cache miss per 5% of growth, while pruning still acts about
	// twenty batches before the trigger is reached.
	pruneBatchShare = 0.05
	// prunedKey is the key of the placeholder payload.
	prunedKey = "pruned"
)

// prunedContent is the pruned copy of one content, computed once per
// distinct content and kept with its count in the session's cache.
type prunedContent struct {
	// content is the copy with placeholders, nil when no payload in the
	// content is large enough to prune.
	content *genai.Content
	// gain is the estimated raw tokens the copy saves.
	gain int
}

// pruneToolResults returns cs with the payloads of function responses older
// than the newest t.cfg.pruneKeep tool steps replaced by placeholders, or cs
// itself when pruning is off or would gain too little. Only the payloads of
// response parts change: the parts, their IDs and names, every other part
// and every user text stay, so pair structure is kept. Pruning advances in
// batches: the results pruned are the oldest candidates up to the one whose
// cumulative gain first reaches the highest whole multiple of the batch size
// the candidates reach. Candidates only accumulate as the conversation
// grows, so a result once pruned stays pruned and the request changes only
// when another batch is reached (a compaction starts over from its kept
// contents).
func pruneToolResults(t *turn, cs []*genai.Content) []*genai.Content {
	keep := t.cfg.pruneKeep
	if keep <= 0 {
		return cs
	}
	boundary := -1 // contents before it are older than the newest keep steps
	for i, steps := len(cs)-1, 0; i >= 0; i-- {
		if hasFunctionResponse(cs[i]) {
			if steps++; steps == keep {
				boundary = i
				break
			}
		}
	}
	if boundary <= 0 {
		return cs
	}

	type candidate struct {
		at int
		p  *prunedContent
	}
	var cands []candidate
	total := 0
	for i := range boundary {
		if !hasFunctionResponse(cs[i]) {
			continue
		}
		if p := prunedFor(t.est, cs[i]); p.content != nil {
			cands = append(cands, candidate{i, p})
			total += p.gain
		}
	}
	// Raw estimates and a batch fixed by the configuration, so the outcome
	// does not move with the calibration factor.
	batch := max(int(float64(t.lim.threshold)*pruneBatchShare), pruneMinResultTokens)
	target := total / batch * batch
	if target == 0 {
		return cs
	}
	out := slices.Clone(cs)
	sum := 0
	for _, c := range cands {
		out[c.at] = c.p.content
		if sum += c.p.gain; sum >= target {
			break
		}
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
// seen before.
func prunedFor(e cachedEstimator, c *genai.Content) *prunedContent {
	ent := e.cache.entry(e.tokenEstimator, e.salt, c)
	if ent == nil {
		return buildPruned(e.tokenEstimator, c)
	}
	if ent.pruned == nil {
		ent.pruned = buildPruned(e.tokenEstimator, c)
	}
	return ent.pruned
}

// buildPruned makes the pruned copy of c: each function response whose
// payload is at least pruneMinResultTokens gets a placeholder payload such as
// {"pruned": "kubectl_logs output of 48213 bytes removed to save context; ask
// again if needed"}; inline parts of the response are dropped with it.
func buildPruned(e tokenEstimator, c *genai.Content) *prunedContent {
	var parts []*genai.Part
	gain := 0
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
		fr.Response = map[string]any{prunedKey: placeholderText(fr.Name, size)}
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
		gain += before - after
	}
	if parts == nil {
		return &prunedContent{}
	}
	return &prunedContent{content: &genai.Content{Role: c.Role, Parts: parts}, gain: gain}
}

// placeholderText says what was removed and that the model may ask again.
func placeholderText(tool string, bytes int) string {
	if tool == "" {
		tool = "tool"
	}
	return tool + " output of " + strconv.Itoa(bytes) + " bytes removed to save context; ask again if needed"
}

// partTokens is the estimate of one part, framing excluded.
func partTokens(e tokenEstimator, p *genai.Part) int {
	return e.content(&genai.Content{Parts: []*genai.Part{p}}) - e.content(&genai.Content{})
}
