package contextguard

import (
	"encoding/binary"
	"hash/maphash"
	"reflect"
	"slices"
	"strings"

	"google.golang.org/genai"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/session"

	"github.com/adk-contextguard/contextguard/core"
)

// The names and texts ADK v2 (google.golang.org/adk/v2 v2.2.0) uses when it
// builds a model request from the session's events.
const (
	// userAuthor is the author ADK gives the end user's events.
	userAuthor = "user"
	// roleUser and roleModel are the roles of genai contents.
	roleUser  = "user"
	roleModel = "model"
	// foreignMarker is the first part of another agent's event converted
	// into a user message.
	foreignMarker = "For context:"
	// foreignSaid, foreignCalled and foreignReturned follow "[author] " in
	// the parts of a converted event: a text, a function call, a function
	// response.
	foreignSaid     = "said: "
	foreignCalled   = "called tool `"
	foreignReturned = "`"
	// maxAuthorSearch bounds the search for the "] " that closes an author
	// name in a converted part, so a long text that is not a converted
	// part costs a constant (agent names are short identifiers).
	maxAuthorSearch = 256
	// clientCallIDPrefix starts the function call IDs ADK generates; ADK
	// clears them in the request, so they take no part in matching.
	clientCallIDPrefix = "adk-"
	// credentialCallName and confirmationCallName are ADK's own function
	// calls, whose events ADK leaves out of every request.
	credentialCallName   = "adk_request_credential"
	confirmationCallName = "adk_request_confirmation"
	// textEdge is how many bytes of each end of a text go into its
	// fingerprint, with its length: enough to tell texts apart in order,
	// without reading large texts whole on every model call.
	textEdge = 32
)

// fingerprintSeed seeds every content fingerprint; fingerprints are only
// compared within one process.
var fingerprintSeed = maphash.MakeSeed()

// eventCoverage maps the contents of one ADK v2 model request to the
// session events they were built from, and implements the engine's
// Coverage (a summary's cut anchored to an event ID instead of a count of
// contents). It is built once per model call from the callback's context,
// in O(events); Anchor and Covered cost O(events + contents).
//
// It replays how ADK v2 builds a request from the session (the filtering by
// branch and isolation scope, other agents' events turned into "For
// context:" user messages, the aggregation of transcriptions, the moves of
// function responses next to their calls) on event positions only, then
// aligns the request's contents with that replay by fingerprint, in order.
// A content that matches nothing (ADK's "Continue processing" message, a
// scoped agent's task input, a message another plugin added) is built from
// no event: it never moves the cut.
//
// It serves one model call: it is not safe for concurrent use.
type eventCoverage struct {
	events []*session.Event
	slots  []*slot
	// byPrint gives, per fingerprint, the index in groups of the slots
	// that carry it.
	byPrint map[uint64]int
	groups  []printGroup
	// round counts the alignments, so each restarts every group's cursor.
	round int
	// skipped is the position of the first event ADK left out of this
	// request only (between a long-running call and its answer, when the
	// answer is the last event), or len(events): a cut past it covers an
	// event the request did not hold, and cannot be named.
	skipped int
}

// slot is one content the request is expected to hold, before alignment.
type slot struct {
	role string
	// parts are the parts of the content (of the original event when
	// foreign is set).
	parts []*genai.Part
	// foreign is the author of another agent's event converted into a
	// "For context:" user message; "" otherwise.
	foreign string
	// last is the position in the session of the latest event the content
	// was built from.
	last  int
	print uint64
}

// newCoverage builds the coverage of the request a BeforeModel callback
// receives from the callback's context.
//
// ADK v2.2's callback context answers Session() with nil and
// IsolationScope() with "" (it logs that they are "not supported for
// callback context"); the invocation context beneath it, which
// WithICDelta(nil) returns, answers both. Without a session the coverage
// knows no event: Anchor names nothing and the engine keeps the count.
func newCoverage(ctx agent.Context) *eventCoverage {
	if ctx == nil {
		return newEventCoverage(nil, "", "", "")
	}
	inv := ctx.WithICDelta(nil)
	if inv == nil {
		return newEventCoverage(nil, ctx.AgentName(), ctx.Branch(), "")
	}
	name := ctx.AgentName()
	if a := inv.Agent(); a != nil {
		name = a.Name()
	}
	var events []*session.Event
	if s := inv.Session(); s != nil {
		if evs := s.Events(); evs != nil {
			events = make([]*session.Event, 0, evs.Len())
			for e := range evs.All() {
				events = append(events, e)
			}
		}
	}
	return newEventCoverage(events, name, inv.Branch(), inv.IsolationScope())
}

