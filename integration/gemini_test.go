package integration

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/adk-contextguard/contextguard"
	"github.com/adk-contextguard/contextguard/core/coretest"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/model/gemini"
	"google.golang.org/adk/plugin"
	"google.golang.org/adk/session"
	"google.golang.org/genai"
)

// newFakeGemini is the Gemini API on a local server (coretest.GeminiServer):
// the agent's model plays the scenario script, the summarizer's model answers
// with summaryOf, and usage is the ground truth over the body received (in a
// stream, only with the last chunk).
func newFakeGemini(stepsPerTurn, window int) *coretest.GeminiServer {
	return &coretest.GeminiServer{
		APIKey: "test",
		Window: window,
		Count: func(c *coretest.GeminiCall) int {
			return groundTruth(c.Contents, c.SystemInstruction, c.Tools)
		},
		Reply: func(c *coretest.GeminiCall) (*genai.Content, error) {
			if c.Model == summarizerModelName {
				return genai.NewContentFromText(summaryOf(requestText(c.Contents)), genai.RoleModel), nil
			}
			return nextReply(c.Contents, stepsPerTurn)
		},
	}
}

// usageObservation is what the observer plugin saw on one response.
type usageObservation struct {
	Partial   bool
	HasUsage  bool
	RealState any // the guard's real-tokens state after the guard's callback
}

// usageObserver is a plugin registered after the guard: for every model call
// it notes the guard's real-tokens state when the call starts and after
// each response (partial or final) the guard has seen.
type usageObserver struct {
	mu     sync.Mutex
	starts []any
	calls  [][]usageObservation
}

func (o *usageObserver) plugin(t *testing.T) *plugin.Plugin {
	p, err := plugin.New(plugin.Config{
		Name: "usage-observer",
		BeforeModelCallback: func(cctx agent.CallbackContext, _ *model.LLMRequest) (*model.LLMResponse, error) {
			v, _ := cctx.State().Get(stateKey("real_tokens"))
			o.mu.Lock()
			o.starts = append(o.starts, v)
			o.calls = append(o.calls, nil)
			o.mu.Unlock()
			return nil, nil
		},
		AfterModelCallback: func(cctx agent.CallbackContext, resp *model.LLMResponse, _ error) (*model.LLMResponse, error) {
			if resp == nil {
				return nil, nil
			}
			v, _ := cctx.State().Get(stateKey("real_tokens"))
			o.mu.Lock()
			last := len(o.calls) - 1
			o.calls[last] = append(o.calls[last], usageObservation{Partial: resp.Partial, HasUsage: resp.UsageMetadata != nil, RealState: v})
			o.mu.Unlock()
			return nil, nil
		},
	})
	require.NoError(t, err)
	return p
}

// asInt reads a state number as the in-memory session (int) or the
// database (float64) holds it.
func asInt(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case float64:
		return int(n), float64(int(n)) == n
	}
	return 0, false
}

