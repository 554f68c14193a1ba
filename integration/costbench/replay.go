package costbench

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/adk-contextguard/contextguard"
	"github.com/adk-contextguard/contextguard/contextguardtest"
	"github.com/adk-contextguard/contextguard/contextguardtest/o200k"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/plugin"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool"
	"google.golang.org/genai"
)

// The replay: a recorded session played through ADK v1's real runner and
// llmagent with the guard's plugin, a model that answers each agent request
// with the next recorded step, and tools that return the recorded outputs.

const (
	// agentName, appName and userID name the replayed agent and session.
	agentName = "agent"
	appName   = "costbench"
	userID    = "user"
	// summarySize is the size in bytes of the summaries the fake answers
	// with: a plausible summary (about a page and a half of text), bounded, below
	// what the guard asks for at 32k (10% of the window).
	summarySize = 6000
	// userHeadBytes is how much of the start of the user's latest message
	// an agent request must carry for the message to count as kept: enough
	// to identify it, short enough to survive a quote cut to its head.
	userHeadBytes = 64
)

// Config is one configuration of the guard the benchmark plays.
type Config struct {
	// Name names it in the table.
	Name string
	// Window is the model's context window in tokens.
	Window int
	// Options are the configuration's agent options, besides the window.
	Options []contextguard.AgentOption
	// NoUsage makes the model report no usage metadata: the guard then
	// has only its own counts.
	NoUsage bool
}

// Configs returns the configurations of the table: the threshold strategy
// (default), with tool-result pruning, and the sliding window with pruning,
// each at 32k and 128k; then, at 32k, pruning with a model that reports no
// usage metadata, and the default with the summarizer asked in the
// transcript form (as a summarizer on another model is), whose excerpts the
// accounting must recognise.
func Configs() []Config {
	var out []Config
	pruning := []contextguard.AgentOption{contextguard.WithToolResultPruning(0)}
	for _, w := range []int{32_000, 128_000} {
		out = append(out,
			Config{Name: "default", Window: w},
			Config{Name: "pruning", Window: w, Options: pruning},
			Config{Name: "sliding + pruning", Window: w, Options: []contextguard.AgentOption{
				contextguard.WithSlidingWindow(0), contextguard.WithToolResultPruning(0)}},
		)
	}
	return append(out,
		Config{Name: "pruning, no usage metadata", Window: 32_000, Options: pruning, NoUsage: true},
		Config{Name: "default, transcript form", Window: 32_000, Options: []contextguard.AgentOption{
			contextguard.WithSummaryForm(contextguard.SummaryFormTranscript)}},
	)
}

// Session is what one replay captured.
type Session struct {
	// Requests are every request the model received, in order.
	Requests []Request
	// Compactions is how many compactions the guard reported; Inline how
	// many of them called the summarizer in the model call that needed
	// them (CompactionEvent.Ran), which waited for it (a pruning pass
	// runs inline too, but calls no summarizer).
	Compactions, Inline int
	// Errors are the errors the runner surfaced.
	Errors []error
	// Recording is what the accounting checks (Account).
	Recording Recording
}

// Account checks that every content of the session reached each later
// request or a summarizer input, and that every compaction shrank its
// request (Account).
func (s *Session) Account() Accounting { return Account(s.Recording) }

// Stats measures the session against window.
func (s *Session) Stats(window int) Stats {
	st := Measure(s.Requests, window)
	st.Compactions, st.Inline = s.Compactions, s.Inline
	st.Errors = len(s.Errors)
	return st
}

