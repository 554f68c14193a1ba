package contextguard

import (
	"context"
	"fmt"
	"iter"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/agent/llmagent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/runner"
	"google.golang.org/adk/v2/session"
)

// event builds a session event of author with content.
func event(id, author string, c *genai.Content) *session.Event {
	return &session.Event{ID: id, Author: author, LLMResponse: model.LLMResponse{Content: c}}
}

func inBranchEvent(e *session.Event, branch, scope string) *session.Event {
	e.Branch, e.IsolationScope = branch, scope
	return e
}

func userText(s string) *genai.Content { return genai.NewContentFromText(s, genai.RoleUser) }

func transcript(id string, input bool, text string) *session.Event {
	e := event(id, "user", nil)
	if input {
		e.InputTranscription = &genai.Transcription{Text: text}
	} else {
		e.OutputTranscription = &genai.Transcription{Text: text}
	}
	return e
}

func callContent(id, name string) *genai.Content {
	return &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{ID: id, Name: name}}}}
}

func respContent(id, name string, result any) *genai.Content {
	return &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{
		ID: id, Name: name, Response: map[string]any{"result": result},
	}}}}
}

// A plain conversation of the agent "bot": e1 user, e2 bot, e3 user.
func plainEvents() []*session.Event {
	return []*session.Event{
		event("e1", "user", userText("hello")),
		event("e2", "bot", modelText("hi")),
		event("e3", "user", userText("bye")),
	}
}

func plainContents() []*genai.Content {
	return []*genai.Content{userText("hello"), modelText("hi"), userText("bye")}
}

