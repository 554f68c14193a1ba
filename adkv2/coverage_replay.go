package contextguard

import (
	"slices"
	"strings"

	"google.golang.org/adk/v2/session"
	"google.golang.org/genai"
)

// The replay: which events ADK v2 turns into this request's contents, and
// where its rearrangements put them.

// visibleSlots returns a slot per event ADK puts into the agent's request:
// with content or a transcription, in the branch, in the isolation scope,
// not one of ADK's own credential or confirmation calls.
func visibleSlots(events []*session.Event, agentName, branch, isolationScope string) []*slot {
	slots := make([]*slot, 0, len(events))
	// One allocation for every slot; its capacity never grows, so the
	// pointers stay valid.
	backing := make([]slot, 0, len(events))
	for i, e := range events {
		if e == nil {
			continue
		}
		content := e.Content
		hasContent := content != nil && content.Role != "" && len(content.Parts) > 0
		if !hasContent && e.InputTranscription == nil && e.OutputTranscription == nil {
			continue
		}
		if !inBranch(branch, e.Branch) || e.IsolationScope != isolationScope || internalCall(content) {
			continue
		}
		backing = append(backing, slot{last: i})
		s := &backing[len(backing)-1]
		if content != nil {
			s.role, s.parts = content.Role, content.Parts
		}
		if e.Author != agentName && e.Author != userAuthor && content != nil && len(content.Parts) > 0 {
			s.role, s.foreign = roleUser, e.Author
		}
		slots = append(slots, s)
	}
	return slots
}

// inBranch reports whether an event of branch eventBranch is visible from
// branch: either is empty, they are equal, or the event's is an ancestor.
func inBranch(branch, eventBranch string) bool {
	return branch == "" || eventBranch == "" || branch == eventBranch ||
		strings.HasPrefix(branch, eventBranch+".")
}

// internalCall reports whether content calls or answers ADK's credential
// or confirmation function.
func internalCall(content *genai.Content) bool {
	if content == nil {
		return false
	}
	for _, p := range content.Parts {
		if p == nil {
			continue
		}
		if p.FunctionCall != nil && isInternalName(p.FunctionCall.Name) {
			return true
		}
		if p.FunctionResponse != nil && isInternalName(p.FunctionResponse.Name) {
			return true
		}
	}
	return false
}

func isInternalName(name string) bool {
	return name == credentialCallName || name == confirmationCallName
}

// aggregateTranscriptions merges runs of consecutive transcription events
// (no content) into one text content, as ADK does, attributed to the run's
// last event.
func aggregateTranscriptions(slots []*slot, events []*session.Event) []*slot {
	out := slots[:0]
	var input, output strings.Builder
	for i, s := range slots {
		e := events[s.last]
		if len(s.parts) > 0 {
			out = append(out, s)
			continue
		}
		nextHas := func(input bool) bool {
			if i+1 == len(slots) {
				return false
			}
			n := events[slots[i+1].last]
			if input {
				return n.InputTranscription != nil && n.InputTranscription.Text != ""
			}
			return n.OutputTranscription != nil && n.OutputTranscription.Text != ""
		}
		switch {
		case e.InputTranscription != nil && e.InputTranscription.Text != "":
			input.WriteString(e.InputTranscription.Text)
			if nextHas(true) {
				continue
			}
			s.role, s.parts = roleUser, []*genai.Part{{Text: input.String()}}
			input.Reset()
		case e.OutputTranscription != nil && e.OutputTranscription.Text != "":
			output.WriteString(e.OutputTranscription.Text)
			if nextHas(false) {
				continue
			}
			s.role, s.parts = roleModel, []*genai.Part{{Text: output.String()}}
			output.Reset()
		}
		out = append(out, s)
	}
	return out
}

// calls and responses return the IDs of the function calls and responses
// of a slot (none for a converted event: its parts became texts).
func (s *slot) calls() []string {
	return s.ids(func(p *genai.Part) (string, bool) {
		if p.FunctionCall == nil {
			return "", false
		}
		return p.FunctionCall.ID, true
	})
}

func (s *slot) responses() []string {
	return s.ids(func(p *genai.Part) (string, bool) {
		if p.FunctionResponse == nil {
			return "", false
		}
		return p.FunctionResponse.ID, true
	})
}

// hasCall and hasResponse report whether the slot calls or answers a
// function, without collecting IDs.
func (s *slot) hasCall() bool {
	return s.has(func(p *genai.Part) bool { return p.FunctionCall != nil })
}

func (s *slot) hasResponse() bool {
	return s.has(func(p *genai.Part) bool { return p.FunctionResponse != nil })
}

func (s *slot) has(is func(*genai.Part) bool) bool {
	if s.foreign != "" {
		return false
	}
	for _, p := range s.parts {
		if p != nil && is(p) {
			return true
		}
	}
	return false
}

func (s *slot) ids(get func(*genai.Part) (string, bool)) []string {
	if s.foreign != "" {
		return nil
	}
	var ids []string
	for _, p := range s.parts {
		if p == nil {
			continue
		}
		if id, ok := get(p); ok {
			ids = append(ids, id)
		}
	}
	return ids
}

