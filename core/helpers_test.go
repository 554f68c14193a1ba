package core

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/coretest"

	"github.com/adk-contextguard/contextguard/core/internal/countcache"
	"github.com/adk-contextguard/contextguard/core/internal/estimate"
	"github.com/adk-contextguard/contextguard/core/internal/state"
	"github.com/adk-contextguard/contextguard/core/internal/textcut"
)

// The engine's tests drive it through its seams with the small fakes
// below, as an adapter does (ARCHITECTURE.md, The engine and the ADK
// adapter): a map for the session state, a call context, and a summarizer
// model. beforeModel, afterModel and onModelError are the ADK v1 adapter's
// callbacks (adapter_adk.go of the root module) on these fakes.

// errNoKey is the fake state's "no such key" (ADK's
// session.ErrStateKeyNotExist), reported to the engine by testHost.
var errNoKey = errors.New("key does not exist")

// testHost is the Host of the tests' guards.
var testHost = Host{MissingKey: func(err error) bool { return errors.Is(err, errNoKey) }}

// mapState is a State over a map, safe for concurrent use.
type mapState struct {
	mu sync.Mutex
	m  map[string]any
}

func newMapState() *mapState { return &mapState{m: map[string]any{}} }

func (s *mapState) Get(k string) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[k]
	if !ok {
		return nil, errNoKey
	}
	return v, nil
}

func (s *mapState) Set(k string, v any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[k] = v
	return nil
}

func (s *mapState) All() iter.Seq2[string, any] {
	return func(yield func(string, any) bool) {
		s.mu.Lock()
		defer s.mu.Unlock()
		for k, v := range s.m {
			if !yield(k, v) {
				return
			}
		}
	}
}

// callbackCtx is what the tests' callbacks read of a call: the engine's
// Call, the agent's name and the session state (ADK's
// agent.CallbackContext).
type callbackCtx interface {
	Call
	AgentName() string
	State() State
	ReadonlyState() StateReader
}

// fakeCtx is a callbackCtx for driving the callbacks directly.
type fakeCtx struct {
	context.Context
	agentName string
	sessionID string
	user      *genai.Content
	state     *mapState
}

func newFakeCtx(agentName string) *fakeCtx {
	return &fakeCtx{Context: context.Background(), agentName: agentName, sessionID: "s1", state: newMapState()}
}

func (f *fakeCtx) UserContent() *genai.Content              { return f.user }
func (f *fakeCtx) InvocationID() string                     { return "inv" }
func (f *fakeCtx) AgentName() string                        { return f.agentName }
func (f *fakeCtx) ReadonlyState() StateReader               { return f.state }
func (f *fakeCtx) UserID() string                           { return "u" }
func (f *fakeCtx) AppName() string                          { return "app" }
func (f *fakeCtx) SessionID() string                        { return f.sessionID }
func (f *fakeCtx) Branch() string                           { return "" }
func (f *fakeCtx) State() State                             { return f.state }
func (f *fakeCtx) withUser(text string) *fakeCtx            { f.user = userMsg(text); return f }
func (f *fakeCtx) get(key string) any                       { v, _ := f.state.Get(key + f.agentName); return v }
func (f *fakeCtx) set(key string, v any)                    { _ = f.state.Set(key+f.agentName, v) }
func (f *fakeCtx) getInt(key string) int                    { n, _ := state.DecodeInt(f.get(key)); return n }
func (f *fakeCtx) getStr(key string) string                 { s, _ := f.get(key).(string); return s }
func (f *fakeCtx) withContext(ctx context.Context) *fakeCtx { f.Context = ctx; return f }

func userMsg(text string) *genai.Content  { return genai.NewContentFromText(text, genai.RoleUser) }
func modelMsg(text string) *genai.Content { return genai.NewContentFromText(text, genai.RoleModel) }

func callMsg(name string, args map[string]any) *genai.Content {
	return &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{Name: name, Args: args}}}}
}

