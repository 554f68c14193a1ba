package core

import (
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/sat"
)

// The size of the next step by the tools it calls (ARCHITECTURE.md, One
// model call): an agent's memory keeps, per recent tool, the smallest and
// largest of its results, and a response that calls only steady tools
// (results alike so far) predicts its step as its own count plus their
// largest results. A summary the agent's recent steps predict is not
// prepared when those tools keep the next request under the trigger: it
// would be started early, for a step that stays small, and replaced or
// dropped later.

// toolSizesKept is how many tools' result sizes an agent's memory keeps:
// an agent's working set of tools (reading, searching, running, editing)
// is a few; a tool beyond it takes the place of the one recorded longest
// ago.
const toolSizesKept = 16

// toolAlikeSeen and toolAlikeSpread say when a tool's results predict the
// next one (toolSize.alike): two results, the larger at most one and a
// half times the smaller. A prediction too small sends the next compaction
// into the model call, so a tool must show it is steady first.
const (
	toolAlikeSeen   = 2
	toolAlikeSpread = 1.5
)

// toolSizes is what the results of each of an agent's recent tools
// weighed, in raw estimated tokens.
type toolSizes struct {
	names [toolSizesKept]string
	sizes [toolSizesKept]toolSize
	next  int // the slot a new tool takes
}

// toolSize is what the results of one tool weighed: the smallest and the
// largest, and how many there were.
type toolSize struct {
	least, most, seen int
}

// alike reports whether the tool's results are alike enough to predict
// the next one: at least toolAlikeSeen of them, the largest at most
// toolAlikeSpread times the smallest. The results of a tool that lists or
// checks the same thing are; those of one that reads whatever file it is
// given are not, and its next result may be far larger than any so far.
func (z toolSize) alike() bool {
	return z.seen >= toolAlikeSeen && float64(z.most) <= toolAlikeSpread*float64(max(z.least, 1))
}

// set records a result of size n of the tool name; a result with no
// name is not recorded.
func (ts *toolSizes) set(name string, n int) {
	if name == "" {
		return
	}
	for i, have := range ts.names {
		if have == name {
			z := &ts.sizes[i]
			z.least, z.most, z.seen = min(z.least, n), max(z.most, n), z.seen+1
			return
		}
	}
	ts.names[ts.next], ts.sizes[ts.next] = name, toolSize{least: n, most: n, seen: 1}
	ts.next = (ts.next + 1) % toolSizesKept
}

// get is what the results of the tool name weighed; ok is false for a
// tool not recorded.
func (ts *toolSizes) get(name string) (toolSize, bool) {
	for i, have := range ts.names {
		if have == name && name != "" {
			return ts.sizes[i], true
		}
	}
	return toolSize{}, false
}

// note records the results that end raw, the tool results the request
// just added: each content's count shared by the results it holds.
func (ts *toolSizes) note(est cachedEstimator, raw []*genai.Content) {
	for i := len(raw) - 1; i >= 0; i-- {
		n := functionResponses(raw[i])
		if n == 0 {
			return
		}
		share := est.content(raw[i]) / n
		for _, p := range raw[i].Parts {
			if p != nil && p.FunctionResponse != nil {
				ts.set(p.FunctionResponse.Name, share)
			}
		}
	}
}

// predict is the raw growth of the step that answers the function calls of
// c: c's own count and the largest result of each tool it calls. ok is
// false when c calls a tool whose results are not alike (or not
// recorded), or none.
func (ts *toolSizes) predict(est tokenEstimator, c *genai.Content) (n int, ok bool) {
	if c == nil {
		return 0, false
	}
	calls := 0
	for _, p := range c.Parts {
		if p == nil || p.FunctionCall == nil {
			continue
		}
		size, known := ts.get(p.FunctionCall.Name)
		if !known || !size.alike() {
			return 0, false
		}
		n = sat.Add(n, size.most)
		calls++
	}
	return sat.Add(n, est.content(c)), calls > 0
}

// functionResponses is how many function responses c holds, 0 when it
// holds anything else.
func functionResponses(c *genai.Content) int {
	if c == nil {
		return 0
	}
	n := 0
	for _, p := range c.Parts {
		if p == nil {
			continue
		}
		if p.FunctionResponse == nil {
			return 0
		}
		n++
	}
	return n
}