// Odd input: nothing panics, and every answer errs on the side of
// covering less.
func TestEventCoverage_OddInput(t *testing.T) {
	cases := []struct {
		name                 string
		events               []*session.Event
		agent, branch, scope string
		contents             []*genai.Content
		n                    int
		wantAnchor           string
		covering             string
		wantCovered          int
		wantOK               bool
	}{
		{name: "no events and no contents", n: 3, covering: "e1"},
		{name: "no contents", events: plainEvents(), agent: "bot", n: 2, covering: "e2", wantOK: true},
		{name: "an empty anchor names no event", events: plainEvents(), agent: "bot", contents: plainContents(), n: 2, wantAnchor: "e2", covering: ""},
		{name: "an unknown anchor names no event", events: plainEvents(), agent: "bot", contents: plainContents(), n: 2, wantAnchor: "e2", covering: "gone"},
		{name: "a negative count cuts nothing", events: plainEvents(), agent: "bot", contents: plainContents(), n: -4, covering: "e3", wantCovered: 3, wantOK: true},
		{name: "a count past the end cuts everything", events: plainEvents(), agent: "bot", contents: plainContents(), n: 9, wantAnchor: "e3", covering: "e1", wantCovered: 1, wantOK: true},
		{
			name:   "nil events, nil contents and nil parts are skipped",
			events: []*session.Event{nil, event("e1", "user", &genai.Content{Role: "user", Parts: []*genai.Part{nil, {Text: "hello"}}}), nil, event("e2", "bot", modelText("hi"))},
			agent:  "bot", contents: []*genai.Content{nil, {Role: "user", Parts: []*genai.Part{{Text: "hello"}, nil}}, nil, modelText("hi")},
			n: 2, wantAnchor: "e1", covering: "e2", wantCovered: 4, wantOK: true,
		},
		{
			name:   "events without parts or role build nothing",
			events: []*session.Event{event("e0", "user", &genai.Content{Role: "user"}), event("e1", "user", &genai.Content{Parts: []*genai.Part{{Text: "x"}}}), event("e2", "user", userText("hello")), event("e3", "bot", &genai.Content{Role: "model", Parts: []*genai.Part{{}}})},
			agent:  "bot", contents: []*genai.Content{userText("hello"), {Role: "model"}},
			n: 2, wantAnchor: "e2", covering: "e3", wantCovered: 1, wantOK: true,
		},
		{
			name:   "a duplicate ID names the first of its events only",
			events: []*session.Event{event("d", "user", userText("one")), event("e2", "bot", modelText("hi")), event("d", "user", userText("two"))},
			agent:  "bot", contents: []*genai.Content{userText("one"), modelText("hi"), userText("two")},
			n: 3, wantAnchor: "", covering: "d", wantCovered: 1, wantOK: true,
		},
		{
			name:   "a content another plugin added is built from no event",
			events: plainEvents(), agent: "bot",
			contents: []*genai.Content{userText("hello"), userText("memory: likes tea"), modelText("hi"), userText("bye")},
			n:        2, wantAnchor: "e1", covering: "e2", wantCovered: 3, wantOK: true,
		},
		{
			name:   "a content another plugin removed is skipped",
			events: plainEvents(), agent: "bot",
			contents: []*genai.Content{userText("hello"), userText("bye")},
			n:        1, wantAnchor: "e1", covering: "e2", wantCovered: 1, wantOK: true,
		},
		{
			name:   "a user's own text that reads For context: is the user's text",
			events: []*session.Event{event("e1", "user", &genai.Content{Role: "user", Parts: []*genai.Part{{Text: foreignMarker}, {Text: "[x] said: y"}}})},
			agent:  "bot", contents: []*genai.Content{{Role: "user", Parts: []*genai.Part{{Text: foreignMarker}, {Text: "[x] said: y"}}}},
			n: 1, wantAnchor: "e1", covering: "e1", wantCovered: 1, wantOK: true,
		},
		{
			name:   "another agent's event with a nil part is converted without it",
			events: []*session.Event{event("e1", "user", userText("go")), event("e2", "other", &genai.Content{Role: "model", Parts: []*genai.Part{nil, {Text: "done"}}})},
			agent:  "bot", contents: []*genai.Content{userText("go"), {Role: "user", Parts: []*genai.Part{{Text: foreignMarker}, {Text: "[other] said: done"}}}},
			n: 2, wantAnchor: "e2", covering: "e2", wantCovered: 2, wantOK: true,
		},
		{
			name:   "ADK's client call IDs are cleared in the request",
			events: []*session.Event{event("e1", "user", userText("go")), event("e2", "bot", callContent("adk-1", "f")), event("e3", "bot", respContent("adk-1", "f", 1))},
			agent:  "bot", contents: []*genai.Content{userText("go"), callContent("", "f"), respContent("", "f", 1)},
			n: 3, wantAnchor: "e3", covering: "e2", wantCovered: 2, wantOK: true,
		},
		{
			name: "the same text in another branch is not this branch's",
			events: []*session.Event{
				event("e1", "user", userText("go")),
				inBranchEvent(event("e2", "worker", modelText("ok")), "worker@0", ""),
				inBranchEvent(event("e3", "worker", modelText("ok")), "worker@1", ""),
			},
			agent: "worker", branch: "worker@1", contents: []*genai.Content{userText("go"), modelText("ok")},
			n: 2, wantAnchor: "e3", covering: "e2", wantCovered: 1, wantOK: true,
		},
		{
			name: "the same text in another isolation scope is not this scope's",
			events: []*session.Event{
				event("e1", "user", userText("go")),
				inBranchEvent(event("e2", "user", userText("go")), "", "fc-1"),
				inBranchEvent(event("e3", "task", modelText("ok")), "", "fc-1"),
			},
			agent: "task", scope: "fc-1", contents: []*genai.Content{userText("count"), userText("go"), modelText("ok")},
			n: 2, wantAnchor: "e2", covering: "e1", wantCovered: 0, wantOK: true,
		},
		{
			name: "ADK's own confirmation calls are not in the request, nor moved",
			events: []*session.Event{
				event("e1", "user", userText("go")),
				event("e2", "bot", callContent("k1", confirmationCallName)),
				event("e3", "bot", modelText("waiting")),
				event("e4", "user", respContent("k1", confirmationCallName, true)),
			},
			agent: "bot", contents: []*genai.Content{userText("go"), modelText("waiting"), userText(continueText)},
			n: 3, wantAnchor: "e3", covering: "e2", wantCovered: 1, wantOK: true,
		},
		{
			name: "a run of transcriptions is one content, anchored to its last event",
			events: []*session.Event{
				transcript("t1", true, "turn "), transcript("t2", true, "it on"), transcript("t3", false, "done"),
				event("e4", "user", userText("thanks")),
			},
			agent: "bot", contents: []*genai.Content{userText("turn it on"), modelText("done"), userText("thanks")},
			n: 1, wantAnchor: "t2", covering: "t3", wantCovered: 2, wantOK: true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newEventCoverage(tc.events, tc.agent, tc.branch, tc.scope)
			require.NotPanics(t, func() {
				assert.Equal(t, tc.wantAnchor, c.Anchor(tc.contents, tc.n))
				n, ok := c.Covered(tc.contents, tc.covering)
				assert.Equal(t, tc.wantOK, ok)
				assert.Equal(t, tc.wantCovered, n)
			})
		})
	}
}