// TestGeminiWireFormat runs the guard with ADK's Gemini adapter against a
// local server that speaks the Gemini REST API, streaming and not.
func TestGeminiWireFormat(t *testing.T) {
	for _, tc := range []struct {
		name string
		mode agent.StreamingMode
		path string
	}{
		{name: "non-streaming", mode: agent.StreamingModeNone, path: "/v1beta/models/" + agentModelName + ":generateContent"},
		{name: "streaming-sse", mode: agent.StreamingModeSSE, path: "/v1beta/models/" + agentModelName + ":streamGenerateContent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const (
				window          = 8_000
				stepsPerTurn    = 2
				outputBytes     = 3_000
				wantCompactions = 2
				maxTurns        = 12
				sessionID       = "gemini"
			)
			ctx := t.Context()
			salt := t.Name()
			fake := newFakeGemini(stepsPerTurn, window)
			srv := httptest.NewServer(fake)
			t.Cleanup(srv.Close)
			cfg := &genai.ClientConfig{
				HTTPOptions: genai.HTTPOptions{BaseURL: srv.URL},
				APIKey:      "test",
				Backend:     genai.BackendGeminiAPI,
			}
			agentLLM, err := gemini.NewModel(ctx, agentModelName, cfg)
			require.NoError(t, err)
			summarizerLLM, err := gemini.NewModel(ctx, summarizerModelName, cfg)
			require.NoError(t, err)

			db := sqliteDatabase(t)(t)
			createSession(t, db.svc, sessionID)
			clog, logs, obs := &compactionLog{}, &logRecorder{}, &usageObserver{}
			r := newReplica(t, replicaConfig{name: tc.name, svc: db.svc, agentLLM: agentLLM, summarizer: summarizerLLM,
				window: window, outputBytes: outputBytes, log: clog, logs: logs, extra: []*plugin.Plugin{obs.plugin(t)},
				// Each summarizer call is followed by the request it
				// compacted: no compaction between turns or prepared ahead.
				inlineOnly: true})

			partials := 0
			for turn := 1; turn <= maxTurns && len(clog.Events()) < wantCompactions; turn++ {
				clog.setTurn(turn)
				for ev, err := range r.runner.Run(ctx, userID, sessionID, userMessage(salt, turn), agent.RunConfig{StreamingMode: tc.mode}) {
					require.NoError(t, err, "turn %d", turn)
					if ev.Partial {
						partials++
					}
				}
			}
			require.GreaterOrEqual(t, len(clog.Events()), wantCompactions, "compactions within %d turns", maxTurns)

			calls := fake.Calls()
			var agentCalls []coretest.GeminiCall
			summaries := 0
			for _, c := range calls {
				if c.Model == summarizerModelName {
					summaries++
					assert.Equal(t, "/v1beta/models/"+summarizerModelName+":generateContent", c.Path)
					continue
				}
				assert.Equal(t, tc.path, c.Path)
				assert.LessOrEqual(t, c.Tokens, window, "request fits the window by the ground truth")
				agentCalls = append(agentCalls, c)
			}
			assert.Equal(t, len(clog.Events()), summaries, "one summarizer call per compaction")

			// Usage is recorded once per model call, from the final response.
			require.Len(t, obs.calls, len(agentCalls), "observed model calls")
			for k, seen := range obs.calls {
				require.NotEmpty(t, seen, "call %d", k)
				for i, o := range seen {
					final := i == len(seen)-1
					assert.Equal(t, !final, o.Partial, "call %d response %d: only the last is final", k, i)
					if !final {
						assert.Equal(t, obs.starts[k], o.RealState, "call %d: a partial response changed the stored usage", k)
						continue
					}
					n, ok := asInt(o.RealState)
					assert.True(t, ok, "call %d: stored usage %T", k, o.RealState)
					assert.Equal(t, agentCalls[k].Tokens, n, "call %d: stored usage is the call's promptTokenCount", k)
				}
				if tc.mode == agent.StreamingModeSSE {
					// Every chunk is a partial response, the last one with usage;
					// the aggregated final response follows.
					assert.Len(t, seen, agentCalls[k].Chunks+1, "call %d", k)
					assert.True(t, seen[len(seen)-2].HasUsage, "call %d: the last chunk carries usage", k)
					assert.Greater(t, agentCalls[k].Chunks, 1, "call %d streamed in several chunks", k)
				} else {
					assert.Len(t, seen, 1, "call %d", k)
				}
			}
			if tc.mode == agent.StreamingModeSSE {
				assert.Greater(t, partials, len(agentCalls), "the runner yielded partial events")
			} else {
				assert.Zero(t, partials)
			}

			// The persisted events: one model event per call, its state delta
			// carrying that call's usage, as the database returns it.
			s := getSession(t, db.svc, sessionID)
			var deltas []any
			for ev := range s.Events().All() {
				if ev.Author != agentName || ev.Content == nil || ev.Content.Role != genai.RoleModel {
					continue
				}
				assert.False(t, ev.Partial, "partial events are not persisted")
				deltas = append(deltas, ev.Actions.StateDelta[stateKey("real_tokens")])
			}
			require.Len(t, deltas, len(agentCalls), "persisted model events")
			for k, d := range deltas {
				assert.Equal(t, float64(agentCalls[k].Tokens), d, "event %d: real-tokens delta", k)
			}

			// After each compaction the request on the wire is the compacted
			// one: it starts with the summary and no longer carries the
			// summarized user messages (the quoted current request excepted).
			checked := 0
			for i, c := range calls {
				if c.Model != summarizerModelName {
					continue
				}
				summary := strings.TrimSpace(summaryOf(requestText(c.Contents)))
				var next *coretest.GeminiCall
				for j := i + 1; j < len(calls); j++ {
					if calls[j].Model != summarizerModelName {
						next = &calls[j]
						break
					}
				}
				require.NotNil(t, next, "a model call follows compaction %d", checked+1)
				require.NotEmpty(t, next.Contents)
				first := contentText(next.Contents[0])
				assert.True(t, strings.HasPrefix(first, "[Conversation summary"), "compacted body starts with the summary, got %.100q", first)
				assert.Contains(t, first, summary)
				quoted := ""
				if i, j := strings.Index(first, "<user_request>"), strings.Index(first, "</user_request>"); i >= 0 && j > i {
					quoted = first[i:j]
				}
				tags := summarizedRe.FindAllString(summary, -1)
				require.NotEmpty(t, tags)
				for _, tag := range tags {
					if m := markerOfTag(tag); !strings.Contains(quoted, m) {
						assert.NotContains(t, next.Body, m, "the compacted body still carries a summarized user message")
					}
				}
				checked++
			}
			assert.Equal(t, summaries, checked)
			noSkippedSummary(t, logs)

			maxTokens := 0
			for _, c := range agentCalls {
				maxTokens = max(maxTokens, c.Tokens)
			}
			t.Logf("model calls=%d partial events=%d compactions=%d summarizer calls=%d max request=%d/%d tokens (o200k over the body)",
				len(agentCalls), partials, len(clog.Events()), summaries, maxTokens, window)
		})
	}
}