// Replay plays tr through a real runner with the guard configured by cfg,
// and returns every request the model received. The guard's summarizer is
// its default LLM summarizer over the agent's own model.
func Replay(ctx context.Context, tr *Trace, cfg Config) (*Session, error) {
	m := newReplayModel(tr)
	m.noUsage = cfg.NoUsage
	guard := contextguard.New(nil,
		contextguard.WithOnCompaction(m.compacted),
		contextguard.WithLogger(slog.New(slog.DiscardHandler)))
	opts := append([]contextguard.AgentOption{
		contextguard.WithMaxTokens(cfg.Window),
		// The summarizer's model is the agent's: the same window.
		contextguard.WithSummarizerWindow(cfg.Window),
	}, cfg.Options...)
	guard.Add(agentName, m, opts...)
	p, err := guard.Plugin()
	if err != nil {
		return nil, fmt.Errorf("costbench: guard: %w", err)
	}
	// Before the guard's plugin: the request as ADK built it.
	rec, err := plugin.New(plugin.Config{Name: "costbench-recorder", BeforeModelCallback: m.built})
	if err != nil {
		return nil, fmt.Errorf("costbench: recorder: %w", err)
	}
	instruction := tr.System
	svc := session.InMemoryService()
	sid := "session-" + tr.File
	// Tools take as long as the summary being prepared while they run
	// (README, Summaries prepared while tools run): a recorded agent's
	// tools took seconds, the replay's answer at once, and a summary left
	// racing the replay would make each run's table differ.
	awaitPrepared := func(ctx context.Context) {
		for ctx.Err() == nil {
			u, err := guard.Usage(ctx, svc, appName, userID, sid, agentName)
			if err != nil || !u.Preparing {
				return
			}
			time.Sleep(preparedPoll)
		}
	}
	ag, err := llmagent.New(llmagent.Config{
		Name:        agentName,
		Description: "replays " + tr.File,
		Model:       m,
		// A provider, not Instruction: ADK would substitute {placeholders}
		// of the recorded prompt.
		InstructionProvider: func(agent.ReadonlyContext) (string, error) { return instruction, nil },
		Tools:               ReplayTools(tr, awaitPrepared),
	})
	if err != nil {
		return nil, fmt.Errorf("costbench: agent: %w", err)
	}
	r, err := runner.New(runner.Config{
		AppName:        appName,
		Agent:          ag,
		SessionService: svc,
		PluginConfig:   runner.PluginConfig{Plugins: []*plugin.Plugin{rec, p}},
	})
	if err != nil {
		return nil, fmt.Errorf("costbench: runner: %w", err)
	}
	if _, err := svc.Create(ctx, &session.CreateRequest{AppName: appName, UserID: userID, SessionID: sid}); err != nil {
		return nil, fmt.Errorf("costbench: create session: %w", err)
	}
	out := &Session{}
	for i, turn := range tr.Turns {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("costbench: %s turn %d: %w", tr.File, i, err)
		}
		m.startTurn(i)
		msg := genai.NewContentFromText(turn.User, genai.RoleUser)
		for _, err := range r.Run(ctx, userID, sid, msg, agent.RunConfig{}) {
			if err != nil {
				out.Errors = append(out.Errors, fmt.Errorf("%s turn %d: %w", tr.File, i, err))
			}
		}
	}
	out.Requests, out.Compactions, out.Inline, out.Recording = m.captured()
	return out, nil
}

// replayModel is a model.LLM that answers the agent's requests with the
// recorded steps of a session, in order, and its summarizer's requests
// with a summary of a bounded size. A request comes from the agent's flow
// when its context is ADK's invocation context (ADK's flow calls the model
// with it); the guard's summarizer calls it with a context of its own.
type replayModel struct {
	trace *Trace
	summ  *contextguardtest.SummarizerModel
	// noUsage: the responses carry no usage metadata (Config.NoUsage).
	noUsage bool

	mu          sync.Mutex
	turn, step  int
	requests    []Request
	compactions int
	inline      int
	prevAgent   int // index in requests of the last agent request, -1 before it
	// rec is what the accounting checks; raw the contents ADK built for
	// the agent request the model receives next (recorded before the
	// guard), eventsAt how many events rec held at the last agent request.
	rec      Recording
	raw      []*genai.Content
	eventsAt int
	// tags counts the summaries tagged (summaryTag).
	tags int
}

var _ model.LLM = (*replayModel)(nil)

func newReplayModel(tr *Trace) *replayModel {
	return &replayModel{
		trace: tr,
		summ: contextguardtest.NewSummarizerModel(contextguardtest.SummarizerConfig{
			Name:        "replay-summarizer",
			SummarySize: summarySize,
			Counter:     o200k.Counter(1),
		}),
		prevAgent: -1,
	}
}

// Name is the model's name, the same for the agent and its summarizer.
func (m *replayModel) Name() string { return "replay-" + m.trace.File }

// startTurn moves the replay to user turn i.
func (m *replayModel) startTurn(i int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.turn, m.step = i, 0
}

// built is a plugin's before-model callback, run before the guard's: it
// keeps the contents ADK built for the request.
func (m *replayModel) built(_ agent.CallbackContext, req *model.LLMRequest) (*model.LLMResponse, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.raw = slices.Clone(req.Contents)
	return nil, nil
}

