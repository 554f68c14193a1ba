package costbench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/adk-contextguard/contextguard"
	"google.golang.org/genai"
)

// The accounting: every content of the conversation, at every agent request
// after it, is in that request (kept, or pruned to a placeholder that names
// it), or in the input of a summarizer call that finished before the
// request was sent (summarized), or listed mechanically by the fallback
// summary past the bounded summarizer calls (listed); else it is lost. And
// every compaction the guard reports makes the request it precedes smaller
// than the one ADK built.
//
// Summaries are written outside model calls too (prepared while tools run,
// between turns), so what a summarizer covered is not read from the request
// it served but from every summarizer input finished before the request.

// AgentCall is one agent request as the accounting sees it.
type AgentCall struct {
	// Raw is the contents ADK built for the request, before the guard;
	// Sent the contents the model received.
	Raw, Sent []*genai.Content
	// RawTokens and SentTokens are their o200k counts with the request's
	// tool declarations and system instruction; RawTokens is counted only
	// for a request a compaction event precedes (0 otherwise).
	RawTokens, SentTokens int
}

// SummarizerCall is one summarizer request: its contents and system
// instruction, and Before, the index of the first agent request the model
// received after the call finished (its summary could serve that one and
// the later ones). Tag, when set, is a text the call's summary starts with
// and no other summary holds: the call then counts for a request only if
// its summary reached it, in the request or folded into the input of a
// summarizer call whose summary did. Without a tag, any call finished
// before the request counts.
type SummarizerCall struct {
	Contents []*genai.Content
	System   *genai.Content
	Before   int
	Tag      string
}

// EventMark is one compaction the guard reported (WithOnCompaction) and the
// index of the agent request it precedes: the first the model received
// after the event.
type EventMark struct {
	Before int
	Event  contextguard.CompactionEvent
}

// Recording is what one replay records for the accounting, in order.
type Recording struct {
	Agent      []AgentCall
	Summarizer []SummarizerCall
	Events     []EventMark
}

// Fate is where a content of the conversation is at a request.
type Fate int

// The fates, from the best to the worst: a content's fate at a request is
// the worst of its parts'.
const (
	FateKept Fate = iota
	FatePruned
	FateSummarized
	FateListed
	FateLost
)

// String names the fate in a loss's description.
func (f Fate) String() string {
	return [...]string{"kept", "pruned", "summarized", "listed", "lost"}[f]
}

// Loss is one content missing from one request.
type Loss struct {
	// Session names the session (its trace's file), once known.
	Session string
	// Request is the agent request's index, Content the content's index in
	// the conversation (ADK's contents).
	Request, Content int
	// What describes the content and where it was last seen.
	What string
}

// Unshrunk is a compaction event whose request is not smaller than the one
// ADK built.
type Unshrunk struct {
	// Session names the session (its trace's file), once known; Request
	// is the index of the agent request the event precedes, EventIndex
	// the event's among the session's, Event the event itself, Raw and
	// Sent the request's o200k counts as ADK built it and as sent.
	Session    string
	Request    int
	Event      string
	Raw, Sent  int
	EventIndex int
}

// Accounting is the outcome over one or more sessions.
type Accounting struct {
	// Contents counts the contents of the conversations the last agent
	// request of each session was built from; Kept, Pruned, Summarized and
	// Listed how many of them had that fate at that request (and were never
	// lost before it), Lost how many were missing from some request.
	Contents, Kept, Pruned, Summarized, Listed, Lost int
	// Losses are every (request, content) found missing.
	Losses []Loss
	// Events counts the compaction events that precede a request and were
	// applied (not Discarded); Unshrunk those whose request did not shrink.
	// Discarded counts the events that say their compaction was not
	// applied (CompactionEvent.Discarded), which are not checked.
	Events, Discarded int
	Unshrunk          []Unshrunk
}

// Named sets the session of a's losses and unshrunk events.
func (a *Accounting) Named(session string) {
	for i := range a.Losses {
		a.Losses[i].Session = session
	}
	for i := range a.Unshrunk {
		a.Unshrunk[i].Session = session
	}
}