// Without a context (or a session) the coverage knows no event.
func TestEventCoverage_NilContext(t *testing.T) {
	c := newCoverage(nil)
	assert.Empty(t, c.Anchor(plainContents(), 2))
	_, ok := c.Covered(plainContents(), "e1")
	assert.False(t, ok)
}

// BenchmarkEventCoverage measures one model call's work at 1,000 events:
// building the coverage, naming a cut and finding it again.
func BenchmarkEventCoverage(b *testing.B) {
	const turns = 250 // 4 events a turn: user, call, answer, model text
	var events []*session.Event
	var contents []*genai.Content
	for i := range turns {
		call := fmt.Sprintf("adk-%d", i)
		text := fmt.Sprintf("turn %d: %s", i, longText)
		events = append(events,
			event(fmt.Sprintf("u%d", i), "user", userText(text)),
			event(fmt.Sprintf("c%d", i), "bot", callContent(call, "lookup")),
			event(fmt.Sprintf("r%d", i), "bot", respContent(call, "lookup", text)),
			event(fmt.Sprintf("m%d", i), "bot", modelText(text)),
		)
		contents = append(contents, userText(text), callContent("", "lookup"), respContent("", "lookup", text), modelText(text))
	}
	b.ReportAllocs()
	for b.Loop() {
		c := newEventCoverage(events, "bot", "", "")
		anchor := c.Anchor(contents, len(contents)/2)
		if n, ok := c.Covered(contents, anchor); !ok || n != len(contents)/2 {
			b.Fatalf("covered %d, %v", n, ok)
		}
	}
}

// longText stands for a model turn of a few kilobytes.
var longText = string(make([]byte, 4096))

// fuzzIDs are the event IDs a fuzzed session draws from: few, so that
// duplicates are common.
var fuzzIDs = []string{"", "e0", "e1", "e2", "e3", "e4", "e5", "e6"}

// fuzzSession decodes data into a session's events, the agent's branch and
// scope, and a request: each event's content as ADK would send it, then
// perturbed (contents dropped, repeated, or added from no event, such as
// the synthetic continue message and another agent's "For context:").
func fuzzSession(data []byte) (events []*session.Event, branch, scope string, contents []*genai.Content) {
	next := func() byte {
		if len(data) == 0 {
			return 0
		}
		b := data[0]
		data = data[1:]
		return b
	}
	branches := []string{"", "bot@0", "bot@1"}
	scopes := []string{"", "fc-1"}
	authors := []string{"user", "bot", "other"}
	texts := []string{"go", "ok", "", foreignMarker, continueText}
	branch, scope = branches[int(next())%len(branches)], scopes[int(next())%len(scopes)]
	for n := int(next()) % 24; n > 0; n-- {
		op, id := next(), fuzzIDs[int(next())%len(fuzzIDs)]
		call := fmt.Sprintf("adk-%d", next()%4)
		var c *genai.Content
		switch op % 7 {
		case 0:
			c = userText(texts[int(op/7)%len(texts)])
		case 1:
			c = modelText(texts[int(op/7)%len(texts)])
		case 2:
			c = callContent(call, "f")
		case 3:
			c = respContent(call, "f", int(op))
		case 4:
			c = &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{nil, {Text: "x"}}}
		}
		e := event(id, authors[int(op/3)%len(authors)], c)
		if op%7 == 5 {
			e = transcript(id, op%2 == 0, texts[int(op/7)%len(texts)])
		}
		if op%7 == 6 {
			e = nil
		}
		if e != nil {
			e.Branch, e.IsolationScope = branches[int(op/5)%len(branches)], scopes[int(op/11)%len(scopes)]
			if c != nil {
				contents = append(contents, c)
			}
		}
		events = append(events, e)
	}
	for len(data) > 0 {
		switch op, at := next(), int(next()); {
		case len(contents) == 0 || op%4 == 0:
			contents = append(contents, userText(continueText))
		case op%4 == 1:
			contents = append(contents[:at%len(contents)], contents[at%len(contents)+1:]...)
		case op%4 == 2:
			contents = append(contents, contents[at%len(contents)])
		default:
			contents = append(contents, nil)
		}
	}
	return events, branch, scope, contents
}

