package plugintest

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/plugin"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/genai"

	. "github.com/adk-contextguard/contextguard"
	"github.com/adk-contextguard/contextguard/contextguardtest"
	"github.com/adk-contextguard/contextguard/core/coretest"
)

// modelCall records one call of a wrappedModel.
type modelCall struct {
	index           int
	summarizerCalls int // summarizer calls made before this model call
	first           string
	contents        int
	err             error
	pairErr         error
}

// wrappedModel wraps a model, records its calls and fails those fail picks.
type wrappedModel struct {
	inner model.LLM
	// summarizerCalls, if set, is sampled at each call.
	summarizerCalls func() int
	// fail returns the error call i (0-based) must fail with, or nil.
	fail func(i int, c modelCall) error

	mu    sync.Mutex
	calls []modelCall
}

func (w *wrappedModel) Name() string { return w.inner.Name() }

func (w *wrappedModel) GenerateContent(ctx context.Context, req *model.LLMRequest, stream bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		c := modelCall{contents: len(req.Contents), pairErr: contextguardtest.CheckPairs(req.Contents)}
		if len(req.Contents) > 0 {
			c.first = contentText(req.Contents[0])
		}
		if w.summarizerCalls != nil {
			c.summarizerCalls = w.summarizerCalls()
		}
		w.mu.Lock()
		c.index = len(w.calls)
		w.calls = append(w.calls, c)
		w.mu.Unlock()
		if w.fail != nil {
			if err := w.fail(c.index, c); err != nil {
				w.setErr(c.index, err)
				yield(nil, err)
				return
			}
		}
		for resp, err := range w.inner.GenerateContent(ctx, req, stream) {
			if err != nil {
				w.setErr(c.index, err)
			}
			if !yield(resp, err) {
				return
			}
		}
	}
}

func (w *wrappedModel) setErr(i int, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.calls[i].err = err
}

func (w *wrappedModel) log() []modelCall {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]modelCall(nil), w.calls...)
}

// harness is one agent behind a real runner with in-memory sessions.
type harness struct {
	t     testing.TB
	r     *runner.Runner
	svc   session.Service
	agent string
}

func newHarness(t testing.TB, g *ContextGuard, agentName string, llm model.LLM) *harness {
	t.Helper()
	a, err := llmagent.New(llmagent.Config{Name: agentName, Model: llm, Instruction: "You are a helpful assistant."})
	require.NoError(t, err)
	svc := session.InMemoryService()
	p, err := g.Plugin()
	require.NoError(t, err)
	r, err := runner.New(runner.Config{
		AppName: "app", Agent: a, SessionService: svc, AutoCreateSession: true,
		PluginConfig: runner.PluginConfig{Plugins: []*plugin.Plugin{p}},
	})
	require.NoError(t, err)
	return &harness{t: t, r: r, svc: svc, agent: agentName}
}

// turn sends one user message and returns the errors the runner surfaced
// and the final text.
func (h *harness) turn(sessionID, text string) (string, []error) {
	var errs []error
	var out string
	msg := genai.NewContentFromText(text, genai.RoleUser)
	for ev, err := range h.r.Run(context.Background(), "u", sessionID, msg, agent.RunConfig{}) {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ev != nil && ev.Content != nil {
			out = contentText(ev.Content)
		}
	}
	return out, errs
}

// state reads one of the agent's guard keys from the stored session.
func (h *harness) state(sessionID, key string) any {
	h.t.Helper()
	resp, err := h.svc.Get(context.Background(), &session.GetRequest{AppName: "app", UserID: "u", SessionID: sessionID})
	require.NoError(h.t, err)
	v, err := resp.Session.State().Get(key + h.agent)
	if err != nil {
		return nil
	}
	return v
}

// userText is the text of user turn i: the kit's turn tag and marker, then
// size bytes of prose.
func userText(turn, size int) string {
	marker := contextguardtest.Marker(int64(1000 + turn))
	return coretest.UserMessage(turn, marker, coretest.Generate(coretest.KindProseEnglish, size, int64(turn)))
}

// ---------------------------------------------------------------------------
// Recognising overflow errors
// ---------------------------------------------------------------------------

