package coretest

import (
	"fmt"

	"google.golang.org/genai"
)

// Pair safety as strict providers enforce it: every function response after
// its call, every call answered.

// CheckPairs checks the structural pair safety of a request's contents, as
// strict providers (Anthropic, OpenAI) enforce it:
//
//   - every function response answers a function call made earlier in the
//     request;
//   - every function call is answered by the content that immediately
//     follows it (ADK merges parallel responses into one content), except
//     the calls of the last content, which may be pending.
//
// Calls and responses are matched by ID when both have one, otherwise by
// name in order (ADK strips its client-generated IDs from contents). Nil
// contents and parts are skipped. It returns nil when the contents are safe.
func CheckPairs(contents []*genai.Content) error {
	type call struct {
		id, name string
		at       int
	}
	var pending []call
	last := -1
	for i := len(contents) - 1; i >= 0; i-- {
		if contents[i] != nil {
			last = i
			break
		}
	}
	for i, c := range contents {
		if c == nil {
			continue
		}
		for _, p := range c.Parts {
			if p == nil || p.FunctionResponse == nil {
				continue
			}
			fr := p.FunctionResponse
			match := -1
			for j, pc := range pending {
				if fr.ID != "" && pc.id != "" {
					if fr.ID == pc.id {
						match = j
						break
					}
					continue
				}
				if pc.name == fr.Name {
					match = j
					break
				}
			}
			if match < 0 {
				return fmt.Errorf("content %d: function response %q (id %q) has no preceding call", i, fr.Name, fr.ID)
			}
			pending = append(pending[:match], pending[match+1:]...)
		}
		if len(pending) > 0 {
			// Calls of an earlier content that this content did not answer.
			pc := pending[0]
			return fmt.Errorf("content %d: function call %q (id %q) is not answered by the next content", pc.at, pc.name, pc.id)
		}
		for _, p := range c.Parts {
			if p == nil || p.FunctionCall == nil {
				continue
			}
			pending = append(pending, call{id: p.FunctionCall.ID, name: p.FunctionCall.Name, at: i})
		}
	}
	for _, pc := range pending {
		if pc.at != last {
			return fmt.Errorf("content %d: function call %q (id %q) has no response", pc.at, pc.name, pc.id)
		}
	}
	return nil
}