// moveLatestResponse replays ADK's handling of a last content that answers
// an earlier call (a long-running tool's answer): the events between the
// call and the answer that neither call nor answer are left out, and the
// answers to that call are merged into one content at the end; skipped
// gets the position of the first event left out. On history ADK rejects,
// the slots stay as they are (ADK calls no model then).
func moveLatestResponse(slots []*slot, skipped *int) []*slot {
	if len(slots) < 2 {
		return slots
	}
	last := slots[len(slots)-1]
	answered := setOf(last.responses())
	if len(answered) == 0 {
		return slots
	}
	for _, id := range slots[len(slots)-2].calls() {
		if _, ok := answered[id]; ok {
			return slots
		}
	}
	at := -1
	for i := len(slots) - 2; i >= 0 && at < 0; i-- {
		if !slots[i].hasCall() {
			continue
		}
		calls := slots[i].calls()
		for _, id := range calls {
			if _, ok := answered[id]; ok {
				at = i
				break
			}
		}
		if at >= 0 {
			all := setOf(calls)
			for id := range answered {
				if _, ok := all[id]; !ok {
					return slots
				}
			}
			answered = all
		}
	}
	if at < 0 {
		return slots
	}
	out := append(make([]*slot, 0, len(slots)), slots[:at+1]...)
	var merge []*slot
	left := *skipped
	for _, s := range slots[at+1 : len(slots)-1] {
		if s.hasCall() {
			out = append(out, s)
			continue
		}
		resp := s.responses()
		if len(resp) == 0 {
			left = min(left, s.last)
			continue
		}
		if intersects(resp, answered) {
			merge = append(merge, s)
		} else {
			out = append(out, s)
		}
	}
	merged := mergeSlots(append(merge, last))
	if merged == nil {
		return slots
	}
	*skipped = left
	return append(out, merged)
}

// moveResponsesInHistory replays ADK's placing of every answer right after
// its call: an answer event is left where it is and put after the call it
// answers (the latest answer to each call ID wins; answers in several
// events to one call event are merged).
func moveResponsesInHistory(slots []*slot) []*slot {
	if len(slots) < 2 {
		return slots
	}
	answerAt := make(map[string]int)
	for i, s := range slots {
		if s.foreign != "" {
			continue
		}
		for _, p := range s.parts {
			if p != nil && p.FunctionResponse != nil {
				answerAt[p.FunctionResponse.ID] = i
			}
		}
	}
	out := make([]*slot, 0, len(slots))
	for _, s := range slots {
		if s.hasResponse() {
			continue
		}
		out = append(out, s)
		if !s.hasCall() {
			continue
		}
		var buf [4]int // most call events answer in one or few events
		at := buf[:0]
		for _, p := range s.parts {
			if p == nil || p.FunctionCall == nil {
				continue
			}
			if i, ok := answerAt[p.FunctionCall.ID]; ok && !slices.Contains(at, i) {
				at = append(at, i)
			}
		}
		switch len(at) {
		case 0:
		case 1:
			out = append(out, slots[at[0]])
		default:
			slices.Sort(at)
			merge := make([]*slot, len(at))
			for k, i := range at {
				merge[k] = slots[i]
			}
			merged := mergeSlots(merge)
			if merged == nil {
				return slots
			}
			out = append(out, merged)
		}
	}
	return out
}

// mergeSlots merges answer slots as ADK merges answer events: later
// answers replace earlier ones of the same call ID, other parts are
// appended. It returns nil where ADK fails (an answer without parts).
func mergeSlots(slots []*slot) *slot {
	if len(slots) == 0 || len(slots[0].parts) == 0 {
		return nil
	}
	base := slots[0]
	merged := &slot{role: base.role, last: base.last}
	merged.parts = append(make([]*genai.Part, 0, len(base.parts)), base.parts...)
	index := make(map[string]int)
	for i, p := range merged.parts {
		if p != nil && p.FunctionResponse != nil {
			index[p.FunctionResponse.ID] = i
		}
	}
	for _, s := range slots[1:] {
		if len(s.parts) == 0 {
			return nil
		}
		merged.last = max(merged.last, s.last)
		for _, p := range s.parts {
			if p == nil || p.FunctionResponse == nil {
				merged.parts = append(merged.parts, p)
				continue
			}
			if i, ok := index[p.FunctionResponse.ID]; ok {
				merged.parts[i] = p
				continue
			}
			index[p.FunctionResponse.ID] = len(merged.parts)
			merged.parts = append(merged.parts, p)
		}
	}
	return merged
}

func setOf(ids []string) map[string]struct{} {
	set := make(map[string]struct{}, len(ids))
	for _, id := range ids {
		set[id] = struct{}{}
	}
	return set
}

func intersects(ids []string, set map[string]struct{}) bool {
	for _, id := range ids {
		if _, ok := set[id]; ok {
			return true
		}
	}
	return false
}