// wireRequest is a Gemini request body as received, its parts kept as the
// bytes genai's client sent.
type wireRequest struct {
	Contents          []json.RawMessage `json:"contents"`
	SystemInstruction json.RawMessage   `json:"systemInstruction"`
	Tools             json.RawMessage   `json:"tools"`
	ToolConfig        *struct {
		FunctionCallingConfig *struct {
			Mode string `json:"mode"`
		} `json:"functionCallingConfig"`
	} `json:"toolConfig"`
}

// decodeWire decodes a request body; a body that does not decode is a test
// failure.
func decodeWire(t *testing.T, body string) wireRequest {
	t.Helper()
	var w wireRequest
	require.NoError(t, json.Unmarshal([]byte(body), &w))
	return w
}

// toolsOff reports whether a request disables tool calling: the summary
// request of the cached form.
func (w wireRequest) toolsOff() bool {
	return w.ToolConfig != nil && w.ToolConfig.FunctionCallingConfig != nil && w.ToolConfig.FunctionCallingConfig.Mode == "NONE"
}

// TestGeminiWire_CachedSummary: with the agent's own model as its
// summarizer (Add(name, model)), ADK's Gemini model against a local server
// that speaks the Gemini REST API sends each summary request as the
// agent's request plus one instruction: its systemInstruction and tools
// are the bytes of the agent's request before it, its contents start with
// that request's contents byte for byte (the prefix the provider has
// cached), then what the conversation added and the instruction, and
// toolConfig's functionCallingConfig mode is NONE. The session goes on from
// the summaries, every request within the window.
func TestGeminiWire_CachedSummary(t *testing.T) {
	const (
		window          = 32_000
		stepsPerTurn    = 2
		outputBytes     = 1_500
		wantCompactions = 2
		maxTurns        = 80
		sessionID       = "gemini-cached"
	)
	ctx := t.Context()
	fake := newFakeGemini(stepsPerTurn, window)
	fake.Reply = func(c *coretest.GeminiCall) (*genai.Content, error) {
		var w wireRequest
		if err := json.Unmarshal([]byte(c.Body), &w); err == nil && w.toolsOff() {
			return genai.NewContentFromText(summaryOf(requestText(c.Contents)), genai.RoleModel), nil
		}
		return nextReply(c.Contents, stepsPerTurn)
	}
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	agentLLM, err := gemini.NewModel(ctx, agentModelName, &genai.ClientConfig{
		HTTPOptions: genai.HTTPOptions{BaseURL: srv.URL}, APIKey: "test", Backend: genai.BackendGeminiAPI,
	})
	require.NoError(t, err)
	svc := session.InMemoryService()
	createSession(t, svc, sessionID)
	clog, logs := &compactionLog{}, &logRecorder{}
	r := newReplica(t, replicaConfig{name: "cached", svc: svc, agentLLM: agentLLM, summarizer: agentLLM,
		window: window, outputBytes: outputBytes, log: clog, logs: logs})
	for turn := 1; turn <= maxTurns && len(clog.Events()) < wantCompactions; turn++ {
		clog.setTurn(turn)
		require.NoError(t, r.runTurn(ctx, sessionID, userMessage(t.Name(), turn), agent.RunConfig{}), "turn %d", turn)
	}
	events := clog.Events()
	require.GreaterOrEqual(t, len(events), wantCompactions, "compactions within %d turns", maxTurns)
	for _, e := range events {
		assert.Equal(t, contextguard.SummaryFormCached, e.Event.SummaryForm, "turn %d", e.Turn)
		assert.False(t, e.Event.Fallback, e.Event.FallbackReason)
	}

	calls := fake.Calls()
	summaries := 0
	var prev *wireRequest
	for i, c := range calls {
		w := decodeWire(t, c.Body)
		if !w.toolsOff() {
			assert.LessOrEqual(t, c.Tokens, window, "call %d fits the window by the ground truth", i)
			prev = &w
			continue
		}
		summaries++
		require.NotNil(t, prev, "a summary follows an agent request")
		assert.Equal(t, c.Model, agentModelName)
		assert.Equal(t, string(prev.SystemInstruction), string(w.SystemInstruction), "summary %d: the agent's systemInstruction, byte for byte", summaries)
		assert.Equal(t, string(prev.Tools), string(w.Tools), "summary %d: the agent's tools, byte for byte", summaries)
		require.Greater(t, len(w.Contents), len(prev.Contents), "summary %d: the agent's contents and more", summaries)
		for k := range prev.Contents {
			assert.Equal(t, string(prev.Contents[k]), string(w.Contents[k]), "summary %d, content %d: the cached prefix, byte for byte", summaries, k)
		}
		assert.Contains(t, contentText(c.Contents[len(c.Contents)-1]), "<summary_request>", "summary %d: the instruction last", summaries)
	}
	assert.Equal(t, len(events), summaries, "one summary request per compaction")
	noSkippedSummary(t, logs)
}
