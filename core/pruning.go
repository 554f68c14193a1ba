package core

import (
	"math"
	"slices"
	"strconv"

	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/countcache"
	"github.com/adk-contextguard/contextguard/core/internal/estimate"
	"github.com/adk-contextguard/contextguard/core/internal/pairs"
	"github.com/adk-contextguard/contextguard/core/internal/sat"
	"github.com/adk-contextguard/contextguard/core/internal/textcut"
)

// Tool-result pruning (ARCHITECTURE.md, Strategies; WithToolResultPruning):
// only the frontier (the last step pruned) is stored, so the request is a
// function of the history and it.

const (
	// pruneMinResultTokens is the smallest payload (estimated tokens) ever
	// pruned, so each replacement gains at least about 175 tokens (the
	// placeholder costs about 25); a smaller result is usually one crisp
	// fact the model is better off keeping.
	pruneMinResultTokens = 200
	prunedKey            = "pruned" // the placeholder payload's key
)

// pruneToolResults returns cs pruned to the full frontier (pruneFrontier),
// as a compaction prunes its kept contents, and that frontier.
func pruneToolResults(e countcache.Counter, keep int, recall bool, raw, cs []*genai.Content) ([]*genai.Content, int) {
	f := pruneFrontier(keep, raw)
	return pruneTo(e, f, recall, raw, cs), f
}

// pruneFrontier is the full pruning frontier of raw, the history ADK built:
// with K = keep (WithToolResultPruning) and N tool steps numbered from the
// first, steps 1..F may be pruned where F = floor((N-K)/K)*K (0 when
// pruning is off). The newest K steps are never pruned and the frontier
// advances K steps at a time; a step's fate depends only on its number, so
// a result once pruned stays pruned, even across a compaction.
func pruneFrontier(keep int, raw []*genai.Content) int {
	if keep <= 0 {
		return 0
	}
	n := toolSteps(raw)
	return max((n-keep)/keep*keep, 0)
}

// pruneTo returns cs with the payloads of the tool steps up to frontier
// replaced by placeholders (cs itself when that prunes nothing). Only
// response payloads change, so pair structure is kept. With recall, the
// placeholders say how to recall a result.
func pruneTo(e countcache.Counter, frontier int, recall bool, raw, cs []*genai.Content) []*genai.Content {
	if frontier <= 0 {
		return cs
	}
	var out []*genai.Content
	eachPruned(e, recall, raw, cs, 0, frontier, func(i int, p *countcache.Pruned) {
		if out == nil {
			out = slices.Clone(cs)
		}
		out[i] = p.Content
	})
	if out == nil {
		return cs
	}
	return out
}

// eachPruned calls f with the index in cs and the pruned copy of each
// content that pruning the tool steps after from up to to changes. cs must
// end with the newest steps of raw, as every request the guard builds does.
func eachPruned(e countcache.Counter, recall bool, raw, cs []*genai.Content, from, to int, f func(int, *countcache.Pruned)) {
	step := toolSteps(raw) - toolSteps(cs)
	for i, c := range cs {
		if !hasFunctionResponse(c) {
			continue
		}
		if step++; step > to {
			return
		}
		if step <= from {
			continue
		}
		if p := e.Pruned(c, recall, buildPruned); p.Content != nil {
			f(i, p)
		}
	}
}

// toolSteps is the number of tool steps (function responses) in cs.
func toolSteps(cs []*genai.Content) int {
	n := 0
	for _, c := range cs {
		if hasFunctionResponse(c) {
			n++
		}
	}
	return n
}

// pruningMinFree is the least a pass under the trigger that moves the
// frontier must free, in estimated tokens: a move rewrites the request from
// the first result it prunes, which the provider's cache then reads at full
// price. By default only a pass at the trigger moves it.
func (c *Agent) pruningMinFree() int {
	if c.pruneMinFree > 0 {
		return c.pruneMinFree
	}
	return math.MaxInt
}

// pruneFreed is what moving the frontier from from to to frees in cs, in
// raw estimated tokens (each pruned copy's saving, cached with it), and
// the index in cs of the first content the move rewrites (-1 for none).
func pruneFreed(e countcache.Counter, recall bool, raw, cs []*genai.Content, from, to int) (freed, first int) {
	first = -1
	eachPruned(e, recall, raw, cs, from, to, func(i int, p *countcache.Pruned) {
		freed = sat.Add(freed, p.Saved)
		if first < 0 {
			first = i
		}
	})
	return freed, first
}

// planPruning decides the frontier a call prunes cs to: the stored one
// (clamped to the full frontier, target), or target when moving to it frees
// at least minFree; first is the index in cs of the first content the move
// rewrites (-1 when the frontier does not move).
func planPruning(e countcache.Counter, keep, minFree int, recall bool, stored int, raw, cs []*genai.Content) (frontier, target, first int) {
	target = pruneFrontier(keep, raw)
	frontier = min(stored, target)
	if frontier == target {
		return frontier, target, -1
	}
	freed, first := pruneFreed(e, recall, raw, cs, frontier, target)
	if freed < minFree {
		return frontier, target, -1
	}
	return target, target, first
}

// hasFunctionResponse reports whether c holds a function response: a tool step.
func hasFunctionResponse(c *genai.Content) bool {
	for _, p := range pairs.Parts(c) {
		if p != nil && p.FunctionResponse != nil {
			return true
		}
	}
	return false
}

// buildPruned makes the pruned copy of c: each function response whose
// payload is at least pruneMinResultTokens gets a placeholder payload
// (placeholderText); inline parts of the response are dropped with it.
func buildPruned(e estimate.Estimator, c *genai.Content, recall bool) *countcache.Pruned {
	var parts []*genai.Part
	saved := 0
	for j, p := range c.Parts {
		if p == nil || p.FunctionResponse == nil {
			continue
		}
		before := partTokens(e, p)
		if before < pruneMinResultTokens {
			continue
		}
		fr := *p.FunctionResponse
		size := len(textcut.JSON(fr.Response))
		for _, rp := range fr.Parts {
			if rp != nil && rp.InlineData != nil {
				size += len(rp.InlineData.Data)
			}
		}
		fr.Response = map[string]any{prunedKey: placeholderText(fr.Name, size, recall, fr.ID)}
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
		saved = sat.Add(saved, before-after)
	}
	if parts == nil {
		return &countcache.Pruned{}
	}
	return &countcache.Pruned{Content: &genai.Content{Role: c.Role, Parts: parts}, Saved: saved}
}

// placeholderText says what was removed and how the model may get it again:
// with recall, the call_id that recalls the result whole.
func placeholderText(tool string, bytes int, recall bool, callID string) string {
	if tool == "" {
		tool = "tool"
	}
	how := "ask again if needed"
	switch {
	case recall && callID != "":
		how = "call " + RecallToolName + " with call_id " + strconv.Quote(callID) + " to get it whole"
	case recall:
		how = "call " + RecallToolName + " with words from it to find it again"
	}
	return tool + " output of " + strconv.Itoa(bytes) + " bytes removed to save context; " + how
}

// partTokens is the estimate of one part, framing excluded.
func partTokens(e estimate.Estimator, p *genai.Part) int {
	return e.Content(&genai.Content{Parts: []*genai.Part{p}}) - e.Content(&genai.Content{})
}