func TestAsContextOverflow(t *testing.T) {
	kit := func(style coretest.ErrorStyle) error {
		return &coretest.OverflowError{Style: style, Tokens: 9_123, Limit: 8_000}
	}
	tests := []struct {
		name     string
		err      error
		ok       bool
		provider string
		tokens   int
		limit    int
	}{
		{"kit gemini", kit(coretest.ErrorGemini), true, "gemini", 9_123, 8_000},
		{"kit anthropic", kit(coretest.ErrorAnthropic), true, "anthropic", 9_123, 8_000},
		{"kit openai", kit(coretest.ErrorOpenAI), true, "openai", 9_123, 8_000},
		{"gemini APIError value", genai.APIError{Code: 400, Status: "INVALID_ARGUMENT", Message: "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576)."}, true, "gemini", 1_200_000, 1_048_576},
		{"gemini APIError pointer, wrapped", fmt.Errorf("model: %w", &genai.APIError{Code: 400, Status: "INVALID_ARGUMENT", Message: "The input token count (1,200,000) exceeds the maximum number of tokens allowed (1,048,576)."}), true, "gemini", 1_200_000, 1_048_576},
		{"gemini without counts", errors.New("400 INVALID_ARGUMENT: request exceeds the maximum number of tokens allowed"), true, "gemini", 0, 0},
		{"anthropic max_tokens", errors.New("invalid_request_error: input length and `max_tokens` exceed context limit: 188240 + 21333 > 200000, decrease input length or `max_tokens` and try again"), true, "anthropic", 188_240, 200_000},
		{"anthropic bare", errors.New("400 Bad Request: prompt is too long"), true, "anthropic", 0, 0},
		{"openai requested", errors.New("This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion."), true, "openai", 4_000, 4_096},
		{"openai code only", errors.New(`{"error":{"code":"context_length_exceeded","message":"Your input exceeds the context window of this model."}}`), true, "openai", 0, 0},
		{"vllm input has", errors.New("This model's maximum context length is 32768 tokens. However, your request has 40000 input tokens."), true, "openai", 40_000, 32_768},
		{"vllm longer than", errors.New("The input (9000 tokens) is longer than the model's context length (8192 tokens)."), true, "openai", 9_000, 8_192},
		{"xai", errors.New("This model's maximum prompt length is 131072 but the request contains 137214 tokens."), true, "openai", 137_214, 131_072},
		{"generic context window", errors.New("upstream: input exceeds the context window"), true, "generic", 0, 0},
		{"generic too many tokens", errors.New("request failed: too many tokens in prompt"), true, "generic", 0, 0},
		{"generic token limit", errors.New("error: token limit exceeded"), true, "generic", 0, 0},
		{"llama.cpp", errors.New("the request exceeds the available context size, try increasing it"), true, "generic", 0, 0},

		{"nil", nil, false, "", 0, 0},
		{"503", genai.APIError{Code: 503, Status: "UNAVAILABLE", Message: "The model is overloaded. Please try again later."}, false, "", 0, 0},
		{"timeout", fmt.Errorf("calling model: %w", context.DeadlineExceeded), false, "", 0, 0},
		{"cancelled", context.Canceled, false, "", 0, 0},
		{"gemini quota", genai.APIError{Code: 429, Status: "RESOURCE_EXHAUSTED", Message: "Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_input_token_count, limit: 250000"}, false, "", 0, 0},
		{"openai rate limit", errors.New("Rate limit reached for gpt-4o on tokens per min (TPM): Limit 30000, Used 29000, Requested 5000."), false, "", 0, 0},
		{"output length", errors.New("max_tokens is too large: 50000. This model supports at most 16384 completion tokens, whereas you provided 50000."), false, "", 0, 0},
		{"unrelated", errors.New("connection reset by peer"), false, "", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := AsContextOverflow(tt.err)
			require.Equal(t, tt.ok, ok, "%v", tt.err)
			assert.Equal(t, tt.provider, got.Provider)
			assert.Equal(t, tt.tokens, got.Tokens)
			assert.Equal(t, tt.limit, got.Limit)
		})
	}
}

// ---------------------------------------------------------------------------
// OnModelErrorCallback, driven directly
// ---------------------------------------------------------------------------

func TestWithRecoveryModel_NilIsAnError(t *testing.T) {
	g := New(nil)
	g.Add("a", fixedSummary("x"), WithRecoveryModel(nil))
	_, err := g.Plugin()
	require.Error(t, err)
	assert.Contains(t, err.Error(), `Add("a")`)
	assert.Contains(t, err.Error(), "WithRecoveryModel: model is nil")
}

// ---------------------------------------------------------------------------
// Through a real runner
// ---------------------------------------------------------------------------

// overflowSetup is a scripted model whose ground truth is three times the
// seeds' bytes/4 and that reports no usage, so the guard underestimates
// every request and the provider rejects some.
func overflowSetup(style coretest.ErrorStyle) *contextguardtest.ScriptedModel {
	return contextguardtest.NewScriptedModel(contextguardtest.ScriptConfig{
		Name:       "gemini-2.5-flash",
		Window:     8_000,
		Counter:    contextguardtest.SeedCounter(3),
		NoUsage:    true,
		ErrorStyle: style,
	})
}

