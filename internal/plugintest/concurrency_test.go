package plugintest

import (
	"context"
	"fmt"
	"iter"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/genai"

	. "github.com/adk-contextguard/contextguard"
)

// echoModel answers with a fixed-size text and a usage count of the request's
// bytes/3, safe for concurrent use.
type echoModel struct {
	name  string
	calls atomic.Int64
}

func (m *echoModel) Name() string { return m.name }

func (m *echoModel) GenerateContent(_ context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	m.calls.Add(1)
	n := len(requestText(req))
	return func(yield func(*model.LLMResponse, error) bool) {
		yield(&model.LLMResponse{
			Content:       genai.NewContentFromText(strings.Repeat("answer ", 60), genai.RoleModel),
			UsageMetadata: &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: int32(n/3 + 1)},
		}, nil)
	}
}

// TestConcurrentSessionsAndAdd runs 20 sessions through one guard while
// other goroutines keep calling Add; run with -race.
func TestConcurrentSessionsAndAdd(t *testing.T) {
	llm := &echoModel{name: "gemini-2.5-flash"}
	sum := &echoModel{name: "gemini-2.5-flash"}
	logs := &logBuffer{}
	g := New(nil, WithLogger(logs.logger()))
	g.Add("assistant", sum, WithMaxTokens(4_000))
	a, err := llmagent.New(llmagent.Config{Name: "assistant", Model: llm, Instruction: "help"})
	require.NoError(t, err)
	svc := session.InMemoryService()
	r, err := runner.New(runner.Config{AppName: "app", Agent: a, SessionService: svc, PluginConfig: g.PluginConfig(), AutoCreateSession: true})
	require.NoError(t, err)

	stop := make(chan struct{})
	var adders sync.WaitGroup
	for i := range 2 {
		adders.Add(1)
		go func() {
			defer adders.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				g.Add(fmt.Sprintf("other-%d-%d", i, n%50), sum, WithMaxTokens(8_000))
				g.Add("assistant", sum, WithMaxTokens(4_000))
			}
		}()
	}

	var wg sync.WaitGroup
	errs := make(chan error, 20*8)
	for s := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for turn := range 8 {
				msg := genai.NewContentFromText(fmt.Sprintf("session %d turn %d %s", s, turn, strings.Repeat("words ", 300)), genai.RoleUser)
				for _, err := range r.Run(context.Background(), "u", fmt.Sprintf("s%d", s), msg, agent.RunConfig{}) {
					if err != nil {
						errs <- err
					}
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	adders.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	assert.EqualValues(t, 20*8, llm.calls.Load())
	assert.Positive(t, sum.calls.Load(), "sessions compacted")
	for s := range 20 {
		resp, err := svc.Get(context.Background(), &session.GetRequest{AppName: "app", UserID: "u", SessionID: fmt.Sprintf("s%d", s)})
		require.NoError(t, err)
		v, err := resp.Session.State().Get(keySummary + "assistant")
		require.NoError(t, err, "session %d has a summary", s)
		assert.NotEmpty(t, v)
	}
}