func respMsg(name string, resp map[string]any) *genai.Content {
	return &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{Name: name, Response: resp}}}}
}

// fakeLLM is a model whose behaviour a test sets: the summarizer (it
// builds the request the root's LLMSummarizer sends) or a recovery model.
type fakeLLM struct {
	name  string
	mu    sync.Mutex
	calls int
	last  *Request
	reply func(ctx context.Context, req *Request) (string, error)
}

func (f *fakeLLM) Name() string { return f.name }

// ModelName names the model (ModelNamer), as the root's LLMSummarizer does.
func (f *fakeLLM) ModelName() (string, bool) { return f.name, true }

// generate answers req with the test's reply.
func (f *fakeLLM) generate(ctx context.Context, req *Request) (*Response, error) {
	f.mu.Lock()
	f.calls++
	f.last = req
	reply := f.reply
	f.mu.Unlock()
	text, err := reply(ctx, req)
	if err != nil {
		return nil, err
	}
	return &Response{Content: genai.NewContentFromText(text, genai.RoleModel)}, nil
}

// Summarize is the root's LLMSummarizer over this model: the same prompt,
// the same request and the same errors.
func (f *fakeLLM) Summarize(ctx context.Context, sr SummaryRequest) (string, error) {
	return llmSummarize(ctx, f.name, sr, f.generate)
}

// llmSummarize is the root's LLMSummarizer (summarizer_llm.go) over a model
// named name that answers with generate.
func llmSummarize(ctx context.Context, name string, sr SummaryRequest, generate func(context.Context, *Request) (*Response, error)) (string, error) {
	var req *Request
	if c := sr.Cached; c != nil {
		cfg := *c.Config
		req = &Request{Model: name, Contents: slices.Clone(c.Contents), Config: &cfg}
	} else {
		system, user, err := RenderSummaryPrompt(sr)
		if err != nil {
			return "", err
		}
		req = &Request{
			Model:    name,
			Contents: []*genai.Content{{Role: genai.RoleUser, Parts: []*genai.Part{{Text: user}}}},
			Config: &genai.GenerateContentConfig{
				SystemInstruction: &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: system}}},
			},
		}
		if sr.SummaryTokens > 0 {
			req.Config.MaxOutputTokens = int32(min(sr.SummaryTokens*2, 1<<30))
		}
	}
	resp, err := generate(ctx, req)
	if err != nil {
		return "", fmt.Errorf("contextguard: summarizer model %q: %w", name, err)
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("contextguard: summarizer model %q: %w", name, err)
	}
	var out strings.Builder
	if resp != nil && resp.Content != nil {
		for _, p := range resp.Content.Parts {
			if p != nil && !p.Thought {
				out.WriteString(p.Text)
			}
		}
	}
	return out.String(), nil
}

// testModel is a model of the tests that answers requests: a recovery
// model.
type testModel interface {
	HostModel
	generate(ctx context.Context, req *Request) (*Response, error)
}

func (f *fakeLLM) Calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

func (f *fakeLLM) lastInput() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.last == nil {
		return ""
	}
	return requestText(f.last)
}

func fixedSummary(s string) *fakeLLM {
	return &fakeLLM{name: "summarizer", reply: func(context.Context, *Request) (string, error) { return s, nil }}
}

func failingSummarizer(err error) *fakeLLM {
	return &fakeLLM{name: "summarizer", reply: func(context.Context, *Request) (string, error) { return "", err }}
}

// testSummaryTimeout is the summary timeout of the tests whose summarizer
// times out. Their guard runs on a fake clock, which the test moves past it:
// an hour, so that a timer on the real clock would never fire during the
// test, and the test would fail, not pass by luck.
const testSummaryTimeout = time.Hour

