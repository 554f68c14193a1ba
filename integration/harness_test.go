package integration

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/plugin"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard"
)

const (
	appName = "contextguard-integration"
	userID  = "user-1"
)

// stateKey is the session-state key the guard uses for name (see the
// README's state table), for the test agent.
func stateKey(name string) string { return "__context_guard_" + name + "_" + agentName }

// logRecorder is a slog handler that keeps the messages of warnings and
// errors, so a test can assert the guard never had to skip its summary.
type logRecorder struct {
	mu   sync.Mutex
	msgs []string
}

func (l *logRecorder) Enabled(_ context.Context, lv slog.Level) bool { return lv >= slog.LevelWarn }

func (l *logRecorder) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	l.mu.Lock()
	l.msgs = append(l.msgs, b.String())
	l.mu.Unlock()
	return nil
}

func (l *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logRecorder) WithGroup(string) slog.Handler      { return l }

// Messages returns the warnings and errors logged so far.
func (l *logRecorder) Messages() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.msgs...)
}

// compaction is one compaction the guard reported, with where it happened.
type compaction struct {
	Replica string
	Turn    int
	Event   contextguard.CompactionEvent
}

// compactionLog collects the OnCompaction events of every guard of a test.
type compactionLog struct {
	mu     sync.Mutex
	turn   int
	events []compaction
}

func (c *compactionLog) setTurn(n int) {
	c.mu.Lock()
	c.turn = n
	c.mu.Unlock()
}

func (c *compactionLog) hook(replica string) func(context.Context, contextguard.CompactionEvent) {
	return func(_ context.Context, ev contextguard.CompactionEvent) {
		c.mu.Lock()
		c.events = append(c.events, compaction{Replica: replica, Turn: c.turn, Event: ev})
		c.mu.Unlock()
	}
}

// Events returns the compactions so far.
func (c *compactionLog) Events() []compaction {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]compaction(nil), c.events...)
}

// replica is everything one process builds: a session service on its own
// database handle, a guard, an agent and a runner.
type replica struct {
	name   string
	guard  *contextguard.ContextGuard
	runner *runner.Runner
}

// replicaConfig is what a replica is built from.
type replicaConfig struct {
	name        string
	svc         session.Service
	agentLLM    model.LLM
	summarizer  model.LLM
	window      int
	outputBytes int
	log         *compactionLog
	logs        *logRecorder
	// extra plugins run after the guard's.
	extra []*plugin.Plugin
	// counter, when set, is the agent's TokenCounter.
	counter contextguard.TokenCounter
	// inlineOnly compacts only in the model call that needs it: no
	// compaction between turns, no summary prepared while tools run.
	inlineOnly bool
}

func newReplica(t *testing.T, cfg replicaConfig) *replica {
	t.Helper()
	fetch, err := newFetchTool(cfg.outputBytes)
	require.NoError(t, err)
	assistant, err := llmagent.New(llmagent.Config{
		Name:        agentName,
		Description: "Reviews log batches.",
		Model:       cfg.agentLLM,
		Instruction: agentInstruction,
		Tools:       []tool.Tool{fetch},
	})
	require.NoError(t, err)
	// The session service persists what the guard compacts between turns,
	// as a deployment of several replicas must (README, Compaction between
	// turns).
	guardOpts := []contextguard.Option{
		contextguard.WithLogger(slog.New(cfg.logs)),
		contextguard.WithOnCompaction(cfg.log.hook(cfg.name)),
		contextguard.WithSessionService(cfg.svc)}
	if cfg.inlineOnly {
		guardOpts = append(guardOpts, contextguard.WithPreparedSummaries(contextguard.PreparedSummariesOff))
	}
	guard := contextguard.New(nil, guardOpts...)
	opts := []contextguard.AgentOption{contextguard.WithMaxTokens(cfg.window)}
	if cfg.inlineOnly {
		opts = append(opts, contextguard.WithBetweenTurns(contextguard.BetweenTurnsOff))
	}
	if cfg.counter != nil {
		opts = append(opts, contextguard.WithTokenCounter(cfg.counter))
	}
	guard.Add(agentName, cfg.summarizer, opts...)
	p, err := guard.Plugin()
	require.NoError(t, err)
	r, err := runner.New(runner.Config{
		AppName:        appName,
		Agent:          assistant,
		SessionService: cfg.svc,
		PluginConfig:   runner.PluginConfig{Plugins: append([]*plugin.Plugin{p}, cfg.extra...)},
	})
	require.NoError(t, err)
	return &replica{name: cfg.name, guard: guard, runner: r}
}