// Failed reports a loss or an event whose request did not shrink.
func (a *Accounting) Failed() bool { return a.Lost > 0 || len(a.Losses) > 0 || len(a.Unshrunk) > 0 }

// Add adds o to a (sessions of one configuration).
func (a *Accounting) Add(o Accounting) {
	a.Contents += o.Contents
	a.Kept += o.Kept
	a.Pruned += o.Pruned
	a.Summarized += o.Summarized
	a.Listed += o.Listed
	a.Lost += o.Lost
	a.Losses = append(a.Losses, o.Losses...)
	a.Events += o.Events
	a.Discarded += o.Discarded
	a.Unshrunk = append(a.Unshrunk, o.Unshrunk...)
}

// Account checks rec: every content of each agent request's conversation
// placed, every applied compaction event's request smaller than ADK's.
func Account(rec Recording) Accounting {
	var a Accounting
	l := newLedger(rec)
	for k := range rec.Agent {
		l.request(k)
	}
	l.close(&a)
	for i, m := range rec.Events {
		if m.Event.Discarded {
			// It says it was not applied: the request is sent as it was.
			a.Discarded++
			continue
		}
		if m.Before >= len(rec.Agent) {
			continue // after the session's last request: it precedes none
		}
		a.Events++
		r := rec.Agent[m.Before]
		if r.SentTokens >= r.RawTokens {
			a.Unshrunk = append(a.Unshrunk, Unshrunk{Request: m.Before, EventIndex: i, Event: describeEvent(m.Event), Raw: r.RawTokens, Sent: r.SentTokens})
		}
	}
	return a
}

// describeEvent is an event as its log line would name it.
func describeEvent(e contextguard.CompactionEvent) string {
	return fmt.Sprintf("strategy %s, reason %s, ran %s, %d -> %d tokens", e.Strategy, e.Reason, e.Ran, e.TokensBefore, e.TokensAfter)
}

// ledger follows each content of one session's conversation across its
// requests.
type ledger struct {
	rec Recording
	// inputs are the summarizer calls' inputs, in the order they finished.
	inputs []summarizerInput
	// contents is what is known of each content of the conversation, by
	// its index in ADK's contents.
	contents []*contentRecord
	losses   []Loss
}

// contentRecord is one content's history.
type contentRecord struct {
	c *genai.Content
	// listed is set once a summarizer input finished before a request
	// listed it mechanically.
	listed bool
	// in says, for each summarizer input searched for the content,
	// whether it held it.
	in map[int]bool
	// lastSeen is the last request that held it (-1 for none); fate its
	// fate at the last request; lost that some request missed it.
	lastSeen int
	fate     Fate
	lost     bool
}

// summarizerInput is one summarizer call's input, searchable.
type summarizerInput struct {
	call SummarizerCall
	view requestView
	// listedBelow is how many of the conversation's first contents the
	// input lists mechanically ("first N messages, listed mechanically").
	listedBelow int
	// folds are the inputs whose summaries this input holds (tagged).
	folds []int
}

func newLedger(rec Recording) *ledger {
	l := &ledger{rec: rec}
	for _, s := range rec.Summarizer {
		in := summarizerInput{call: s, view: newRequestView(s.Contents, s.System)}
		in.listedBelow = listedBelow(in.view.text)
		l.inputs = append(l.inputs, in)
	}
	slices.SortStableFunc(l.inputs, func(a, b summarizerInput) int { return a.call.Before - b.call.Before })
	for i := range l.inputs {
		l.inputs[i].folds = l.tagsIn(l.inputs[i].view.text, i)
	}
	return l
}

// tagsIn returns the inputs before the nth whose tags text holds.
func (l *ledger) tagsIn(text string, n int) []int {
	var out []int
	for j := range l.inputs[:n] {
		if tag := l.inputs[j].call.Tag; tag != "" && strings.Contains(text, tag) {
			out = append(out, j)
		}
	}
	return out
}