// slowSummarizer is a summarizer slower than testSummaryTimeout on clock:
// once called, it moves clock past the timeout (the guard's timer is armed
// before the call starts) and waits for its context to end. A context that
// never ends fails the call after hangBound, so a broken timeout fails the
// test instead of hanging it.
func slowSummarizer(clock *coretest.FakeClock) *fakeLLM {
	return &fakeLLM{name: "summarizer", reply: func(ctx context.Context, _ *Request) (string, error) {
		clock.Advance(testSummaryTimeout)
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(hangBound):
			return "", errors.New("the guard's clock never ended the call")
		}
	}}
}

// waitUntil waits until cond holds, yielding between looks; it fails the
// test when cond still does not hold after hangBound (the code under test is
// stuck). cond must become true by the test's own steps, never by time.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(hangBound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %v", what, hangBound)
		}
		runtime.Gosched()
		time.Sleep(time.Millisecond) // a back-off between looks, not a timing
	}
}

// sessionUsers is how many calls own or wait for c's session in g's table.
func sessionUsers(g *Guard, c Call) int {
	g.sessions.mu.Lock()
	defer g.sessions.mu.Unlock()
	el, ok := g.sessions.byKey[sessionKey(c)]
	if !ok {
		return 0
	}
	return el.Value.(*sessionEntry).users
}

var errBoom = errors.New("boom")

// testEst is the estimator the guard uses for the tests' model name.
var testEst = estimatorFor("gemini-2.5-flash")

// requestText flattens everything a request sends as text.
func requestText(req *Request) string {
	var b strings.Builder
	if req.Config != nil && req.Config.SystemInstruction != nil {
		b.WriteString(textcut.ContentText(req.Config.SystemInstruction))
	}
	for _, c := range req.Contents {
		b.WriteString("\n")
		b.WriteString(renderContent(c, excerptLimits{text: 1 << 30, toolArgs: 1 << 30, toolResult: 1 << 30}))
	}
	return b.String()
}

// logBuffer captures a guard's log output.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// newTestGuard builds a guard with one agent "a" and a captured log.
func newTestGuard(t testing.TB, llm HostModel, opts ...AgentOption) (*Guard, *logBuffer) {
	t.Helper()
	logs := &logBuffer{}
	g := newGuard(NewCrushRegistry(WithRegistryLogger(logs.logger())), WithLogger(logs.logger()))
	g.addModel("a", llm, opts...)
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	return g, logs
}

// newGuard is New with the tests' Host first, as an adapter passes its own,
// and a fake clock that no one moves unless the test passes its own
// (WithClock): no timeout of a test's guard fires because the machine is
// slow.
func newGuard(registry ModelRegistry, opts ...Option) *Guard {
	return New(registry, append([]Option{WithHost(testHost), WithClock(coretest.NewFakeClock(time.Time{}))}, opts...)...)
}

// summarizerOf is the summarizer of a model given to addModel, as the
// root's Add makes it: none for no model, an error for a typed nil.
func summarizerOf(llm HostModel) (Summarizer, error) {
	switch {
	case llm == nil:
		return nil, nil
	case IsNil(llm):
		return nil, fmt.Errorf("model is a nil %T", llm)
	}
	s, ok := llm.(Summarizer)
	if !ok {
		return nil, fmt.Errorf("model %T cannot summarize", llm)
	}
	return s, nil
}

// addModel is the root's Add with a model of the tests.
func (g *Guard) addModel(name string, llm HostModel, opts ...AgentOption) {
	s, err := summarizerOf(llm)
	g.Add(name, s, err, opts...)
}

// addDefaultModel is the root's AddDefault with a model of the tests.
func (g *Guard) addDefaultModel(llm HostModel, opts ...AgentOption) {
	s, err := summarizerOf(llm)
	g.AddDefault(s, err, opts...)
}

// agentConfigFor is the configuration the root's Add builds for llm.
func agentConfigFor(name, caller string, llm HostModel, opts []AgentOption) *Agent {
	s, err := summarizerOf(llm)
	return newAgentConfig(name, caller, s, err, opts)
}

