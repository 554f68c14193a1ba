package integration

import (
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/adk-contextguard/contextguard/core/coretest"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/model/gemini"
	"google.golang.org/adk/plugin"
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
				window: window, outputBytes: outputBytes, log: clog, logs: logs, extra: []*plugin.Plugin{obs.plugin(t)}})

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
