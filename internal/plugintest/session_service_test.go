package plugintest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/platform"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool"
	"google.golang.org/genai"

	. "github.com/adk-contextguard/contextguard"
)

const (
	fxApp, fxUser, fxSession, fxAgent = "app", "u", "s", "assistant"
	// fxWindow is the agent's window; its trigger is 80% of it.
	fxWindow    = 8_000
	fxThreshold = 6_400
)

// fxNow is the time the fixture's runs see.
var fxNow = time.Date(2026, 3, 14, 15, 9, 26, 535_000_000, time.UTC)

type fixtureConfig struct {
	llm model.LLM
	sum model.LLM
	// tools builds the agent's tools, which may use the guard.
	tools func(g *ContextGuard) []tool.Tool
	// state is the session's initial state.
	state map[string]any
	// opts are the agent's options beside its window.
	opts []AgentOption
}

type fixture struct {
	t    *testing.T
	ctx  context.Context
	g    *ContextGuard
	svc  session.Service
	r    *runner.Runner
	logs *logBuffer

	mu     sync.Mutex
	events []CompactionEvent
}

func newFixture(t *testing.T, cfg fixtureConfig) *fixture {
	t.Helper()
	f := &fixture{t: t, svc: session.InMemoryService(), logs: &logBuffer{}}
	f.ctx = platform.WithTimeProvider(context.Background(), func() time.Time { return fxNow })
	f.g = New(NewCrushRegistry(WithRegistryLogger(quietLogger)), WithLogger(f.logs.logger()), WithSessionService(f.svc),
		WithOnCompaction(func(_ context.Context, ev CompactionEvent) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.events = append(f.events, ev)
		}))
	f.g.Add(fxAgent, cfg.sum, append([]AgentOption{WithMaxTokens(fxWindow)}, cfg.opts...)...)
	require.NoError(t, f.g.Err())
	var tools []tool.Tool
	if cfg.tools != nil {
		tools = cfg.tools(f.g)
	}
	a, err := llmagent.New(llmagent.Config{Name: fxAgent, Model: cfg.llm, Instruction: "Answer the user.", Tools: tools})
	require.NoError(t, err)
	f.r, err = runner.New(runner.Config{AppName: fxApp, Agent: a, SessionService: f.svc, PluginConfig: f.g.PluginConfig()})
	require.NoError(t, err)
	_, err = f.svc.Create(f.ctx, &session.CreateRequest{AppName: fxApp, UserID: fxUser, SessionID: fxSession, State: cfg.state})
	require.NoError(t, err)
	return f
}

// turn runs one user message of about size bytes, tagged with its index,
// and fails the test on any error.
func (f *fixture) turn(i, size int) {
	f.t.Helper()
	msg := genai.NewContentFromText(fmt.Sprintf("USER-%d %s", i, filler(size, 100+i)), genai.RoleUser)
	for _, err := range f.r.Run(f.ctx, fxUser, fxSession, msg, agent.RunConfig{}) {
		require.NoError(f.t, err, "turn %d", i)
	}
}

// compactions returns the compaction events so far.
func (f *fixture) compactions() []CompactionEvent {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]CompactionEvent(nil), f.events...)
}

// usage is the agent's Usage read with the session service.
func (f *fixture) usage() Usage {
	f.t.Helper()
	u, err := f.g.Usage(f.ctx, f.svc, fxApp, fxUser, fxSession, fxAgent)
	require.NoError(f.t, err)
	return u
}

// session reads the stored session.
func (f *fixture) session() session.Session {
	f.t.Helper()
	resp, err := f.svc.Get(f.ctx, &session.GetRequest{AppName: fxApp, UserID: fxUser, SessionID: fxSession})
	require.NoError(f.t, err)
	return resp.Session
}

// state is the stored value of key, nil when absent.
func (f *fixture) state(key string) any {
	f.t.Helper()
	v, _ := f.session().State().Get(key)
	return v
}

// TestOutOfBandAPI_BadInput: the API for applications that hold only the
// session service and IDs says clearly what is wrong, never panics, and
// keeps session.ErrNotFound visible for an unknown session.
func TestOutOfBandAPI_BadInput(t *testing.T) {
	f := newFixture(t, fixtureConfig{llm: fixedSummary("unused"), sum: fixedSummary("unused")})
	var nilGuard *ContextGuard
	calls := []struct {
		name string
		call func(g *ContextGuard, svc session.Service, app, user, sess, agentName string) error
	}{
		{"Usage", func(g *ContextGuard, svc session.Service, app, user, sess, agentName string) error {
			_, err := g.Usage(f.ctx, svc, app, user, sess, agentName)
			return err
		}},
		{"RequestCompaction", func(g *ContextGuard, svc session.Service, app, user, sess, agentName string) error {
			return g.RequestCompaction(f.ctx, svc, app, user, sess, agentName, "focus")
		}},
		{"DisableSession", func(g *ContextGuard, svc session.Service, app, user, sess, _ string) error {
			return g.DisableSession(f.ctx, svc, app, user, sess)
		}},
		{"EnableSession", func(g *ContextGuard, svc session.Service, app, user, sess, _ string) error {
			return g.EnableSession(f.ctx, svc, app, user, sess)
		}},
	}
	tests := []struct {
		name                   string
		g                      *ContextGuard
		svc                    session.Service
		app, user, sess, agent string
		// perAgent marks a mistake only the calls that take an agent see.
		perAgent bool
		want     string
		notFound bool
	}{
		{name: "nil guard", g: nilGuard, svc: f.svc, app: fxApp, user: fxUser, sess: fxSession, agent: fxAgent, want: "the guard is nil"},
		{name: "nil session service", g: f.g, app: fxApp, user: fxUser, sess: fxSession, agent: fxAgent, want: "the session service is nil"},
		{name: "no session ID", g: f.g, svc: f.svc, app: fxApp, user: fxUser, agent: fxAgent, want: "session ID are all required"},
		{name: "no user ID", g: f.g, svc: f.svc, app: fxApp, sess: fxSession, agent: fxAgent, want: "session ID are all required"},
		{name: "unknown session", g: f.g, svc: f.svc, app: fxApp, user: fxUser, sess: "nope", agent: fxAgent, want: `reading session "nope"`, notFound: true},
		{name: "another user's session", g: f.g, svc: f.svc, app: fxApp, user: "someone-else", sess: fxSession, agent: fxAgent, want: `reading session "s"`, notFound: true},
		{name: "agent not guarded", g: f.g, svc: f.svc, app: fxApp, user: fxUser, sess: fxSession, agent: "stranger", perAgent: true, want: `agent "stranger" is not guarded`},
		{name: "no agent name", g: f.g, svc: f.svc, app: fxApp, user: fxUser, sess: fxSession, perAgent: true, want: "the agent name is empty"},
	}
	for _, tt := range tests {
		for _, c := range calls {
			t.Run(tt.name+"/"+c.name, func(t *testing.T) {
				err := c.call(tt.g, tt.svc, tt.app, tt.user, tt.sess, tt.agent)
				if tt.perAgent && (c.name == "DisableSession" || c.name == "EnableSession") {
					require.NoError(t, err, "the switch is per session")
					return
				}
				require.ErrorContains(t, err, tt.want)
				require.Equal(t, tt.notFound, errors.Is(err, session.ErrNotFound))
			})
		}
	}
}