// runTurn plays one user message through the replica's runner and returns
// the first error.
func (r *replica) runTurn(ctx context.Context, sessionID string, msg *genai.Content, rc agent.RunConfig) error {
	for _, err := range r.runner.Run(ctx, userID, sessionID, msg, rc) {
		if err != nil {
			return fmt.Errorf("replica %s: %w", r.name, err)
		}
	}
	return nil
}

// isStaleSession reports ADK's stale-session error. session/database
// rejects AppendEvent when the session row was updated (by another process)
// after this process read it; ADK has no sentinel error for it, so the
// message is matched.
func isStaleSession(err error) bool {
	return err != nil && strings.Contains(err.Error(), "stale session")
}

// maxStaleRetries bounds how often one turn is retried.
const maxStaleRetries = 3

// runTurnWithRetry is how a deployment with several replicas runs a turn:
// when the session service reports a stale session, it re-fetches the
// session and retries. If the user's message was already stored before the
// failure, the retry resumes the invocation without it (a nil message), so
// the message is never stored twice. It returns how many retries it made.
func runTurnWithRetry(ctx context.Context, r *replica, svc session.Service, sessionID string, msg *genai.Content, mark string, rc agent.RunConfig) (int, error) {
	retries := 0
	for {
		err := r.runTurn(ctx, sessionID, msg, rc)
		if !isStaleSession(err) || retries == maxStaleRetries {
			return retries, err
		}
		retries++
		resp, gerr := svc.Get(ctx, &session.GetRequest{AppName: appName, UserID: userID, SessionID: sessionID})
		if gerr != nil {
			return retries, errors.Join(err, fmt.Errorf("re-fetching the session: %w", gerr))
		}
		if msg != nil && hasUserMessage(resp.Session, mark) {
			msg = nil
		}
	}
}

// hasUserMessage reports whether the session holds a user event carrying
// mark.
func hasUserMessage(s session.Session, mark string) bool {
	for ev := range s.Events().All() {
		if ev.Author == "user" && strings.Contains(contentText(ev.Content), mark) {
			return true
		}
	}
	return false
}

// createSession creates the test's session.
func createSession(t *testing.T, svc session.Service, id string) {
	t.Helper()
	_, err := svc.Create(context.Background(), &session.CreateRequest{AppName: appName, UserID: userID, SessionID: id})
	require.NoError(t, err)
}

// getSession reads the session back from the database.
func getSession(t *testing.T, svc session.Service, id string) session.Session {
	t.Helper()
	resp, err := svc.Get(context.Background(), &session.GetRequest{AppName: appName, UserID: userID, SessionID: id})
	require.NoError(t, err)
	return resp.Session
}

// rawState returns the raw value of a state key as the service returned it.
func rawState(t *testing.T, s session.Session, key string) any {
	t.Helper()
	v, err := s.State().Get(key)
	require.NoError(t, err, "state key %s", key)
	return v
}

// stateInt returns a numeric state key, asserting it came back from the
// database as a JSON number (float64) holding a whole number.
func stateInt(t *testing.T, s session.Session, name string) int {
	t.Helper()
	v := rawState(t, s, stateKey(name))
	f, ok := v.(float64)
	require.Truef(t, ok, "state %s: want float64 from the database, got %T", stateKey(name), v)
	require.Equal(t, float64(int(f)), f, "state %s is a whole number", stateKey(name))
	return int(f)
}

// noSkippedSummary asserts the guard never logged that it could not apply
// its stored summary (a watermark or fingerprint that did not match).
func noSkippedSummary(t *testing.T, logs *logRecorder) {
	t.Helper()
	for _, m := range logs.Messages() {
		require.NotContains(t, m, "not applied", "guard warning: %s", m)
	}
}