// compacted is the guard's WithOnCompaction hook: the event precedes the
// next agent request.
func (m *replayModel) compacted(_ context.Context, e contextguard.CompactionEvent) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rec.Events = append(m.rec.Events, EventMark{Before: len(m.rec.Agent), Event: e})
	m.compactions++
	if e.Ran == contextguard.RanInline && e.SummarizerCalls > 0 {
		m.inline++
	}
}

// captured returns the requests received, the compactions reported, how
// many of them waited for the summarizer inline, and the accounting's
// recording.
func (m *replayModel) captured() ([]Request, int, int, Recording) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.requests, m.compactions, m.inline, m.rec
}

// GenerateContent records the request and answers it.
func (m *replayModel) GenerateContent(ctx context.Context, req *model.LLMRequest, stream bool) iter.Seq2[*model.LLMResponse, error] {
	if req == nil {
		return func(yield func(*model.LLMResponse, error) bool) {
			yield(nil, errors.New("costbench: nil request"))
		}
	}
	if _, ok := ctx.(agent.InvocationContext); !ok {
		r := Snapshot(req.Contents, req.Config)
		r.Summarizer = true
		m.mu.Lock()
		r.Compactions = m.compactions
		m.requests = append(m.requests, r)
		m.mu.Unlock()
		return m.summarize(ctx, req, stream)
	}
	r := Snapshot(req.Contents, req.Config)
	m.mu.Lock()
	call := AgentCall{Raw: m.raw, Sent: slices.Clone(req.Contents), SentTokens: r.Tokens}
	m.raw = nil
	if len(m.rec.Events) > m.eventsAt {
		// Only a request a compaction precedes is compared with ADK's.
		call.RawTokens = Snapshot(call.Raw, req.Config).Tokens
	}
	m.eventsAt = len(m.rec.Events)
	m.rec.Agent = append(m.rec.Agent, call)
	r.Compactions = m.compactions
	r.LostUser = !carriesUser(req.Contents, m.trace.Turns[m.turn].User)
	cached := 0
	if m.prevAgent >= 0 {
		cached = SharedPrefix(&m.requests[m.prevAgent], &r)
	}
	m.prevAgent = len(m.requests)
	m.requests = append(m.requests, r)
	content := m.nextLocked()
	m.mu.Unlock()
	resp := &model.LLMResponse{
		Content: content,
		UsageMetadata: &genai.GenerateContentResponseUsageMetadata{
			PromptTokenCount:        int32(min(r.Tokens, math.MaxInt32)),
			CachedContentTokenCount: int32(min(cached, math.MaxInt32)),
		},
		TurnComplete: true,
		FinishReason: genai.FinishReasonStop,
	}
	if m.noUsage {
		resp.UsageMetadata = nil
	}
	return func(yield func(*model.LLMResponse, error) bool) { yield(resp, nil) }
}

// summarize answers a summarizer request and records its input once the
// answer is read: the summary can serve the agent requests made after.
func (m *replayModel) summarize(ctx context.Context, req *model.LLMRequest, stream bool) iter.Seq2[*model.LLMResponse, error] {
	call := SummarizerCall{Contents: slices.Clone(req.Contents)}
	if req.Config != nil {
		call.System = req.Config.SystemInstruction
	}
	answer := m.summ.GenerateContent(ctx, req, stream)
	return func(yield func(*model.LLMResponse, error) bool) {
		defer func() {
			m.mu.Lock()
			defer m.mu.Unlock()
			call.Before = len(m.rec.Agent)
			m.rec.Summarizer = append(m.rec.Summarizer, call)
		}()
		for resp, err := range answer {
			if err == nil && resp != nil && resp.Content != nil && len(resp.Content.Parts) > 0 {
				m.mu.Lock()
				m.tags++
				call.Tag = summaryTag(m.tags)
				m.mu.Unlock()
				resp.Content.Parts[0].Text = tagSummary(resp.Content.Parts[0].Text, call.Tag)
			}
			if !yield(resp, err) {
				return
			}
		}
	}
}

// summaryTag names the nth summary of a session.
func summaryTag(n int) string { return "[summary " + strconv.Itoa(n) + "]" }

