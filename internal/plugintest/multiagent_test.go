package plugintest

import (
	"context"
	"iter"
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
	"google.golang.org/adk/tool"
	"google.golang.org/adk/tool/functiontool"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/contextguardtest"

	. "github.com/adk-contextguard/contextguard"
)

// scriptedAgentLLM is an agent's model that answers each request with the
// response its script gives for the call's index, and records what it was
// sent.
type scriptedAgentLLM struct {
	name   string
	script func(call int) *genai.Content

	mu       sync.Mutex
	requests []agentRequest
}

// agentRequest is what one request held, read when the model received it.
type agentRequest struct {
	text       string // every text the contents carry
	quote      string // the continuation's quote, "" without a summary
	summarized bool   // the request starts with the summary message
	pairs      error  // contextguardtest.CheckPairs of the contents
}

func (m *scriptedAgentLLM) Name() string { return m.name }

func (m *scriptedAgentLLM) GenerateContent(_ context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		rec := agentRequest{quote: quotedRequest(req), pairs: contextguardtest.CheckPairs(req.Contents)}
		rec.summarized = len(req.Contents) > 0 && strings.HasPrefix(contentText(req.Contents[0]), summaryHeader)
		var b strings.Builder
		for _, c := range req.Contents {
			b.WriteString(contentText(c))
			b.WriteByte('\n')
		}
		rec.text = b.String()
		m.mu.Lock()
		call := len(m.requests)
		m.requests = append(m.requests, rec)
		m.mu.Unlock()
		yield(&model.LLMResponse{Content: m.script(call), TurnComplete: true}, nil)
	}
}

func (m *scriptedAgentLLM) recorded() []agentRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]agentRequest(nil), m.requests...)
}

// fetchArgs and fetchResult are the specialist's tool's input and output.
type fetchArgs struct {
	Step int `json:"step"`
}

type fetchResult struct {
	Output string `json:"output"`
}

// specialistSteps is how many tool calls the specialist makes: enough to
// compact more than once in an 8k window.
const specialistSteps = 24

// TestMultiAgent_SpecialistQuotesTheUsersRequest plays a coordinator that
// transfers the user's request to a guarded specialist, which then works
// through enough tool steps to compact. ADK shows the coordinator's events
// to the specialist as user-role "For context:" messages; every request the
// specialist's model receives after a compaction must still quote the
// user's real request, never such a message, and keep its calls and
// responses paired.
func TestMultiAgent_SpecialistQuotesTheUsersRequest(t *testing.T) {
	const userRequest = "REAL-REQUEST-7731: audit the payment service's error budget and report the top three causes"
	tests := []struct {
		name string
		// guardCoordinator also guards the coordinator (with a window it
		// never fills).
		guardCoordinator bool
		// byDefault guards the specialist with AddDefault instead of Add.
		byDefault bool
	}{
		{name: "unguarded coordinator"},
		{name: "guarded coordinator", guardCoordinator: true},
		{name: "specialist guarded by the default", guardCoordinator: true, byDefault: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fetch, err := functiontool.New(functiontool.Config{Name: "fetch_logs", Description: "Fetches the service's logs for one step of the audit."},
				func(_ agent.ToolContext, a fetchArgs) (fetchResult, error) {
					return fetchResult{Output: filler(1_500, 500+a.Step)}, nil
				})
			require.NoError(t, err)

			specialistLLM := &scriptedAgentLLM{name: "specialist-model", script: func(call int) *genai.Content {
				if call < specialistSteps {
					return &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{
						Name: "fetch_logs", Args: map[string]any{"step": call},
					}}}}
				}
				return genai.NewContentFromText("The top three causes are A, B and C.", genai.RoleModel)
			}}
			coordinatorLLM := &scriptedAgentLLM{name: "coordinator-model", script: func(call int) *genai.Content {
				if call == 0 {
					return &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{
						{Text: "This is for the specialist."},
						{FunctionCall: &genai.FunctionCall{Name: "transfer_to_agent", Args: map[string]any{"agent_name": "specialist"}}},
					}}
				}
				return genai.NewContentFromText("Done.", genai.RoleModel)
			}}

			specialist, err := llmagent.New(llmagent.Config{
				Name:        "specialist",
				Description: "Audits services with their logs.",
				Model:       specialistLLM,
				Instruction: "You audit services. Use fetch_logs.",
				Tools:       []tool.Tool{fetch},
			})
			require.NoError(t, err)
			coordinator, err := llmagent.New(llmagent.Config{
				Name:        "coordinator",
				Description: "Routes the user's requests.",
				Model:       coordinatorLLM,
				Instruction: "Route every request to the right specialist.",
				SubAgents:   []agent.Agent{specialist},
			})
			require.NoError(t, err)

			logs := &logBuffer{}
			sum := fixedSummary("SUMMARY: the specialist fetched the logs of the first steps.")
			g := New(NewCrushRegistry(WithRegistryLogger(logs.logger())), WithLogger(logs.logger()))
			if tt.byDefault {
				g.AddDefault(sum, WithMaxTokens(8_000))
			} else {
				g.Add("specialist", sum, WithMaxTokens(8_000))
			}
			if tt.guardCoordinator {
				g.Add("coordinator", sum, WithMaxTokens(1_000_000))
			}
			sessions := session.InMemoryService()
			r, err := runner.New(runner.Config{AppName: "app", Agent: coordinator, SessionService: sessions, PluginConfig: g.PluginConfig()})
			require.NoError(t, err)
			ctx := context.Background()
			_, err = sessions.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "s"})
			require.NoError(t, err)

			for _, err := range r.Run(ctx, "u", "s", genai.NewContentFromText(userRequest, genai.RoleUser), agent.RunConfig{}) {
				require.NoError(t, err)
			}

			reqs := specialistLLM.recorded()
			require.Len(t, reqs, specialistSteps+1, "the specialist ran every step")
			require.Contains(t, reqs[0].text, "For context:", "the specialist sees the coordinator's events as context")
			compacted := 0
			for i, rec := range reqs {
				assert.NoError(t, rec.pairs, "request %d pairs its calls and responses", i)
				assert.Contains(t, rec.text, userRequest, "request %d carries the user's request", i)
				if !rec.summarized {
					continue
				}
				compacted++
				assert.Equal(t, userRequest, rec.quote, "request %d quotes the user's request", i)
				assert.NotContains(t, rec.quote, "For context:", "request %d quotes another agent's context", i)
			}
			require.Positive(t, compacted, "the specialist compacted")
			assert.GreaterOrEqual(t, sum.Calls(), 1)
			assert.Empty(t, coordinatorLLM.recorded()[0].quote, "the coordinator was not compacted")
			got, err := sessions.Get(ctx, &session.GetRequest{AppName: "app", UserID: "u", SessionID: "s"})
			require.NoError(t, err)
			summary, err := got.Session.State().Get(keySummary + "specialist")
			require.NoError(t, err, "the specialist's summary is stored under its own name")
			assert.NotEmpty(t, summary)
			unguarded := strings.Count(logs.String(), "this agent is not guarded")
			if tt.guardCoordinator {
				assert.Zero(t, unguarded, "every agent is guarded")
			} else {
				assert.Equal(t, 1, unguarded, "the unguarded coordinator is logged once, for its first call")
				assert.Contains(t, logs.String(), "agent=coordinator")
			}
			t.Logf("%d of %d specialist requests after a compaction; %d summarizer calls", compacted, len(reqs), sum.Calls())
		})
	}
}