// serving returns, for a request whose texts are text, the summarizer
// inputs that count for it among those finished before it (the first n):
// untagged ones, and the tagged ones whose summary it holds, directly or
// through the inputs that folded it in.
func (l *ledger) serving(text string, n int) map[int]bool {
	out := map[int]bool{}
	var todo []int
	for j := range l.inputs[:n] {
		if tag := l.inputs[j].call.Tag; tag == "" || strings.Contains(text, tag) {
			todo = append(todo, j)
		}
	}
	for len(todo) > 0 {
		j := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if out[j] {
			continue
		}
		out[j] = true
		todo = append(todo, l.inputs[j].folds...)
	}
	return out
}

// listedPattern is the heading of the fallback's list of a span's oldest
// contents, when summarizing them would take more summarizer calls than
// allowed.
var listedPattern = regexp.MustCompile(`The conversation's first (\d+) messages, listed mechanically`)

// fallbackHeadings open the deterministic fallback summary, which lists the
// contents it covers instead of summarizing them.
var fallbackHeadings = []string{"(Automatic summary", "(automatic summary)"}

// listedBelow is the N of the mechanical list's heading in text, 0 for none.
func listedBelow(text string) int {
	n := 0
	for _, m := range listedPattern.FindAllStringSubmatch(text, -1) {
		if v, err := strconv.Atoi(m[1]); err == nil {
			n = max(n, v)
		}
	}
	return n
}

// request places every content of agent request k's conversation.
func (l *ledger) request(k int) {
	r := l.rec.Agent[k]
	sent := newRequestView(r.Sent, nil)
	fallback := false
	for _, h := range fallbackHeadings {
		fallback = fallback || strings.Contains(sent.text, h)
	}
	finished := 0
	for finished < len(l.inputs) && l.inputs[finished].call.Before <= k {
		finished++
	}
	serving := l.serving(sent.text, finished)
	// firstKept is the first content of the conversation the request
	// holds verbatim: a fallback summary lists what comes before it.
	firstKept := len(r.Raw)
	for i, c := range r.Raw {
		rec := l.record(i, c)
		fate := sent.place(c)
		if fate == FateLost {
			fate = l.fromSummaries(rec, i, finished, serving)
		}
		if fate == FateKept && i < firstKept {
			firstKept = i
		}
		if fate != FateLost {
			if fate <= FatePruned {
				rec.lastSeen = k
			}
			rec.fate = fate
			continue
		}
		if fallback && i < firstKept {
			rec.listed = true
			rec.fate = FateListed
			continue
		}
		rec.lost, rec.fate = true, FateLost
		l.losses = append(l.losses, Loss{Request: k, Content: i, What: l.describeLoss(rec, k)})
	}
}

// record returns the record of content i, c at this request.
func (l *ledger) record(i int, c *genai.Content) *contentRecord {
	for len(l.contents) <= i {
		l.contents = append(l.contents, &contentRecord{lastSeen: -1})
	}
	rec := l.contents[i]
	if rec.c == nil {
		rec.c = c
	}
	return rec
}

// fromSummaries is the fate of content i (rec), which the request does
// not hold: in the input of a summarizer call that serves it (serving,
// among the first finished inputs), or listed mechanically by one finished
// before it.
func (l *ledger) fromSummaries(rec *contentRecord, i, finished int, serving map[int]bool) Fate {
	if rec.in == nil {
		rec.in = map[int]bool{}
	}
	summarized := false
	for j := range l.inputs[:finished] {
		in := &l.inputs[j]
		if i < in.listedBelow {
			rec.listed = true
		}
		if !serving[j] || summarized {
			continue
		}
		held, ok := rec.in[j]
		if !ok {
			held = in.view.place(rec.c) != FateLost || in.view.excerpts(rec.c)
			rec.in[j] = held
		}
		summarized = held
	}
	switch {
	case summarized:
		return FateSummarized
	case rec.listed:
		return FateListed
	}
	return FateLost
}