// FuzzEventCoverage: on any session and request, nothing panics, an anchor
// names an event of the session, and a cut named by Anchor is found again by
// Covered at no more contents than it was named for.
func FuzzEventCoverage(f *testing.F) {
	f.Add([]byte{0, 0, 4, 0, 1, 0, 1, 2, 0, 2, 3, 0, 3, 1, 0}, 2)
	f.Add([]byte{1, 1, 6, 14, 1, 0, 2, 2, 1, 3, 3, 1, 5, 4, 2, 6, 5, 3, 0, 6, 0, 1, 0, 2, 3}, 4)
	f.Add([]byte{2, 0, 3, 7, 1, 0, 21, 2, 0, 35, 3, 0, 0, 0, 2, 1}, -1)
	f.Fuzz(func(t *testing.T, data []byte, n int) {
		events, branch, scope, contents := fuzzSession(data)
		c := newEventCoverage(events, "bot", branch, scope)
		anchor := c.Anchor(contents, n)
		if anchor == "" {
			for _, id := range fuzzIDs[1:] {
				if got, ok := c.Covered(contents, id); ok {
					require.GreaterOrEqual(t, got, 0)
					require.LessOrEqual(t, got, len(contents))
				}
			}
			return
		}
		require.GreaterOrEqual(t, c.indexOf(anchor), 0, "the anchor %q names no event", anchor)
		got, ok := c.Covered(contents, anchor)
		require.True(t, ok, "the anchor %q Anchor named is not found", anchor)
		require.GreaterOrEqual(t, got, 1)
		require.LessOrEqual(t, got, min(max(n, 0), len(contents)), "the cut found covers more than it was named for")
	})
}

// reloadingService is a session service whose sessions list their events
// as a database-backed service may: each load (Get) gives the events new
// IDs (newIDs), or each read of the event list gives them in another order
// (unstable: no stable ORDER BY, so the request ADK builds and the list the
// guard reads disagree).
type reloadingService struct {
	session.Service
	newIDs, unstable bool
	mu               sync.Mutex
	loads, reads     int
}

func (s *reloadingService) Get(ctx context.Context, req *session.GetRequest) (*session.GetResponse, error) {
	resp, err := s.Service.Get(ctx, req)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.loads++
	load := s.loads
	s.mu.Unlock()
	resp.Session = &reloadedSession{Session: resp.Session, svc: s, load: load}
	return resp, nil
}

func (s *reloadingService) AppendEvent(ctx context.Context, sess session.Session, ev *session.Event) error {
	if r, ok := sess.(*reloadedSession); ok {
		sess = r.Session
	}
	return s.Service.AppendEvent(ctx, sess, ev)
}

// reloadedSession is one load of a session of a reloadingService.
type reloadedSession struct {
	session.Session
	svc  *reloadingService
	load int
}