func TestRecovery_Runner_WithRecoveryModel(t *testing.T) {
	for _, style := range []coretest.ErrorStyle{coretest.ErrorGemini, coretest.ErrorAnthropic, coretest.ErrorOpenAI} {
		t.Run(style.String(), func(t *testing.T) {
			m := overflowSetup(style)
			sum := contextguardtest.NewSummarizerModel(contextguardtest.SummarizerConfig{SummarySize: 1_000})
			logs := &logBuffer{}
			g := New(nil, WithLogger(logs.logger()))
			g.Add("assistant", sum, WithMaxTokens(8_000), WithRecoveryModel(m))
			w := &wrappedModel{inner: m, summarizerCalls: sum.Calls}
			h := newHarness(t, g, "assistant", w)
			for turn := range 12 {
				text := userText(turn, 2_000)
				out, errs := h.turn("s", text)
				require.Empty(t, errs, "turn %d: the overflow is recovered", turn)
				assert.Contains(t, out, fmt.Sprintf("Turn %d done.", turn))
			}
			require.Positive(t, m.Rejected(), "the provider rejected requests")
			t.Logf("%d requests, %d rejected and recovered, %d summaries", len(m.Requests()), m.Rejected(), sum.Calls())
			// Each rejected request is followed by the recovery request: the
			// summary message alone, accepted.
			reqs := m.Requests()
			for i, rec := range reqs {
				assert.NoError(t, rec.PairError)
				if !rec.Rejected {
					continue
				}
				require.Less(t, i+1, len(reqs))
				next := reqs[i+1]
				assert.False(t, next.Rejected, "request %d fits", i+1)
				assert.Equal(t, 1, next.Contents)
				assert.True(t, strings.HasPrefix(next.LastUserText, summaryHeader[:40]), "request %d is the compacted one: %q", i+1, next.LastUserText)
				assert.Less(t, next.Tokens, 4_000+500, "compacted to about half the window")
			}
			assert.Positive(t, sum.Calls())
			assert.Contains(t, logs.String(), "recovered from a context overflow")
			assert.NotEmpty(t, h.state("s", keySummary), "the recovery's compaction was persisted with its response")
		})
	}
}

func TestRecovery_Runner_WithoutRecoveryModel(t *testing.T) {
	for _, style := range []coretest.ErrorStyle{coretest.ErrorGemini, coretest.ErrorAnthropic, coretest.ErrorOpenAI} {
		t.Run(style.String(), func(t *testing.T) {
			m := overflowSetup(style)
			sum := contextguardtest.NewSummarizerModel(contextguardtest.SummarizerConfig{SummarySize: 1_000})
			logs := &logBuffer{}
			g := New(nil, WithLogger(logs.logger()))
			g.Add("assistant", sum, WithMaxTokens(8_000))
			w := &wrappedModel{inner: m, summarizerCalls: sum.Calls}
			h := newHarness(t, g, "assistant", w)
			surfaced := 0
			for turn := range 12 {
				before := len(w.log())
				_, errs := h.turn("s", userText(turn, 2_000))
				calls := w.log()[before:]
				if len(errs) > 0 {
					surfaced++
					require.Len(t, errs, 1, "turn %d: the error surfaces once", turn)
					assert.True(t, contextguardtest.IsOverflowError(errs[0]), "the provider's error, untouched: %v", errs[0])
					require.Len(t, calls, 1, "turn %d: no retry inside the turn", turn)
				}
			}
			require.Positive(t, surfaced, "the setup makes the provider reject requests")
			t.Logf("%d model calls, %d overflows surfaced, %d summaries", len(w.log()), surfaced, sum.Calls())
			// Every rejected call is followed by a call that compacted first
			// and was accepted.
			log := w.log()
			for i, c := range log {
				if c.err == nil || !contextguardtest.IsOverflowError(c.err) {
					continue
				}
				require.Less(t, i+1, len(log), "a call follows the overflow")
				next := log[i+1]
				assert.Greater(t, next.summarizerCalls, c.summarizerCalls, "call %d compacted first", i+1)
				assert.NoError(t, next.err, "call %d fits", i+1)
				assert.True(t, strings.HasPrefix(next.first, summaryHeader), "call %d starts with the summary", i+1)
			}
			assert.Contains(t, logs.String(), "compacting first")
		})
	}
}