// describeLoss says what content rec is, where it was last seen, and
// which summarizer inputs finished before request k held it.
func (l *ledger) describeLoss(rec *contentRecord, k int) string {
	before := 0
	var held []string
	for j, in := range l.inputs {
		if in.call.Before > k {
			continue
		}
		before++
		if in.view.place(rec.c) != FateLost || in.view.excerpts(rec.c) {
			held = append(held, strconv.Itoa(j))
		}
	}
	seen := "never in a request"
	if rec.lastSeen >= 0 {
		seen = "last in request " + strconv.Itoa(rec.lastSeen)
	}
	in := "none held it"
	if len(held) > 0 {
		in = "held by input " + strings.Join(held, ", ") + ", whose summary did not reach the request"
	}
	return fmt.Sprintf("%s; %s; %d summarizer inputs finished before request %d, %s", describeContent(rec.c), seen, before, k, in)
}

// describeContent names a content: its role and each part's kind and size.
func describeContent(c *genai.Content) string {
	var parts []string
	for _, p := range c.Parts {
		switch {
		case p == nil:
		case p.FunctionResponse != nil:
			parts = append(parts, fmt.Sprintf("the %d-byte response to %s call %s", len(responseText(p.FunctionResponse)), p.FunctionResponse.Name, p.FunctionResponse.ID))
		case p.FunctionCall != nil:
			parts = append(parts, fmt.Sprintf("%s call %s", p.FunctionCall.Name, p.FunctionCall.ID))
		case p.Text != "":
			parts = append(parts, fmt.Sprintf("a %d-byte text %q", len(p.Text), head(p.Text, describeHeadBytes)))
		}
	}
	return c.Role + ": " + strings.Join(parts, ", ")
}

// describeHeadBytes is how much of a text a loss's description quotes.
const describeHeadBytes = 40

// close sets each content's final fate in a.
func (l *ledger) close(a *Accounting) {
	a.Losses = l.losses
	n := 0
	if len(l.rec.Agent) > 0 {
		n = len(l.rec.Agent[len(l.rec.Agent)-1].Raw)
	}
	for _, rec := range l.contents[:min(n, len(l.contents))] {
		a.Contents++
		fate := rec.fate
		if rec.lost {
			fate = FateLost
		}
		switch fate {
		case FateKept:
			a.Kept++
		case FatePruned:
			a.Pruned++
		case FateSummarized:
			a.Summarized++
		case FateListed:
			a.Listed++
		default:
			a.Lost++
		}
	}
}

// requestView is a request (or a summarizer input) indexed for the
// questions the ledger asks of it.
type requestView struct {
	// contents are its contents, by identity.
	contents map[*genai.Content]bool
	// calls are its function calls' IDs, responses its function responses
	// by call ID.
	calls     map[string]bool
	responses map[string]*genai.FunctionResponse
	// text is every text part and the system instruction, joined: where a
	// quoted message or a transcript is found.
	text string
}

func newRequestView(cs []*genai.Content, system *genai.Content) requestView {
	v := requestView{contents: map[*genai.Content]bool{}, calls: map[string]bool{}, responses: map[string]*genai.FunctionResponse{}}
	var b strings.Builder
	for _, c := range append(slices.Clone(cs), system) {
		if c == nil {
			continue
		}
		v.contents[c] = true
		for _, p := range c.Parts {
			switch {
			case p == nil:
			case p.FunctionCall != nil:
				v.calls[p.FunctionCall.ID] = true
			case p.FunctionResponse != nil:
				v.responses[p.FunctionResponse.ID] = p.FunctionResponse
			case p.Text != "":
				b.WriteString(p.Text)
				b.WriteByte('\n')
			}
		}
	}
	v.text = b.String()
	return v
}