// newEventCoverage builds the coverage of a request ADK v2 builds for
// agentName, in branch and isolationScope, from events (the session's events
// in order).
func newEventCoverage(events []*session.Event, agentName, branch, isolationScope string) *eventCoverage {
	c := &eventCoverage{events: events, skipped: len(events)}
	slots := visibleSlots(events, agentName, branch, isolationScope)
	slots = aggregateTranscriptions(slots, events)
	slots = moveLatestResponse(slots, &c.skipped)
	slots = moveResponsesInHistory(slots)
	c.byPrint = make(map[uint64]int, len(slots))
	c.groups = make([]printGroup, 0, len(slots))
	c.slots = make([]*slot, 0, len(slots))
	for _, s := range slots {
		if !s.finish() {
			continue
		}
		if g, ok := c.byPrint[s.print]; ok {
			c.groups[g].more = append(c.groups[g].more, len(c.slots))
		} else {
			c.byPrint[s.print] = len(c.groups)
			c.groups = append(c.groups, printGroup{first: len(c.slots)})
		}
		c.slots = append(c.slots, s)
	}
	return c
}

// Anchor returns the ID of the event the last of the first n contents was
// built from: the latest such event when the content merges several. It
// returns "" when no content among the first n was built from an event,
// when a content after the n-th was built from an event no later than that
// one (the cut is then no prefix of the session and cannot be named), when
// the request left out an event before that one that later requests hold
// again, or when that event's ID does not name it alone.
func (c *eventCoverage) Anchor(contents []*genai.Content, n int) string {
	n = min(max(n, 0), len(contents))
	pos := c.align(contents)
	anchor := -1
	for _, p := range pos[:n] {
		anchor = max(anchor, p)
	}
	if anchor < 0 || anchor >= c.skipped {
		return ""
	}
	for _, p := range pos[n:] {
		if p >= 0 && p <= anchor {
			return ""
		}
	}
	id := c.events[anchor].ID
	if id == "" || c.indexOf(id) != anchor {
		return ""
	}
	return id
}

// Covered returns how many leading contents were built from events up to
// and including the event anchor names: the contents before the first one
// built from a later event, up to the last one built from an event. ok is
// false when no event of the session has that ID.
func (c *eventCoverage) Covered(contents []*genai.Content, anchor string) (int, bool) {
	at := c.indexOf(anchor)
	if anchor == "" || at < 0 {
		return 0, false
	}
	n := 0
	for i, p := range c.align(contents) {
		if p > at {
			break
		}
		if p >= 0 {
			n = i + 1
		}
	}
	return n, true
}

// indexOf returns the position of the first event with ID id, or -1.
func (c *eventCoverage) indexOf(id string) int {
	for i, e := range c.events {
		if e != nil && e.ID == id {
			return i
		}
	}
	return -1
}

// align returns, for each content, the position in the session of the
// latest event it was built from, or -1 when it was built from none. It
// matches each content with the next expected content of the same
// fingerprint, in order, so contents ADK did not build from events, and
// expected contents another plugin removed, are skipped.
func (c *eventCoverage) align(contents []*genai.Content) []int {
	pos := make([]int, len(contents))
	c.round++
	next := 0
	for i, content := range contents {
		pos[i] = -1
		p, plain, ok := contentPrint(content)
		if !ok {
			continue
		}
		s := c.match(p, next)
		if s < 0 && plain != p {
			s = c.match(plain, next)
		}
		if s < 0 {
			continue
		}
		next = s + 1
		pos[i] = c.slots[s].last
	}
	return pos
}

