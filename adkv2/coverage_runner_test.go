package contextguard

import (
	"context"
	"fmt"
	"iter"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/agent/llmagent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/plugin"
	"google.golang.org/adk/v2/runner"
	"google.golang.org/adk/v2/session"
	"google.golang.org/adk/v2/tool"
)

// testApp, testUser and testSession name the one session of a scenario.
const (
	testApp     = "coverage"
	testUser    = "ana"
	testSession = "s1"
)

// scriptedModel answers each call of its agent with the next response of
// its script (a repeat of the last one once the script is used up).
type scriptedModel struct {
	mu     sync.Mutex
	script []*genai.Content
	calls  int
}

func (m *scriptedModel) Name() string { return "scripted" }

func (m *scriptedModel) GenerateContent(_ context.Context, _ *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	m.mu.Lock()
	var c *genai.Content
	if len(m.script) > 0 {
		c = m.script[min(m.calls, len(m.script)-1)]
	}
	m.calls++
	m.mu.Unlock()
	return func(yield func(*model.LLMResponse, error) bool) {
		yield(&model.LLMResponse{Content: c, TurnComplete: true}, nil)
	}
}

func modelText(s string) *genai.Content { return genai.NewContentFromText(s, genai.RoleModel) }

func modelCall(id, name string, args map[string]any) *genai.Content {
	return &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{ID: id, Name: name, Args: args}}}}
}

// modelCallRecord is what the plugin saw at one model call.
type modelCallRecord struct {
	agent    string
	branch   string
	scope    string
	contents []*genai.Content
	coverage *eventCoverage
}

// recorder is a plugin whose BeforeModel callback records every request.
type recorder struct {
	mu    sync.Mutex
	calls []modelCallRecord
}

func (r *recorder) plugin(t *testing.T) *plugin.Plugin {
	t.Helper()
	p, err := plugin.New(plugin.Config{
		Name: "recorder",
		BeforeModelCallback: func(ctx agent.Context, req *model.LLMRequest) (*model.LLMResponse, error) {
			rec := modelCallRecord{
				agent:    ctx.AgentName(),
				branch:   ctx.Branch(),
				scope:    ctx.WithICDelta(nil).IsolationScope(),
				contents: append([]*genai.Content(nil), req.Contents...),
				coverage: newCoverage(ctx),
			}
			r.mu.Lock()
			r.calls = append(r.calls, rec)
			r.mu.Unlock()
			return nil, nil
		},
	})
	require.NoError(t, err)
	return p
}

// of returns the recorded calls of one agent, in order.
func (r *recorder) of(name string) []modelCallRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []modelCallRecord
	for _, c := range r.calls {
		if c.agent == name {
			out = append(out, c)
		}
	}
	return out
}

// harness runs a root agent through the real runner, in one session.
type harness struct {
	t   *testing.T
	r   *runner.Runner
	rec *recorder
}

func newHarness(t *testing.T, root agent.Agent) *harness {
	t.Helper()
	rec := &recorder{}
	r, err := runner.New(runner.Config{
		AppName:           testApp,
		Agent:             root,
		SessionService:    session.InMemoryService(),
		PluginConfig:      runner.PluginConfig{Plugins: []*plugin.Plugin{rec.plugin(t)}},
		AutoCreateSession: true,
	})
	require.NoError(t, err)
	return &harness{t: t, r: r, rec: rec}
}

// run sends one user message and drains the invocation.
func (h *harness) run(msg *genai.Content) []*session.Event {
	h.t.Helper()
	var events []*session.Event
	for ev, err := range h.r.Run(h.t.Context(), testUser, testSession, msg, agent.RunConfig{}) {
		require.NoError(h.t, err)
		events = append(events, ev)
	}
	return events
}

func llmAgent(t *testing.T, name string, m model.LLM, tools ...tool.Tool) agent.Agent {
	t.Helper()
	a, err := llmagent.New(llmagent.Config{Name: name, Model: m, Tools: tools, Instruction: "You are " + name + "."})
	require.NoError(t, err)
	return a
}

// identity names a content by its role and parts, so a content can be
// recognised in a later request (ADK clones contents for every request).
func identity(c *genai.Content) string {
	if c == nil {
		return "<nil>"
	}
	var b strings.Builder
	b.WriteString(c.Role)
	for _, p := range c.Parts {
		switch {
		case p == nil:
			b.WriteString("|nil")
		case p.FunctionCall != nil:
			fmt.Fprintf(&b, "|call %s %s", p.FunctionCall.Name, p.FunctionCall.ID)
		case p.FunctionResponse != nil:
			fmt.Fprintf(&b, "|resp %s %s %v", p.FunctionResponse.Name, p.FunctionResponse.ID, p.FunctionResponse.Response)
		default:
			fmt.Fprintf(&b, "|%q", p.Text)
		}
	}
	return b.String()
}

func identities(cs []*genai.Content) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = identity(c)
	}
	return out
}