func (r *reloadedSession) Events() session.Events {
	var evs eventList
	for e := range r.Session.Events().All() {
		cp := *e
		if r.svc.newIDs {
			cp.ID = fmt.Sprintf("%s@load%d", e.ID, r.load)
		}
		evs = append(evs, &cp)
	}
	if r.svc.unstable {
		r.svc.mu.Lock()
		r.svc.reads++
		odd := r.svc.reads%2 == 1
		r.svc.mu.Unlock()
		if odd {
			// Events of the same second come back in either order: the
			// user's message and the answer to it swap.
			for i := 0; i+2 < len(evs); i += 2 {
				evs[i], evs[i+1] = evs[i+1], evs[i]
			}
		}
	}
	return evs
}

// eventList is a session's events as a slice.
type eventList []*session.Event

func (l eventList) All() iter.Seq[*session.Event] {
	return func(yield func(*session.Event) bool) {
		for _, e := range l {
			if !yield(e) {
				return
			}
		}
	}
}
func (l eventList) Len() int                { return len(l) }
func (l eventList) At(i int) *session.Event { return l[i] }

// echoLLM answers every request with the last user text it holds, so each
// turn adds two long messages.
type echoLLM struct{}

func (echoLLM) Name() string { return "gemini-2.5-flash" }

func (echoLLM) GenerateContent(_ context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	last := ""
	for _, c := range req.Contents {
		if c != nil && c.Role == genai.RoleUser && len(c.Parts) > 0 && c.Parts[0] != nil {
			last = c.Parts[0].Text
		}
	}
	return func(yield func(*model.LLMResponse, error) bool) {
		yield(&model.LLMResponse{Content: modelText("noted: " + last), TurnComplete: true}, nil)
	}
}

// countingSummarizer counts its calls and returns a short summary.
type countingSummarizer struct {
	mu    sync.Mutex
	calls int
}

func (s *countingSummarizer) Summarize(context.Context, SummaryRequest) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	return fmt.Sprintf("SUMMARY %d: the user sent numbered reports; each was noted.", s.calls), nil
}