// printGroup lists the slots of one fingerprint, in order (first, then
// more: most fingerprints have one slot), with where the current
// alignment's last search among them stopped.
type printGroup struct {
	first  int
	more   []int
	cursor int
	round  int
}

func (g *printGroup) len() int { return 1 + len(g.more) }

func (g *printGroup) at(k int) int {
	if k == 0 {
		return g.first
	}
	return g.more[k-1]
}

// match returns the first slot from next on with fingerprint p, or -1.
// Each group's cursor only moves forward within an alignment, so an
// alignment costs O(slots + contents).
func (c *eventCoverage) match(p uint64, next int) int {
	i, ok := c.byPrint[p]
	if !ok {
		return -1
	}
	g := &c.groups[i]
	if g.round != c.round {
		g.cursor, g.round = 0, c.round
	}
	for g.cursor < g.len() && g.at(g.cursor) < next {
		g.cursor++
	}
	if g.cursor == g.len() {
		return -1
	}
	g.cursor++
	return g.at(g.cursor - 1)
}

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

// finish computes the slot's fingerprint; it reports false when ADK puts
// no content into the request for the slot (no part left once empty ones
// are dropped).
func (s *slot) finish() bool {
	var h maphash.Hash
	h.SetSeed(fingerprintSeed)
	h.WriteString(s.role)
	count := 0
	if s.foreign != "" {
		h.WriteByte('F')
		count++
	}
	for _, p := range s.parts {
		if emptyPart(p) {
			continue
		}
		count++
		if s.foreign != "" {
			writeForeignPart(&h, s.foreign, p)
		} else {
			writePart(&h, p)
		}
	}
	s.print = h.Sum64()
	return count > 0
}

// contentPrint computes the fingerprint of a request content the way
// finish computes a slot's; ok is false for a content without parts. A
// user content that reads as another agent's converted event also gets
// plain, its fingerprint as the user's own (a user may type "For
// context:"); plain is p otherwise.
func contentPrint(c *genai.Content) (p, plain uint64, ok bool) {
	if c == nil {
		return 0, 0, false
	}
	plain, ok = printParts(c, false)
	if !ok || c.Role != roleUser || len(c.Parts) == 0 || !isMarker(c.Parts[0]) {
		return plain, plain, ok
	}
	p, _ = printParts(c, true)
	return p, plain, true
}

func isMarker(p *genai.Part) bool {
	return p != nil && p.Text == foreignMarker && p.FunctionCall == nil && p.FunctionResponse == nil
}

func printParts(c *genai.Content, converted bool) (uint64, bool) {
	var h maphash.Hash
	h.SetSeed(fingerprintSeed)
	h.WriteString(c.Role)
	parts := c.Parts
	if converted {
		h.WriteByte('F')
		parts = parts[1:]
	}
	count := 0
	for _, p := range parts {
		if emptyPart(p) {
			continue
		}
		count++
		if converted && p.Text != "" {
			if author, kind, rest, ok := parseForeign(p.Text); ok {
				writeForeign(&h, author, kind, rest)
				continue
			}
		}
		writePart(&h, p)
	}
	return h.Sum64(), count > 0 || converted
}

// emptyPart reports whether ADK drops the part from the request.
func emptyPart(p *genai.Part) bool {
	if p == nil {
		return true
	}
	if p.Text != "" || p.FunctionCall != nil || p.FunctionResponse != nil {
		return false
	}
	return reflect.ValueOf(*p).IsZero()
}

// writePart writes the fingerprint of a part of the agent's own (or the
// user's) event: call and response by name and ID, text by length and ends,
// media by type and size.
func writePart(h *maphash.Hash, p *genai.Part) {
	switch {
	case p.FunctionCall != nil:
		h.WriteByte('c')
		writeString(h, p.FunctionCall.Name)
		writeString(h, requestID(p.FunctionCall.ID))
	case p.FunctionResponse != nil:
		h.WriteByte('r')
		writeString(h, p.FunctionResponse.Name)
		writeString(h, requestID(p.FunctionResponse.ID))
	case p.Text != "":
		h.WriteByte('t')
		if p.Thought {
			h.WriteByte('!')
		}
		writeText(h, p.Text)
	case p.InlineData != nil:
		h.WriteByte('i')
		writeString(h, p.InlineData.MIMEType)
		writeInt(h, len(p.InlineData.Data))
	case p.FileData != nil:
		h.WriteByte('f')
		writeString(h, p.FileData.FileURI)
	default:
		h.WriteByte('o')
	}
}