// TestFailedCallAfterCompaction_ReusesSummary: the model call right after a
// compaction fails with a 503, so ADK drops the state delta that carried the
// summary; the next call reuses the summary from memory instead of paying
// for it again, and persists it.
func TestFailedCallAfterCompaction_ReusesSummary(t *testing.T) {
	m := contextguardtest.NewScriptedModel(contextguardtest.ScriptConfig{Name: "gemini-2.5-flash"})
	sum := contextguardtest.NewSummarizerModel(contextguardtest.SummarizerConfig{SummarySize: 800})
	logs := &logBuffer{}
	g := New(nil, WithLogger(logs.logger()))
	// The compaction must run inside the model call that fails.
	g.Add("assistant", sum, WithMaxTokens(8_000), WithBetweenTurns(BetweenTurnsOff))
	unavailable := genai.APIError{Code: 503, Status: "UNAVAILABLE", Message: "The model is overloaded. Please try again later."}
	failed := -1
	w := &wrappedModel{inner: m, summarizerCalls: sum.Calls}
	w.fail = func(i int, c modelCall) error {
		if failed < 0 && c.summarizerCalls == 1 {
			failed = i
			return unavailable
		}
		return nil
	}
	h := newHarness(t, g, "assistant", w)

	turn := 0
	for ; turn < 40 && failed < 0; turn++ {
		_, errs := h.turn("s", userText(turn, 1_500))
		if failed >= 0 {
			require.Len(t, errs, 1)
			var apiErr genai.APIError
			require.ErrorAs(t, errs[0], &apiErr, "the 503 passes through untouched")
			assert.Equal(t, 503, apiErr.Code)
		} else {
			require.Empty(t, errs)
		}
	}
	require.GreaterOrEqual(t, failed, 0, "a compaction happened")
	require.Equal(t, 1, sum.Calls())
	t.Logf("call %d (turn %d) failed right after the compaction", failed, turn-1)
	assert.Nil(t, h.state("s", keySummary), "the state delta of the failed call is lost")

	out, errs := h.turn("s", userText(turn, 300))
	require.Empty(t, errs)
	assert.Contains(t, out, "done.")
	log := w.log()
	next := log[failed+1]
	assert.Equal(t, 1, sum.Calls(), "the summarizer is not called again")
	assert.True(t, strings.HasPrefix(next.first, summaryHeader), "the request starts with the summary")
	assert.Contains(t, next.first, "## Current State", "the paid summary")
	assert.NoError(t, next.pairErr)
	assert.Contains(t, logs.String(), "reusing its summary")
	assert.NotEmpty(t, h.state("s", keySummary), "persisted again")
	assert.EqualValues(t, 1, h.state("s", keyCompactions))
}

// TestSummarizerPanic_Runner: a summarizer that panics does not crash the
// agent; the fallback summary is used and the stack is logged.
func TestSummarizerPanic_Runner(t *testing.T) {
	m := contextguardtest.NewScriptedModel(contextguardtest.ScriptConfig{Name: "gemini-2.5-flash"})
	sum := contextguardtest.NewSummarizerModel(contextguardtest.SummarizerConfig{})
	sum.InjectFaultFrom(1, coretest.FaultPanic)
	logs := &logBuffer{}
	var events []CompactionEvent
	var mu sync.Mutex
	g := New(nil, WithLogger(logs.logger()), WithOnCompaction(func(_ context.Context, e CompactionEvent) {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, e)
	}))
	g.Add("assistant", sum, WithMaxTokens(8_000))
	w := &wrappedModel{inner: m, summarizerCalls: sum.Calls}
	h := newHarness(t, g, "assistant", w)
	var last string
	for turn := range 25 {
		last = userText(turn, 1_500)
		out, errs := h.turn("s", last)
		require.Empty(t, errs, "turn %d: the agent survives", turn)
		assert.Contains(t, out, fmt.Sprintf("Turn %d done.", turn))
	}
	require.Positive(t, sum.Calls(), "the summarizer was called and panicked")
	t.Logf("%d summarizer calls, all panicked", sum.Calls())
	mu.Lock()
	require.NotEmpty(t, events)
	for _, e := range events {
		assert.True(t, e.Fallback)
		assert.Contains(t, e.FallbackReason, "summarizer panicked")
	}
	mu.Unlock()
	out := logs.String()
	assert.Contains(t, out, "summarizer panicked")
	assert.Contains(t, out, "stack=")
	assert.Contains(t, out, "goroutine")
	assert.Contains(t, out, "using the fallback summary")
	summary, _ := h.state("s", keySummary).(string)
	assert.True(t, strings.HasPrefix(summary, "(Automatic summary"), "the fallback summary is stored: %.80q", summary)
	for _, c := range w.log() {
		assert.NoError(t, c.pairErr)
	}
	// The latest request reached the model.
	final := m.Requests()[len(m.Requests())-1]
	assert.Contains(t, last, final.LastUserText[:40])
}
