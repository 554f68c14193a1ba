package contextguard

import (
	"context"
	"fmt"
	"iter"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/contextguardtest"
	"github.com/adk-contextguard/contextguard/core/coretest"
)

// The scenarios' session: an 8k window (trigger 6,400) that a few turns of
// about 1.5 KB messages and answers bring near the trigger.
const (
	btApp, btUser, btSession, btAgent = "app", "u", "s", "assistant"
	btWindow                          = 8_000
	btTurns                           = 14
	btMessageBytes                    = 1_500
)

// btSummaryHeader starts the guard's summary message.
const btSummaryHeader = "[Conversation summary:"

// btQuiet discards the guard's log.
var btQuiet = slog.New(slog.DiscardHandler)

// btModel is the agent's model: it answers every request with a text of
// about btMessageBytes (no tool call, so each turn is one request) and
// records each request's contents.
type btModel struct {
	mu       sync.Mutex
	requests [][]*genai.Content
}

func (m *btModel) Name() string { return "gemini-2.5-flash" }

func (m *btModel) GenerateContent(_ context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		m.mu.Lock()
		n := len(m.requests)
		m.requests = append(m.requests, append([]*genai.Content(nil), req.Contents...))
		m.mu.Unlock()
		text := fmt.Sprintf("ANSWER-%d %s", n, strings.Repeat(fmt.Sprintf("finding %d of the review; ", n), btMessageBytes/26))
		yield(&model.LLMResponse{Content: genai.NewContentFromText(text, genai.RoleModel), TurnComplete: true}, nil)
	}
}

func (m *btModel) recorded() [][]*genai.Content {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([][]*genai.Content(nil), m.requests...)
}

// btMessage is the user's message of turn i.
func btMessage(i int) string {
	return fmt.Sprintf("USER-%d %s", i, strings.Repeat(fmt.Sprintf("detail %d of the request; ", i), btMessageBytes/26))
}

