package integration

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/model/gemini"
	"google.golang.org/adk/v2/plugin"
	"google.golang.org/genai"
)

// geminiPath is the REST path genai v1.57.0 uses for the Gemini API:
// POST /v1beta/models/{model}:generateContent, and
// POST /v1beta/models/{model}:streamGenerateContent?alt=sse for streaming.
var geminiPath = regexp.MustCompile(`^/v1beta/models/([^/:]+):(generateContent|streamGenerateContent)$`)

// wireRequest is the part of a generateContent request body the server
// reads.
type wireRequest struct {
	Contents          []*genai.Content `json:"contents"`
	SystemInstruction *genai.Content   `json:"systemInstruction"`
	Tools             []*genai.Tool    `json:"tools"`
}

// wireCall is one request the fake Gemini server received.
type wireCall struct {
	Path, Model string
	Stream      bool
	Body        string
	Contents    []*genai.Content
	// Tokens is the ground truth over the decoded body, answered as
	// usageMetadata.promptTokenCount.
	Tokens int
	// Chunks is how many SSE events a streamed answer was sent in.
	Chunks int
}

// fakeGemini speaks the Gemini REST API on an httptest server: the agent's
// model plays the scenario script, the summarizer's model answers with
// summaryOf. Usage is the ground truth over the body received; in a stream
// it comes only with the last chunk.
type fakeGemini struct {
	stepsPerTurn int
	window       int

	mu    sync.Mutex
	calls []wireCall
}

// Calls returns the requests received so far.
func (f *fakeGemini) Calls() []wireCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]wireCall(nil), f.calls...)
}

func (f *fakeGemini) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m := geminiPath.FindStringSubmatch(r.URL.Path)
	if r.Method != http.MethodPost || m == nil {
		http.Error(w, fmt.Sprintf(`{"error":{"code":404,"message":"no route %s %s","status":"NOT_FOUND"}}`, r.Method, r.URL.Path), http.StatusNotFound)
		return
	}
	call := wireCall{Path: r.URL.Path, Model: m[1], Stream: m[2] == "streamGenerateContent"}
	if call.Stream && r.URL.Query().Get("alt") != "sse" {
		http.Error(w, `{"error":{"code":400,"message":"streaming needs alt=sse","status":"INVALID_ARGUMENT"}}`, http.StatusBadRequest)
		return
	}
	if r.Header.Get("x-goog-api-key") != "test" {
		http.Error(w, `{"error":{"code":401,"message":"API key not valid","status":"UNAUTHENTICATED"}}`, http.StatusUnauthorized)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req wireRequest
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, fmt.Sprintf(`{"error":{"code":400,"message":%q,"status":"INVALID_ARGUMENT"}}`, err.Error()), http.StatusBadRequest)
		return
	}
	call.Body, call.Contents = string(body), req.Contents
	call.Tokens = groundTruth(req.Contents, req.SystemInstruction, req.Tools)

	var reply *genai.Content
	switch {
	case call.Model == summarizerModelName:
		reply = genai.NewContentFromText(summaryOf(requestText(req.Contents)), genai.RoleModel)
	case call.Tokens > f.window:
		f.record(call)
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":{"code":400,"message":"The input token count (%d) exceeds the maximum number of tokens allowed (%d).","status":"INVALID_ARGUMENT"}}`, call.Tokens, f.window)
		return
	default:
		reply, err = nextReply(req.Contents, f.stepsPerTurn)
		if err != nil {
			f.record(call)
			http.Error(w, fmt.Sprintf(`{"error":{"code":400,"message":%q,"status":"INVALID_ARGUMENT"}}`, err.Error()), http.StatusBadRequest)
			return
		}
	}
	out := o200kCount(contentText(reply))
	usage := map[string]any{"promptTokenCount": call.Tokens, "candidatesTokenCount": out, "totalTokenCount": call.Tokens + out}

	if !call.Stream {
		f.record(call)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"candidates":    []any{map[string]any{"content": reply, "finishReason": "STOP", "index": 0}},
			"usageMetadata": usage,
			"modelVersion":  call.Model,
		})
		return
	}

	// A stream: text in pieces, a function call whole; the last chunk
	// carries the finish reason and the usage.
	var parts []*genai.Part
	for _, p := range reply.Parts {
		if p.Text == "" {
			parts = append(parts, p)
			continue
		}
		words := strings.SplitAfter(p.Text, " ")
		step := max(1, (len(words)+2)/3)
		for i := 0; i < len(words); i += step {
			parts = append(parts, &genai.Part{Text: strings.Join(words[i:min(i+step, len(words))], "")})
		}
	}
	call.Chunks = len(parts)
	f.record(call)
	w.Header().Set("Content-Type", "text/event-stream")
	for i, p := range parts {
		cand := map[string]any{"content": &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{p}}, "index": 0}
		chunk := map[string]any{"candidates": []any{cand}, "modelVersion": call.Model}
		if i == len(parts)-1 {
			cand["finishReason"] = "STOP"
			chunk["usageMetadata"] = usage
		}
		b, _ := json.Marshal(chunk)
		fmt.Fprintf(w, "data: %s\r\n\r\n", b)
		if fl, ok := w.(http.Flusher); ok {
			fl.Flush()
		}
	}
}

func (f *fakeGemini) record(c wireCall) {
	f.mu.Lock()
	f.calls = append(f.calls, c)
	f.mu.Unlock()
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
		BeforeModelCallback: func(cctx agent.Context, _ *model.LLMRequest) (*model.LLMResponse, error) {
			v, _ := cctx.State().Get(stateKey("real_tokens"))
			o.mu.Lock()
			o.starts = append(o.starts, v)
			o.calls = append(o.calls, nil)
			o.mu.Unlock()
			return nil, nil
		},
		AfterModelCallback: func(cctx agent.Context, resp *model.LLMResponse, _ error) (*model.LLMResponse, error) {
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
			fake := &fakeGemini{stepsPerTurn: stepsPerTurn, window: window}
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
			var agentCalls []wireCall
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
				var next *wireCall
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