// playReports plays turns of long user reports through the v2 runner with
// the guard installed, on svc, and returns the summarizer's calls and the
// compactions made.
func playReports(t *testing.T, svc session.Service, turns int) (calls, compactions int) {
	t.Helper()
	sum := &countingSummarizer{}
	var mu sync.Mutex
	g := New(nil, WithLogger(slog.New(slog.DiscardHandler)), WithOnCompaction(func(context.Context, CompactionEvent) {
		mu.Lock()
		compactions++
		mu.Unlock()
	}))
	// Every compaction in the model call: the run's end reads the event
	// list once more, in yet another order on an unstable service, and may
	// then leave a compaction between turns to the next model call, which
	// makes the counts compared here differ by one.
	g.Add("bot", nil, WithSummarizer(sum), WithMaxTokens(32_000), WithTriggerTokens(6_000), WithBetweenTurns(BetweenTurnsOff))
	require.NoError(t, g.Err())
	bot, err := llmagent.New(llmagent.Config{Name: "bot", Model: echoLLM{}, Instruction: "Note each report."})
	require.NoError(t, err)
	r, err := runner.New(runner.Config{AppName: testApp, Agent: bot, SessionService: svc, PluginConfig: g.PluginConfig(), AutoCreateSession: true})
	require.NoError(t, err)
	for turn := range turns {
		report := fmt.Sprintf("report %d: %s", turn, strings.Repeat(fmt.Sprintf("metric-%d is stable at %d ms; ", turn, turn*7), 120))
		for _, err := range r.Run(t.Context(), testUser, testSession, genai.NewContentFromText(report, genai.RoleUser), agent.RunConfig{}) {
			require.NoError(t, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	return sum.calls, compactions
}

// TestCoverage_UnstableSessionDegradesToPositionAndFingerprint: a session
// service whose event IDs change between loads, or whose event list comes
// back in another order than the request was built in, makes the stored
// anchor useless; the summary is then placed by its stored position and
// fingerprint, as with ADK v1, so each compaction costs one summarizer call
// and the session compacts no more often than on a stable service.
func TestCoverage_UnstableSessionDegradesToPositionAndFingerprint(t *testing.T) {
	const turns = 14
	stableCalls, stable := playReports(t, session.InMemoryService(), turns)
	require.Positive(t, stable, "the stable session compacts")
	require.Equal(t, stable, stableCalls, "one summarizer call per compaction")
	for _, tt := range []struct {
		name string
		svc  *reloadingService
	}{
		{"event IDs that change between loads", &reloadingService{Service: session.InMemoryService(), newIDs: true}},
		{"events out of the request's order", &reloadingService{Service: session.InMemoryService(), unstable: true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			calls, compactions := playReports(t, tt.svc, turns)
			t.Logf("%d summarizer calls, %d compactions (stable session: %d)", calls, compactions, stable)
			assert.Equal(t, compactions, calls, "one summarizer call per compaction")
			assert.LessOrEqual(t, compactions, stable, "no more compactions than on a stable session")
		})
	}
}

// conversation is 25 events of the agent "bot" (users and answers,
// alternating) and the contents ADK builds from them.
func conversation() ([]*session.Event, []*genai.Content) {
	var events []*session.Event
	var contents []*genai.Content
	for i := range 25 {
		text := fmt.Sprintf("message %d", i)
		if i%2 == 0 {
			events = append(events, event(fmt.Sprintf("e%d", i), "user", userText(text)))
			contents = append(contents, userText(text))
		} else {
			events = append(events, event(fmt.Sprintf("e%d", i), "bot", modelText(text)))
			contents = append(contents, modelText(text))
		}
	}
	return events, contents
}

// TestEventCoverage_WeakMappingNamesNoEvent: a cut is named only when the
// contents it covers match the session's events (strongCut); a weak
// mapping names no event, and the engine keeps the cut's position and
// fingerprint. A request that lacks only the oldest expected contents (an
// agent that sees its current turn only) still names its cut.
func TestEventCoverage_WeakMappingNamesNoEvent(t *testing.T) {
	tests := []struct {
		name string
		// request turns the contents ADK built into the request's.
		request func(cs []*genai.Content) []*genai.Content
		n       int
		want    string
	}{
		{"the contents as built", func(cs []*genai.Content) []*genai.Content { return cs }, 24, "e23"},
		{"events out of the request's order: the request reversed", func(cs []*genai.Content) []*genai.Content {
			out := append([]*genai.Content(nil), cs...)
			slices.Reverse(out)
			return out
		}, 24, ""},
		{"events out of the request's order: each message and its answer swapped", func(cs []*genai.Content) []*genai.Content {
			out := append([]*genai.Content(nil), cs...)
			for i := 0; i+1 < 24; i += 2 {
				out[i], out[i+1] = out[i+1], out[i]
			}
			return out
		}, 24, ""},
		{"1 of 25 contents matches: the others rewritten by another plugin", func(cs []*genai.Content) []*genai.Content {
			out := make([]*genai.Content, len(cs))
			for i, c := range cs {
				out[i] = &genai.Content{Role: c.Role, Parts: []*genai.Part{{Text: strings.Repeat("*", len(c.Parts[0].Text))}}}
			}
			out[23] = cs[23]
			return out
		}, 24, ""},
		{"an expected content missing inside the cut", func(cs []*genai.Content) []*genai.Content {
			return slices.Delete(append([]*genai.Content(nil), cs...), 10, 11)
		}, 20, ""},
		{"one content another plugin added inside the cut", func(cs []*genai.Content) []*genai.Content {
			return slices.Insert(append([]*genai.Content(nil), cs...), 10, userText("memory: likes tea"))
		}, 21, "e19"},
		{"only the oldest expected contents missing (current turn only)", func(cs []*genai.Content) []*genai.Content {
			return cs[20:]
		}, 3, "e22"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			events, built := conversation()
			c := newEventCoverage(events, "bot", "", "")
			assert.Equal(t, tt.want, c.Anchor(tt.request(built), tt.n))
		})
	}
}
