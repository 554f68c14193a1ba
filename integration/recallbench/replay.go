package recallbench

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"slices"
	"sync"
	"time"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/plugin"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard"
	"github.com/adk-contextguard/contextguard/contextguardtest"
	"github.com/adk-contextguard/contextguard/contextguardtest/o200k"
	"github.com/adk-contextguard/contextguard/integration/costbench"
)

// The replay: a recorded session played through ADK v1's runner with the
// guard and its recall tool, a model that answers each agent request with
// the next recorded step, and tools that return the recorded outputs; then
// one user turn per query, in which the model calls recall_context.

const (
	agentName = "agent"
	appName   = "recallbench"
	userID    = "user"
	// summarySize is the size in bytes of the summaries the summarizer
	// writes: about a page and a half, as costbench's.
	summarySize = 6000
)

// Config is one configuration of the guard a replay plays.
type Config struct {
	Name    string
	Options []contextguard.AgentOption
}

// Configs are the configurations measured: the default, and tool-result
// pruning.
func Configs() []Config {
	return []Config{
		{Name: "default"},
		{Name: "pruning", Options: []contextguard.AgentOption{contextguard.WithToolResultPruning(0)}},
	}
}

// Answer is one query's answer, as the model received it.
type Answer struct {
	Query Query
	Text  string
	// Budget is the answer's budget in tokens (the default, or a quarter of
	// the room the request before it left), Tokens its size as the guard
	// counts it.
	Budget, Tokens int
	// Latency is how long the tool ran, from ADK's before-tool callback to
	// its after-tool callback.
	Latency time.Duration
}

// Run is what one replay of a session measured.
type Run struct {
	Session, Config string
	Window          int
	Compactions     int
	Answers         []Answer
	Errors          []error
}

// Replay plays tr with cfg at window, then asks the queries drawn from
// what its final request no longer holds.
func Replay(ctx context.Context, tr *costbench.Trace, cfg Config, window int) (*Run, error) {
	m := newReplayModel(tr)
	guard := contextguard.New(nil,
		contextguard.WithOnCompaction(func(context.Context, contextguard.CompactionEvent) { m.compacted() }),
		contextguard.WithLogger(slog.New(slog.DiscardHandler)))
	guard.Add(agentName, m, append([]contextguard.AgentOption{
		contextguard.WithMaxTokens(window), contextguard.WithSummarizerWindow(window)}, cfg.Options...)...)
	p, err := guard.Plugin()
	if err != nil {
		return nil, fmt.Errorf("recallbench: guard: %w", err)
	}
	svc := session.InMemoryService()
	recall, err := guard.RecallTool(svc)
	if err != nil {
		return nil, fmt.Errorf("recallbench: recall tool: %w", err)
	}
	sid := "session-" + tr.File
	timer := &toolTimer{guard: guard}
	instruction := tr.System
	ag, err := llmagent.New(llmagent.Config{
		Name:                agentName,
		Model:               m,
		InstructionProvider: func(agent.ReadonlyContext) (string, error) { return instruction, nil },
		Tools:               append(costbench.ReplayTools(tr, nil), recall),
		BeforeToolCallbacks: []llmagent.BeforeToolCallback{timer.before},
		AfterToolCallbacks:  []llmagent.AfterToolCallback{timer.after},
	})
	if err != nil {
		return nil, fmt.Errorf("recallbench: agent: %w", err)
	}
	r, err := runner.New(runner.Config{AppName: appName, Agent: ag, SessionService: svc,
		PluginConfig: runner.PluginConfig{Plugins: []*plugin.Plugin{p}}})
	if err != nil {
		return nil, fmt.Errorf("recallbench: runner: %w", err)
	}
	if _, err := svc.Create(ctx, &session.CreateRequest{AppName: appName, UserID: userID, SessionID: sid}); err != nil {
		return nil, fmt.Errorf("recallbench: create session: %w", err)
	}
	run := &Run{Session: tr.File, Config: cfg.Name, Window: window}
	for i, turn := range tr.Turns {
		m.startTurn(i)
		for _, err := range r.Run(ctx, userID, sid, genai.NewContentFromText(turn.User, genai.RoleUser), agent.RunConfig{}) {
			if err != nil {
				run.Errors = append(run.Errors, fmt.Errorf("turn %d: %w", i, err))
			}
		}
	}
	run.Compactions = m.compactions()
	// The last turn's final answer came after the final request: it was
	// never removed.
	held := m.finalTexts()
	if n := len(tr.Turns); n > 0 {
		held = append(held, tr.Turns[n-1].Final)
	}
	queries := Draw(tr, fmt.Sprintf("%s/%s/%d", tr.File, cfg.Name, window), held)
	for _, q := range queries {
		m.ask(q.Text)
		var text string
		for ev, err := range r.Run(ctx, userID, sid, genai.NewContentFromText("Look up: "+q.Text, genai.RoleUser), agent.RunConfig{}) {
			if err != nil {
				run.Errors = append(run.Errors, fmt.Errorf("query %q: %w", q.Text, err))
				continue
			}
			if t, ok := recallAnswer(ev); ok {
				text = t
			}
		}
		u, took := timer.last()
		run.Answers = append(run.Answers, Answer{Query: q, Text: text, Budget: budget(u), Tokens: answerTokens(m.Name(), text), Latency: took})
	}
	return run, nil
}

// recallAnswer is the recall tool's answer an event carries.
func recallAnswer(ev *session.Event) (string, bool) {
	if ev == nil || ev.Content == nil {
		return "", false
	}
	for _, p := range ev.Content.Parts {
		if fr := p.FunctionResponse; fr != nil && fr.Name == contextguard.RecallToolName {
			s, ok := fr.Response["result"].(string)
			return s, ok
		}
	}
	return "", false
}

