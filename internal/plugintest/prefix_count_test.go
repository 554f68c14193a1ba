package plugintest

import (
	"context"
	"fmt"
	"iter"
	"testing"
	"unsafe"

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

	"github.com/adk-contextguard/contextguard/core/coretest"

	. "github.com/adk-contextguard/contextguard"
)

// signedLLM answers like a thinking Gemini model: every response carries a
// thought signature, and every other call asks for a tool with nested
// arguments.
type signedLLM struct{ calls int }

func (m *signedLLM) Name() string { return "gemini-2.5-flash" }

func (m *signedLLM) GenerateContent(context.Context, *model.LLMRequest, bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		call := m.calls
		m.calls++
		sig := []byte(fmt.Sprintf("signature-%d-%s", call, filler(200, call)))
		part := &genai.Part{Text: fmt.Sprintf("Answer %d: %s", call, filler(400, call)), ThoughtSignature: sig}
		if call%2 == 0 {
			part = &genai.Part{ThoughtSignature: sig, FunctionCall: &genai.FunctionCall{Name: "read_logs", Args: map[string]any{
				"query": map[string]any{"service": "api", "step": float64(call), "fields": []any{"ts", "msg"}},
			}}}
		}
		yield(&model.LLMResponse{Content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{part}}, TurnComplete: true}, nil)
	}
}

type readLogsArgs struct {
	Query struct {
		Service string `json:"service"`
		Step    int    `json:"step"`
	} `json:"query"`
}

type readLogsResult struct {
	Lines []string       `json:"lines"`
	Stats map[string]int `json:"stats"`
}

// TestPrefixCount_RunnerHashesOnlyWhatIsNew: through ADK's runner, which
// deep-copies every content (structs, maps and byte slices) for every
// model call, the guard verifies the history it already saw without
// hashing it again: each call hashes only the contents added since the
// previous one, thought signatures and nested tool arguments included, so
// each content of the session is hashed once.
func TestPrefixCount_RunnerHashesOnlyWhatIsNew(t *testing.T) {
	ctx := context.Background()
	svc := session.InMemoryService()
	g := New(NewCrushRegistry(WithRegistryLogger(quietLogger)), WithLogger(quietLogger), WithSessionService(svc))
	g.Add("assistant", fixedSummary("unused"), WithMaxTokens(1_000_000))
	require.NoError(t, g.Err())
	readLogs, err := functiontool.New(functiontool.Config{Name: "read_logs", Description: "Reads a service's logs."},
		func(_ agent.ToolContext, a readLogsArgs) (readLogsResult, error) {
			return readLogsResult{Lines: []string{filler(2_000, a.Query.Step)}, Stats: map[string]int{"errors": a.Query.Step}}, nil
		})
	require.NoError(t, err)

	type seen struct {
		contents int
		hashed   int64
		first    *genai.Content
		sig      *byte // the first thought signature's bytes
	}
	var calls []seen
	last := coretest.ChainHashes()
	observe := func(_ agent.CallbackContext, req *model.LLMRequest) (*model.LLMResponse, error) {
		// Runs after the guard's plugin callback, for the same request.
		now := coretest.ChainHashes()
		s := seen{contents: len(req.Contents), hashed: now - last, first: req.Contents[0]}
		last = now
		for _, c := range req.Contents {
			if p := c.Parts[0]; len(p.ThoughtSignature) > 0 {
				s.sig = unsafe.SliceData(p.ThoughtSignature)
				break
			}
		}
		calls = append(calls, s)
		return nil, nil
	}
	a, err := llmagent.New(llmagent.Config{Name: "assistant", Model: &signedLLM{}, Instruction: "Answer the user.",
		Tools: []tool.Tool{readLogs}, BeforeModelCallbacks: []llmagent.BeforeModelCallback{observe}})
	require.NoError(t, err)
	r, err := runner.New(runner.Config{AppName: "app", Agent: a, SessionService: svc, PluginConfig: g.PluginConfig()})
	require.NoError(t, err)
	_, err = svc.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "u", SessionID: "s"})
	require.NoError(t, err)

	const turns = 6
	for i := range turns {
		msg := genai.NewContentFromText(fmt.Sprintf("Turn %d: %s", i, filler(300, i)), genai.RoleUser)
		for _, err := range r.Run(ctx, "u", "s", msg, agent.RunConfig{}) {
			require.NoError(t, err)
		}
	}

	require.Len(t, calls, 2*turns, "a tool call and an answer per turn")
	total := int64(0)
	for i, c := range calls {
		total += c.hashed
		if i == 0 {
			continue
		}
		prev := calls[i-1]
		require.NotSame(t, prev.first, c.first, "ADK copies the contents for every call")
		if prev.sig != nil {
			require.NotSame(t, prev.sig, c.sig, "and their thought signatures")
		}
		assert.Equal(t, int64(c.contents-prev.contents), c.hashed, "call %d hashes only the contents added since call %d", i, i-1)
	}
	assert.Equal(t, int64(calls[len(calls)-1].contents), total, "each content of the session is hashed once")
}
