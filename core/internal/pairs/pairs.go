// Package pairs keeps a function call and its response together: the one
// ordered rule every cut of a conversation uses (ARCHITECTURE.md).
package pairs

import (
	"slices"

	"google.golang.org/genai"
)

// SafeStart moves a cut at index start back until no function response in
// cs[start:] answers a call made before start, so no call is separated from
// its response. Every cut the guard makes goes through it. Responses match
// calls as contextguardtest.CheckPairs does: by ID when both have one, else
// by name, in order.
func SafeStart(cs []*genai.Content, start int) int {
	for start > 0 && start < len(cs) {
		j := orphanedCall(cs, start)
		if j < 0 {
			return start
		}
		start = j
	}
	return start
}

// orphanedCall returns the index, before split, of the content holding the
// call that the first unmatched function response of cs[split:] answers, or
// -1 when every response there is answered from cs[split:] (responses whose
// call is nowhere cannot be helped by moving the split and are ignored).
func orphanedCall(cs []*genai.Content, split int) int {
	type call struct{ id, name string }
	var pending []call
	for i := split; i < len(cs); i++ {
		for _, p := range Parts(cs[i]) {
			if p == nil || p.FunctionResponse == nil {
				continue
			}
			fr := p.FunctionResponse
			k := slices.IndexFunc(pending, func(c call) bool {
				if fr.ID != "" && c.id != "" {
					return fr.ID == c.id
				}
				return fr.Name == c.name
			})
			if k >= 0 {
				pending = slices.Delete(pending, k, k+1)
				continue
			}
			if j := CallIndex(cs[:split], fr); j >= 0 {
				return j
			}
		}
		for _, p := range Parts(cs[i]) {
			if p != nil && p.FunctionCall != nil {
				pending = append(pending, call{id: p.FunctionCall.ID, name: p.FunctionCall.Name})
			}
		}
	}
	return -1
}

// CallIndex is the index of the last content in cs that holds the call fr
// answers, or -1.
func CallIndex(cs []*genai.Content, fr *genai.FunctionResponse) int {
	for i := len(cs) - 1; i >= 0; i-- {
		for _, p := range Parts(cs[i]) {
			if p == nil {
				continue
			}
			fc := p.FunctionCall
			if fc == nil {
				continue
			}
			if fr.ID != "" && fc.ID != "" {
				if fr.ID == fc.ID {
					return i
				}
				continue
			}
			if fr.Name == fc.Name {
				return i
			}
		}
	}
	return -1
}

// Parts is c's parts, none for a nil content.
func Parts(c *genai.Content) []*genai.Part {
	if c == nil {
		return nil
	}
	return c.Parts
}