// place is the fate of content c in the request: kept (the content itself,
// or each part verbatim: a message quoted whole), pruned (each part there,
// some result as a placeholder naming it), or lost (not held).
func (v *requestView) place(c *genai.Content) Fate {
	if v.contents[c] {
		return FateKept
	}
	fate := FateKept
	for _, p := range c.Parts {
		var f Fate
		switch {
		case p == nil || p.Thought:
			continue
		case p.FunctionCall != nil:
			f = FateLost
			if v.calls[p.FunctionCall.ID] {
				f = FateKept
			}
		case p.FunctionResponse != nil:
			f = v.placeResponse(p.FunctionResponse)
		case p.Text != "":
			f = FateLost
			if strings.Contains(v.text, p.Text) {
				f = FateKept
			}
		default:
			// A part of another kind is held only with its content.
			f = FateLost
		}
		fate = max(fate, f)
	}
	return fate
}

// placeResponse is the fate of function response r in the request.
func (v *requestView) placeResponse(r *genai.FunctionResponse) Fate {
	got, ok := v.responses[r.ID]
	switch {
	case !ok || got.Name != r.Name:
		return FateLost
	case got == r:
		return FateKept
	}
	if s, ok := got.Response[prunedKey].(string); ok && len(got.Response) == 1 && strings.Contains(s, r.Name) {
		return FatePruned
	}
	if jsonEqual(got.Response, r.Response) {
		return FateKept
	}
	return FateLost
}

// prunedKey is the key of a pruning placeholder's payload (README,
// Tool-result pruning).
const prunedKey = "pruned"

// jsonEqual reports whether a and b encode to the same JSON.
func jsonEqual(a, b any) bool {
	x, errA := json.Marshal(a)
	y, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(x, y)
}

// Excerpts: how a transcript shows a content (its parts' heads and tails,
// the middle of a long one cut out), and how the ledger recognises it.
const (
	// excerptHeadBytes and excerptTailBytes are how much of a part's start
	// and end a transcript must show for the part to count as summarized:
	// the shortest excerpt the summarizer input makes keeps more of both
	// (its head is two thirds of at least 200 bytes, its tail one third).
	excerptHeadBytes = 32
	excerptTailBytes = 16
)

// excerpts reports whether the transcript of the input shows every part of
// c, each by its head and, after it, its tail.
func (v *requestView) excerpts(c *genai.Content) bool {
	found := false
	for _, p := range c.Parts {
		var marker, body string
		switch {
		case p == nil || p.Thought:
			continue
		case p.FunctionCall != nil:
			marker, body = "called tool "+p.FunctionCall.Name+"] args: ", argsText(p.FunctionCall.Args)
		case p.FunctionResponse != nil:
			marker, body = "[tool "+p.FunctionResponse.Name+" returned] ", responseText(p.FunctionResponse)
		case p.Text != "":
			body = strings.ToValidUTF8(p.Text, "\uFFFD")
		default:
			return false
		}
		if !showsExcerpt(v.text, marker, body) {
			return false
		}
		found = true
	}
	return found
}

// showsExcerpt reports whether text holds marker followed by body's head,
// with body's tail after it (a short body whole).
func showsExcerpt(text, marker, body string) bool {
	if len(body) <= excerptHeadBytes+excerptTailBytes {
		return strings.Contains(text, marker+body)
	}
	h, t := head(body, excerptHeadBytes), tail(body, excerptTailBytes)
	needle := marker + h
	for from := 0; ; {
		i := strings.Index(text[from:], needle)
		if i < 0 {
			return false
		}
		at := from + i + len(needle)
		if strings.Contains(text[at:], t) {
			return true
		}
		from = at
	}
}

// responseText is a function response as a transcript shows it: the one
// string of a result such as {"output": "..."}, else its JSON.
func responseText(r *genai.FunctionResponse) string {
	if len(r.Response) == 1 {
		for _, v := range r.Response {
			if s, ok := v.(string); ok {
				return strings.ToValidUTF8(s, "\uFFFD")
			}
		}
	}
	return jsonText(r.Response)
}

// argsText is a call's arguments as a transcript shows them.
func argsText(args map[string]any) string {
	return jsonText(args)
}

// jsonText is v as a transcript shows a value: compact JSON, map keys
// sorted, <, > and & escaped (as encoding/json writes them).
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// head is s's first n bytes, cut at a rune boundary.
func head(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// tail is s's last n bytes, cut at a rune boundary.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}