// beforeModel is the root adapter's BeforeModelCallback on the tests'
// fakes: req's contents are rewritten in place.
func (g *Guard) beforeModel(c callbackCtx, req *Request) (*Response, error) {
	if c == nil || req == nil {
		if req == nil {
			g.Logger().Warn("contextguard: BeforeModelCallback called without a request; nothing to guard")
		}
		return nil, nil
	}
	a := g.AgentForCall(c.AgentName())
	if a == nil {
		return nil, nil
	}
	ro := c.ReadonlyState()
	if len(req.Contents) == 0 {
		g.Logger().Debug("contextguard: the request has no contents", "agent", a.Name(), "session", c.SessionID())
	}
	err := g.BeforeModel(c, c.State(), ro, a, fromTest(req), func(cs []*genai.Content) { req.Contents = cs })
	return nil, err
}

// afterModel is the root adapter's AfterModelCallback on the tests' fakes.
func (g *Guard) afterModel(c callbackCtx, resp *Response, respErr error) (*Response, error) {
	if c == nil || resp == nil || respErr != nil || !resp.NeedsGuard() {
		return nil, nil
	}
	a := g.Agent(c.AgentName())
	if a == nil {
		return nil, nil
	}
	content := g.AfterModel(c, a, c.State(), *resp)
	if content == nil {
		return nil, nil
	}
	out := *resp
	out.Content = content
	return &out, nil
}

// onModelError is the root adapter's OnModelErrorCallback on the tests'
// fakes: the recovery model is a *fakeLLM.
func (g *Guard) onModelError(c callbackCtx, req *Request, modelErr error) (*Response, error) {
	if c == nil || modelErr == nil {
		return nil, nil
	}
	a := g.Agent(c.AgentName())
	if a == nil || g.SwitchedOff(c.ReadonlyState()) {
		return nil, nil
	}
	ov, ok := AsContextOverflow(modelErr)
	if !ok {
		return nil, nil
	}
	st := c.State()
	rec, err := g.RecoverOverflow(c, st, c.ReadonlyState(), a, engineReq(req), ov, modelErr)
	if rec == nil {
		return nil, err
	}
	llm, _ := a.RecoveryModel().(testModel)
	out := *req
	out.Contents = rec.Contents()
	resp, err := CallBounded(c, func(ctx context.Context) (*Response, error) { return llm.generate(ctx, &out) })
	if err != nil {
		return nil, g.RecoveryFailed(c, st, a, rec, fmt.Errorf("contextguard: recovery model %q: %w", llm.Name(), err))
	}
	rec.Recovered()
	return resp, nil
}

// fromTest is the engine's view of a test's request, as the root adapter
// builds it from ADK's (fromADK).
func fromTest(req *Request) Request {
	return Request{Model: req.Model, Contents: req.Contents, Config: req.Config, Origin: req, Coverage: req.Coverage}
}

// newTestTurn builds a turn over req for calling the guard's steps directly.
func newTestTurn(req *Request, st state.Agent, log *slog.Logger) *turn {
	sess := newSessionEntry("", quietLog)
	ctx := newFakeCtx("a")
	return &turn{
		ctx:  ctx,
		ro:   ctx.state,
		cfg:  &Agent{name: "a", host: Host{}.withDefaults(SystemClock())},
		req:  *engineReq(req),
		prev: st,
		sess: sess,
		measure: measure{
			Raw:   req.Contents,
			Est:   countcache.Counter{Base: testEst, Cache: sess.cache},
			Fixed: estimate.Fixed(testEst, engineReq(req).Config),
		},
		base:  log,
		chain: countcache.Chain{Memo: &countcache.Memo{}},
	}
}

// engineReq is the engine's view of a test's request (fromTest), for
// calling the engine's steps directly; nil for nil.
func engineReq(req *Request) *Request {
	if req == nil {
		return nil
	}
	r := fromTest(req)
	return &r
}

// quietLogger discards the log of the tests that do not read it.
var quietLogger = slog.New(slog.DiscardHandler)