// toolTimer times the recall tool's runs with ADK's tool callbacks, and
// reads the guard's usage as the tool sees it (the state of its call),
// which its budget comes from.
type toolTimer struct {
	guard *contextguard.ContextGuard
	mu    sync.Mutex
	usage contextguard.Usage
	start time.Time
	took  time.Duration
}

func (t *toolTimer) before(ctx agent.ToolContext, tl tool.Tool, _ map[string]any) (map[string]any, error) {
	if tl.Name() == contextguard.RecallToolName {
		u, err := t.guard.UsageFromState(ctx.State(), agentName)
		if err != nil {
			return nil, fmt.Errorf("recallbench: usage: %w", err)
		}
		t.mu.Lock()
		t.usage = u
		t.start = time.Now()
		t.mu.Unlock()
	}
	return nil, nil
}

func (t *toolTimer) after(_ agent.ToolContext, tl tool.Tool, _, _ map[string]any, _ error) (map[string]any, error) {
	if tl.Name() == contextguard.RecallToolName {
		t.mu.Lock()
		t.took = time.Since(t.start)
		t.mu.Unlock()
	}
	return nil, nil
}

// last is the usage the last recall saw and how long it took.
func (t *toolTimer) last() (contextguard.Usage, time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.usage, t.took
}

// replayModel answers the agent's requests with the recorded steps of a
// session, in order, and its summarizer's requests with a summary of a
// bounded size; in the query phase it calls recall_context with the query
// it was given, and answers the tool's answer in text. A request comes from
// the agent's flow when its context is ADK's invocation context.
type replayModel struct {
	trace *costbench.Trace
	summ  *contextguardtest.SummarizerModel

	mu         sync.Mutex
	turn, step int
	query      string
	final      []*genai.Content
	compacts   int
}

func newReplayModel(tr *costbench.Trace) *replayModel {
	return &replayModel{trace: tr, summ: contextguardtest.NewSummarizerModel(contextguardtest.SummarizerConfig{
		Name: "replay-summarizer", SummarySize: summarySize, Counter: o200k.Counter(1)})}
}

// Name is the model's name, the same for the agent and its summarizer.
func (m *replayModel) Name() string { return "replay-" + m.trace.File }

func (m *replayModel) startTurn(i int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.turn, m.step = i, 0
}

func (m *replayModel) compacted() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.compacts++
}

func (m *replayModel) compactions() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.compacts
}

// ask starts the query phase's next turn with query q.
func (m *replayModel) ask(q string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.query = q
}

// finalTexts are the texts of the last agent request of the replay (before
// any query): what it still held.
func (m *replayModel) finalTexts() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, c := range m.final {
		if c == nil {
			continue
		}
		for _, p := range c.Parts {
			switch {
			case p == nil:
			case p.FunctionCall != nil:
				args, _ := compactJSON(p.FunctionCall.Args)
				out = append(out, p.FunctionCall.Name+" "+args)
			case p.FunctionResponse != nil:
				for _, v := range p.FunctionResponse.Response {
					if s, ok := v.(string); ok {
						out = append(out, s)
					}
				}
				resp, _ := compactJSON(p.FunctionResponse.Response)
				out = append(out, resp)
			default:
				out = append(out, p.Text)
			}
		}
	}
	return out
}

// GenerateContent answers a request.
func (m *replayModel) GenerateContent(ctx context.Context, req *model.LLMRequest, stream bool) iter.Seq2[*model.LLMResponse, error] {
	if req == nil {
		return func(yield func(*model.LLMResponse, error) bool) { yield(nil, errors.New("recallbench: nil request")) }
	}
	if _, ok := ctx.(agent.InvocationContext); !ok {
		return m.summ.GenerateContent(ctx, req, stream)
	}
	m.mu.Lock()
	content := m.nextLocked(req)
	m.mu.Unlock()
	resp := &model.LLMResponse{Content: content, TurnComplete: true, FinishReason: genai.FinishReasonStop}
	return func(yield func(*model.LLMResponse, error) bool) { yield(resp, nil) }
}

// nextLocked is the answer to an agent request: in the replay, its turn's
// next recorded step, then its final text; in the query phase, the call of
// recall_context, then a text once the tool answered.
func (m *replayModel) nextLocked(req *model.LLMRequest) *genai.Content {
	if m.query != "" {
		last := req.Contents[len(req.Contents)-1]
		for _, p := range last.Parts {
			if p.FunctionResponse != nil {
				return genai.NewContentFromText("Noted.", genai.RoleModel)
			}
		}
		return &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{
			Name: contextguard.RecallToolName, Args: map[string]any{"query": m.query}}}}}
	}
	m.final = req.Contents
	step := m.step
	m.step++
	return m.trace.Response(m.turn, step)
}

// Windows are the two context windows a session is replayed at: a half
// and a quarter of its recorded size (bytes / bytesPerToken), rounded up
// to a thousand tokens, at least minWindow, so that the guard compacts.
func Windows(tr *costbench.Trace) []int {
	size := 0
	for _, p := range pieces(tr) {
		for _, l := range p.lines {
			size += len(l) + 1
		}
	}
	tokens := size / bytesPerToken
	var out []int
	for _, div := range []int{2, 4} {
		w := max((tokens/div+999)/1000*1000, minWindow)
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

const (
	// bytesPerToken sizes a session's text in tokens, about.
	bytesPerToken = 4
	// minWindow is the least window replayed: a system prompt, the tools'
	// declarations and a turn fit.
	minWindow = 8_000
)
