package contextguard

import (
	"google.golang.org/genai"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/session"

	"github.com/adk-contextguard/contextguard/core"
)

// ADK v2's coverage: a summary's cut as the ID of the session event it ends
// at, mapped onto each request by replaying how ADK v2 builds it.

// fromADK is the engine's view of ADK's request. Its Coverage anchors a
// summary's cut to the session event it ends at (coverage.go), built only
// when the engine asks: ADK v2 builds the request from the events visible
// to the agent's branch and isolation scope, adds messages built from no
// event and moves function responses, which a count of contents does not
// survive.
func fromADK(req *model.LLMRequest, cctx agent.Context) core.Request {
	return core.Request{Model: req.Model, Contents: req.Contents, Config: req.Config, Origin: req, Coverage: &lazyCoverage{ctx: cctx}}
}

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
// when the mapping of the first n contents is weak (strongCut), when a
// content after the n-th was built from an event no later than that one
// (the cut is then no prefix of the session and cannot be named), when the
// request left out an event before that one that later requests hold
// again, or when that event's ID does not name it alone. The engine then
// keeps the cut's position and fingerprint, as with ADK v1.
func (c *eventCoverage) Anchor(contents []*genai.Content, n int) string {
	n = min(max(n, 0), len(contents))
	at := c.alignSlots(contents)
	anchor := -1
	for _, s := range at[:n] {
		if s >= 0 {
			anchor = max(anchor, c.slots[s].last)
		}
	}
	if anchor < 0 || anchor >= c.skipped || !c.strongCut(contents[:n], at[:n], anchor) {
		return ""
	}
	for _, s := range at[n:] {
		if s >= 0 && c.slots[s].last <= anchor {
			return ""
		}
	}
	id := c.events[anchor].ID
	if id == "" || c.indexOf(id) != anchor {
		return ""
	}
	return id
}

// maxUnbuiltCovered is how many of the contents a named cut covers may
// match no event: ADK v2 puts at most one content built from no event
// before a cut (a scoped agent's task input; its "Continue processing"
// message comes last), and another plugin may add one (a memory or
// instruction message). More than that means the request and the session's
// events no longer line up.
const maxUnbuiltCovered = 1

// strongCut reports whether the first contents of a request (covered, with
// at their matched slots) map onto the session's events strongly enough to
// name the cut by the event anchor. The mapping is weak, and names no
// event, when either
//
//   - an expected content built from events up to anchor, after the first
//     one matched, is matched by none of them: the request skipped or
//     reordered part of what the cut would cover (the oldest expected
//     contents may all be missing: an agent that sees only its current
//     turn, IncludeContents "none", holds no history), or
//   - more than maxUnbuiltCovered of them that carry anything match no
//     expected content (events out of the request's order, contents
//     another plugin rewrote).
//
// A weak mapping would name an event that does not end what the summary
// covers (ARCHITECTURE.md, Summary injection and the watermark).
func (c *eventCoverage) strongCut(covered []*genai.Content, at []int, anchor int) bool {
	unbuilt := 0
	first := len(c.slots)
	matched := make([]bool, len(c.slots))
	for i, s := range at {
		if s >= 0 {
			matched[s] = true
			first = min(first, s)
			continue
		}
		if _, _, ok := contentPrint(covered[i]); ok {
			unbuilt++
		}
	}
	if unbuilt > maxUnbuiltCovered {
		return false
	}
	for i := first; i < len(c.slots); i++ {
		if c.slots[i].last <= anchor && !matched[i] {
			return false
		}
	}
	return true
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
// latest event it was built from, or -1 when it was built from none.
func (c *eventCoverage) align(contents []*genai.Content) []int {
	pos := c.alignSlots(contents)
	for i, s := range pos {
		if s >= 0 {
			pos[i] = c.slots[s].last
		}
	}
	return pos
}

// alignSlots returns, for each content, the expected content (slot) it
// matched, or -1 when it was built from no event. It matches each content
// with the next expected content of the same fingerprint, in order, so
// contents ADK did not build from events, and expected contents another
// plugin removed, are skipped.
func (c *eventCoverage) alignSlots(contents []*genai.Content) []int {
	at := make([]int, len(contents))
	c.round++
	next := 0
	for i, content := range contents {
		at[i] = -1
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
		at[i] = s
	}
	return at
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

// Refresh is a coverage of the same call built anew from the session's
// events as they are now: the engine asks for it when it compacts the
// call's request once the run has ended (core.Guard.AfterRun), after the
// final response joined the log.
func (l *lazyCoverage) Refresh() core.Coverage {
	return &lazyCoverage{ctx: l.ctx}
}

// The engine's seam this file implements.
var _ core.Coverage = (*lazyCoverage)(nil)

// recallHistory is the session's contents as the tool's agent sees them, for
// the recall tool (ARCHITECTURE.md, Recall): the session's events from the
// tool's invocation context, those ADK puts into the agent's request
// (visibleSlots: the branch, the isolation scope, not ADK's internal calls),
// in order. Another agent's event is its content as it was written. The
// scope names the branch and the isolation scope, so an index never serves
// another's.
func recallHistory(ctx agent.Context) ([]*genai.Content, core.RecallScope, error) {
	inv := ctx.WithICDelta(nil)
	if inv == nil {
		return nil, core.RecallScope{Branch: ctx.Branch()}, nil
	}
	scope := core.RecallScope{Branch: inv.Branch(), IsolationScope: inv.IsolationScope()}
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
	slots := visibleSlots(events, name, scope.Branch, scope.IsolationScope)
	history := make([]*genai.Content, 0, len(slots))
	for _, s := range slots {
		if c := events[s.last].Content; c != nil && len(c.Parts) > 0 {
			history = append(history, asRequested(c))
		}
	}
	return history, scope, nil
}