// btText is the text of a content's parts.
func btText(c *genai.Content) string {
	var b strings.Builder
	for _, p := range c.Parts {
		if p != nil {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// TestBetweenTurns_ThroughTheRunner plays a conversation through ADK's
// runner until it nears the trigger. The guard compacts after the run that
// leaves the session there, once its last event was delivered, and the
// next run's first request already starts with the summary, with the
// user's new message whole after it: no model call waits for a
// compaction. With WithBetweenTurns(BetweenTurnsOff) the same conversation
// compacts inside model calls.
func TestBetweenTurns_ThroughTheRunner(t *testing.T) {
	tests := []struct {
		name string
		opts []AgentOption
		// service passes the runner's session service to the guard
		// (WithSessionService); without it the compaction reaches the next
		// call through the guard's memory.
		service bool
		// wantRan is how every compaction runs.
		wantRan CompactionRun
	}{
		{name: "persisted with the session service", service: true, wantRan: RanBetweenTurns},
		{name: "kept in the guard's memory without a session service", wantRan: RanBetweenTurns},
		{name: "sliding window", service: true, opts: []AgentOption{WithSlidingWindow(6)}, wantRan: RanBetweenTurns},
		{name: "off: every compaction runs in a model call", service: true, opts: []AgentOption{WithBetweenTurns(BetweenTurnsOff)}, wantRan: RanInline},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			baseline := runtime.NumGoroutine()
			ctx := t.Context()
			svc := session.InMemoryService()
			llm := &btModel{}
			sum := contextguardtest.NewSummarizerModel(contextguardtest.SummarizerConfig{})
			var mu sync.Mutex
			var events []CompactionEvent
			turnOf := map[int]int{} // compaction index -> the turn whose run made it
			turn := 0
			opts := []Option{WithLogger(btQuiet), WithOnCompaction(func(_ context.Context, ev CompactionEvent) {
				mu.Lock()
				defer mu.Unlock()
				turnOf[len(events)] = turn
				events = append(events, ev)
			})}
			if tt.service {
				opts = append(opts, WithSessionService(svc))
			}
			g := New(NewCrushRegistry(WithRegistryLogger(btQuiet)), opts...)
			g.Add(btAgent, sum, append([]AgentOption{WithMaxTokens(btWindow)}, tt.opts...)...)
			a, err := llmagent.New(llmagent.Config{Name: btAgent, Model: llm, Instruction: "Review what the user sends."})
			require.NoError(t, err)
			r, err := runner.New(runner.Config{AppName: btApp, Agent: a, SessionService: svc, PluginConfig: g.PluginConfig()})
			require.NoError(t, err)
			_, err = svc.Create(ctx, &session.CreateRequest{AppName: btApp, UserID: btUser, SessionID: btSession})
			require.NoError(t, err)

			for i := range btTurns {
				mu.Lock()
				turn = i
				mu.Unlock()
				for _, err := range r.Run(ctx, btUser, btSession, genai.NewContentFromText(btMessage(i), genai.RoleUser), agent.RunConfig{}) {
					require.NoError(t, err, "turn %d", i)
				}
			}

			mu.Lock()
			defer mu.Unlock()
			require.NotEmpty(t, events, "the conversation reaches the trigger")
			reqs := llm.recorded()
			require.Len(t, reqs, btTurns, "one request per turn")
			for k, ev := range events {
				assert.Equal(t, tt.wantRan, ev.Ran, "compaction %d", k)
				assert.False(t, ev.Discarded, "compaction %d", k)
				if tt.wantRan != RanBetweenTurns {
					assert.Equal(t, ev.Duration, ev.Waited)
					continue
				}
				assert.Zero(t, ev.Waited, "no model call waited for compaction %d", k)
				next := turnOf[k] + 1
				if next == btTurns {
					continue
				}
				req := reqs[next]
				require.NotEmpty(t, req)
				assert.True(t, strings.HasPrefix(btText(req[0]), btSummaryHeader), "turn %d's first request starts compacted", next)
				assert.NotContains(t, btText(req[0]), "<user_request>", "the summary quotes no request")
				assert.Equal(t, btMessage(next), btText(req[len(req)-1]), "the user's new message is whole, after the summary")
				assert.NoError(t, contextguardtest.CheckPairs(req))
			}
			assert.Equal(t, len(events), sum.Calls(), "one summarizer call per compaction")
			if tt.service && tt.wantRan == RanBetweenTurns {
				resp, err := svc.Get(ctx, &session.GetRequest{AppName: btApp, UserID: btUser, SessionID: btSession})
				require.NoError(t, err)
				v, err := resp.Session.State().Get("__context_guard_compactions_" + btAgent)
				require.NoError(t, err)
				assert.EqualValues(t, len(events), v, "every compaction is in the stored session")
			}
			assert.Zero(t, coretest.GoroutinesLeft(baseline), "no goroutine left")
		})
	}
}

// TestBetweenTurns_CallerWaitsForTheIterator: ADK's runner calls the
// after-run callback when the run's iterator is about to return, after the
// last event was delivered. A caller ranging over the run's events gets the
// final answer first; its loop ends once the compaction is done.
func TestBetweenTurns_CallerWaitsForTheIterator(t *testing.T) {
	ctx := t.Context()
	svc := session.InMemoryService()
	llm := &btModel{}
	sum := contextguardtest.NewSummarizerModel(contextguardtest.SummarizerConfig{})
	var mu sync.Mutex
	var order []string
	g := New(NewCrushRegistry(WithRegistryLogger(btQuiet)), WithLogger(btQuiet), WithSessionService(svc),
		WithOnCompaction(func(_ context.Context, ev CompactionEvent) {
			mu.Lock()
			defer mu.Unlock()
			order = append(order, "compaction "+string(ev.Ran))
		}))
	g.Add(btAgent, sum, WithMaxTokens(btWindow))
	a, err := llmagent.New(llmagent.Config{Name: btAgent, Model: llm, Instruction: "Review what the user sends."})
	require.NoError(t, err)
	r, err := runner.New(runner.Config{AppName: btApp, Agent: a, SessionService: svc, PluginConfig: g.PluginConfig()})
	require.NoError(t, err)
	_, err = svc.Create(ctx, &session.CreateRequest{AppName: btApp, UserID: btUser, SessionID: btSession})
	require.NoError(t, err)
	for i := range btTurns {
		for ev, err := range r.Run(ctx, btUser, btSession, genai.NewContentFromText(btMessage(i), genai.RoleUser), agent.RunConfig{}) {
			require.NoError(t, err)
			if ev.IsFinalResponse() {
				mu.Lock()
				order = append(order, "answer")
				mu.Unlock()
			}
		}
		mu.Lock()
		order = append(order, "loop ended")
		mu.Unlock()
	}
	mu.Lock()
	defer mu.Unlock()
	joined := strings.Join(order, ", ")
	assert.Contains(t, joined, "answer, compaction between_turns, loop ended", "the answer, then the compaction, then the end of the caller's loop")
	assert.NotContains(t, joined, "compaction inline")
}