// tagSummary writes tag over the start of summary, so the summary keeps
// its length and names the call that wrote it: the accounting then tells
// which summaries reached a request (directly, or folded into a later
// one's input).
func tagSummary(summary, tag string) string {
	if len(summary) <= len(tag) {
		return tag
	}
	cut := len(tag)
	for cut < len(summary) && !utf8.RuneStart(summary[cut]) {
		cut++
	}
	return tag + summary[cut:]
}

// nextLocked returns the response to the turn's next agent request and
// moves on to the step after it.
func (m *replayModel) nextLocked() *genai.Content {
	step := m.step
	m.step++
	return m.trace.Response(m.turn, step)
}

// carriesUser reports whether a text of contents holds the start of the
// user's message (its first userHeadBytes, cut at a rune boundary), as the
// message itself or quoted in a summary.
func carriesUser(contents []*genai.Content, user string) bool {
	head := strings.TrimSpace(user)
	if len(head) > userHeadBytes {
		cut := userHeadBytes
		for cut > 0 && !utf8.RuneStart(head[cut]) {
			cut--
		}
		head = head[:cut]
	}
	if head == "" {
		return true
	}
	for _, c := range contents {
		if c == nil {
			continue
		}
		for _, p := range c.Parts {
			if p != nil && strings.Contains(p.Text, head) {
				return true
			}
		}
	}
	return false
}

// replayTool is one of the session's declared tools; it returns the output
// recorded for the call it is asked to run, found by the call's ID.
type replayTool struct {
	decl    *genai.FunctionDeclaration
	outputs map[string]string
	// await returns once no summary is being prepared for the session.
	await func(context.Context)
}

// preparedPoll is how often a tool looks whether the summary prepared
// while it runs is written: a fake model writes one in well under a
// millisecond, so the replay waits little.
const preparedPoll = time.Millisecond

// ReplayTools returns a tool per declaration of tr, and one for every tool
// its calls name that it does not declare (so any recording replays); each
// answers its call with the recorded output, once await has returned (a nil
// await answers at once).
func ReplayTools(tr *Trace, await func(context.Context)) []tool.Tool {
	outputs := map[string]string{}
	var out []tool.Tool
	declared := map[string]bool{}
	add := func(name, description string, params map[string]any) {
		if declared[name] {
			return
		}
		declared[name] = true
		decl := &genai.FunctionDeclaration{Name: name, Description: description}
		if params != nil {
			decl.ParametersJsonSchema = params
		}
		out = append(out, &replayTool{decl: decl, outputs: outputs, await: await})
	}
	for _, d := range tr.Tools {
		add(d.Name, d.Description, d.Parameters)
	}
	for _, turn := range tr.Turns {
		for _, st := range turn.Steps {
			for _, c := range st.Calls {
				outputs[c.ID] = c.Output
				add(c.Name, "", nil)
			}
		}
	}
	return out
}

// Name returns the tool's name.
func (t *replayTool) Name() string { return t.decl.Name }

// Description returns the tool's description.
func (t *replayTool) Description() string { return t.decl.Description }

// IsLongRunning reports false.
func (t *replayTool) IsLongRunning() bool { return false }

// Declaration returns the recorded declaration.
func (t *replayTool) Declaration() *genai.FunctionDeclaration { return t.decl }

// ProcessRequest declares the tool in req, as ADK's function tools do.
func (t *replayTool) ProcessRequest(_ agent.ToolContext, req *model.LLMRequest) error {
	if req.Tools == nil {
		req.Tools = map[string]any{}
	}
	if _, dup := req.Tools[t.decl.Name]; dup {
		return fmt.Errorf("costbench: duplicate tool %q", t.decl.Name)
	}
	req.Tools[t.decl.Name] = t
	if req.Config == nil {
		req.Config = &genai.GenerateContentConfig{}
	}
	for _, gt := range req.Config.Tools {
		if gt != nil && gt.FunctionDeclarations != nil {
			gt.FunctionDeclarations = append(gt.FunctionDeclarations, t.decl)
			return nil
		}
	}
	req.Config.Tools = append(req.Config.Tools, &genai.Tool{FunctionDeclarations: []*genai.FunctionDeclaration{t.decl}})
	return nil
}

// Run returns the output recorded for the call, once no summary is being
// prepared for the session (await).
func (t *replayTool) Run(ctx agent.ToolContext, _ any) (map[string]any, error) {
	if t.await != nil {
		t.await(ctx)
	}
	return map[string]any{"output": t.outputs[ctx.FunctionCallID()]}, nil
}
