package plugintest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/session"
	"google.golang.org/genai"

	. "github.com/adk-contextguard/contextguard"
)

// mapState is a session.State over a map, safe for concurrent use.
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
		return nil, session.ErrStateKeyNotExist
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

// fakeCtx is an agent.CallbackContext for driving the callbacks directly.
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

func (f *fakeCtx) UserContent() *genai.Content          { return f.user }
func (f *fakeCtx) InvocationID() string                 { return "inv" }
func (f *fakeCtx) AgentName() string                    { return f.agentName }
func (f *fakeCtx) ReadonlyState() session.ReadonlyState { return f.state }
func (f *fakeCtx) UserID() string                       { return "u" }
func (f *fakeCtx) AppName() string                      { return "app" }
func (f *fakeCtx) SessionID() string                    { return f.sessionID }
func (f *fakeCtx) Branch() string                       { return "" }
func (f *fakeCtx) Artifacts() agent.Artifacts           { return nil }
func (f *fakeCtx) State() session.State                 { return f.state }

// fakeLLM is a summarizer model whose behaviour a test sets.
type fakeLLM struct {
	name  string
	mu    sync.Mutex
	calls int
	last  *model.LLMRequest
	reply func(ctx context.Context, req *model.LLMRequest) (string, error)
}

func (f *fakeLLM) Name() string { return f.name }

func (f *fakeLLM) GenerateContent(ctx context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		f.mu.Lock()
		f.calls++
		f.last = req
		reply := f.reply
		f.mu.Unlock()
		text, err := reply(ctx, req)
		if err != nil {
			yield(nil, err)
			return
		}
		yield(&model.LLMResponse{Content: genai.NewContentFromText(text, genai.RoleModel)}, nil)
	}
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
	return &fakeLLM{name: "summarizer", reply: func(context.Context, *model.LLMRequest) (string, error) { return s, nil }}
}

var errBoom = errors.New("boom")

// requestText flattens everything a request sends as text.
func requestText(req *model.LLMRequest) string {
	var b strings.Builder
	if req.Config != nil && req.Config.SystemInstruction != nil {
		b.WriteString(renderText(req.Config.SystemInstruction))
	}
	for _, c := range req.Contents {
		b.WriteString("\n")
		b.WriteString(renderText(c))
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
func newTestGuard(t testing.TB, llm model.LLM, opts ...AgentOption) (*ContextGuard, *logBuffer) {
	t.Helper()
	logs := &logBuffer{}
	g := New(NewCrushRegistry(WithRegistryLogger(logs.logger())), WithLogger(logs.logger()))
	g.Add("a", llm, opts...)
	if err := g.Err(); err != nil {
		t.Fatal(err)
	}
	return g, logs
}

// renderText is everything c carries as text: its texts, and its tool calls
// and results as their name and JSON.
func renderText(c *genai.Content) string {
	if c == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range c.Parts {
		switch {
		case p == nil:
		case p.FunctionCall != nil:
			fmt.Fprintf(&b, "%s(%s)\n", p.FunctionCall.Name, compactJSON(p.FunctionCall.Args))
		case p.FunctionResponse != nil:
			fmt.Fprintf(&b, "%s -> %s\n", p.FunctionResponse.Name, compactJSON(p.FunctionResponse.Response))
		default:
			b.WriteString(p.Text)
			b.WriteString("\n")
		}
	}
	return b.String()
}