// The kinds of a converted part, after "[author] ".
const (
	foreignText byte = 'T'
	foreignCall byte = 'C'
	foreignResp byte = 'R'
)

// writeForeignPart writes the fingerprint of a part of another agent's
// event as ADK converts it: a text, a call or a response become a text
// naming the author (the call's arguments and the response are not read:
// only the function's name), other parts stay as they are.
func writeForeignPart(h *maphash.Hash, author string, p *genai.Part) {
	switch {
	case p.Text != "":
		writeForeign(h, author, foreignText, p.Text)
	case p.FunctionCall != nil:
		writeForeign(h, author, foreignCall, p.FunctionCall.Name)
	case p.FunctionResponse != nil:
		writeForeign(h, author, foreignResp, p.FunctionResponse.Name)
	default:
		writePart(h, p)
	}
}

func writeForeign(h *maphash.Hash, author string, kind byte, s string) {
	h.WriteByte(kind)
	writeString(h, author)
	if kind == foreignText {
		writeText(h, s)
		return
	}
	writeString(h, s)
}

// parseForeign splits a converted part's text into its author, its kind
// and the original text (kind foreignText) or function name.
func parseForeign(text string) (author string, kind byte, rest string, ok bool) {
	if !strings.HasPrefix(text, "[") {
		return "", 0, "", false
	}
	head := text[:min(len(text), maxAuthorSearch)]
	end := strings.Index(head, "] ")
	if end < 0 {
		return "", 0, "", false
	}
	author, tail := text[1:end], text[end+2:]
	switch {
	case strings.HasPrefix(tail, foreignSaid):
		return author, foreignText, tail[len(foreignSaid):], true
	case strings.HasPrefix(tail, foreignCalled):
		name, _, found := strings.Cut(tail[len(foreignCalled):], "`")
		return author, foreignCall, name, found
	case strings.HasPrefix(tail, foreignReturned):
		name, _, found := strings.Cut(tail[len(foreignReturned):], "`")
		return author, foreignResp, name, found
	}
	return "", 0, "", false
}

// requestID is a function call ID as ADK writes it into the request.
func requestID(id string) string {
	if strings.HasPrefix(id, clientCallIDPrefix) {
		return ""
	}
	return id
}

func writeText(h *maphash.Hash, s string) {
	writeInt(h, len(s))
	if len(s) <= 2*textEdge {
		h.WriteString(s)
		return
	}
	h.WriteString(s[:textEdge])
	h.WriteString(s[len(s)-textEdge:])
}

func writeString(h *maphash.Hash, s string) {
	writeInt(h, len(s))
	h.WriteString(s)
}

func writeInt(h *maphash.Hash, n int) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(n))
	h.Write(b[:])
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

// lazyCoverage is the Coverage the adapter hands the engine with every
// request: it builds the eventCoverage only when the engine asks (a summary
// is stored, or a compaction is applied), so a call of a session without a
// summary walks no event.
type lazyCoverage struct {
	ctx agent.Context
	c   *eventCoverage
}

// get builds the coverage once.
func (l *lazyCoverage) get() *eventCoverage {
	if l.c == nil {
		l.c = newCoverage(l.ctx)
	}
	return l.c
}

// Anchor is eventCoverage.Anchor, built on first use.
func (l *lazyCoverage) Anchor(contents []*genai.Content, n int) string {
	return l.get().Anchor(contents, n)
}

// Covered is eventCoverage.Covered, built on first use.
func (l *lazyCoverage) Covered(contents []*genai.Content, anchor string) (int, bool) {
	return l.get().Covered(contents, anchor)
}

// The engine's seam this file implements.
var _ core.Coverage = (*lazyCoverage)(nil)
