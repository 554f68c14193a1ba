package core

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/coretest"

	"github.com/adk-contextguard/contextguard/core/internal/state"
	"github.com/adk-contextguard/contextguard/core/internal/textcut"
)

// sharedLLM is the LLM summarizer over the agent's own model: a fakeLLM
// that shares the model it is named for (CachedSummarizer), as the root's
// LLMSummarizer does.
type sharedLLM struct{ *fakeLLM }

func (s sharedLLM) SharesModel(model string) bool { return s.name == model }

// cachedAgentModel is the agent's model in the cached form's tests.
const cachedAgentModel = "gemini-2.5-flash"

// cacheRecorder is a summarizer named name (sharing the agent's
// model when name is cachedAgentModel) that records every request it sends
// and answers with a summary naming the call, or with fail's error.
type cacheRecorder struct {
	sharedLLM
	mu   sync.Mutex
	reqs []*Request
	fail func(call int, req *Request) error
}

func newCacheRecorder(name string) *cacheRecorder {
	r := &cacheRecorder{}
	r.sharedLLM = sharedLLM{&fakeLLM{name: name}}
	r.reply = func(_ context.Context, req *Request) (string, error) {
		r.mu.Lock()
		r.reqs = append(r.reqs, req)
		n, fail := len(r.reqs), r.fail
		r.mu.Unlock()
		if fail != nil {
			if err := fail(n, req); err != nil {
				return "", err
			}
		}
		return fmt.Sprintf("## Current State\nSUMMARY-%d of the migration.", n), nil
	}
	return r
}

func (r *cacheRecorder) requests() []*Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*Request(nil), r.reqs...)
}

// agentConfig is an agent's request configuration: a system instruction
// and two tools, as ADK builds them.
func agentConfig() *genai.GenerateContentConfig {
	return &genai.GenerateContentConfig{
		SystemInstruction: genai.NewContentFromText("You are a migration agent. Use the tools.", genai.RoleUser),
		Tools: []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{
			{Name: "kubectl_logs", Description: "Reads a pod's logs."},
			{Name: "read_file", Description: "Reads a file."},
		}}},
		Temperature: genai.Ptr[float32](0.2),
	}
}

// cachedWindow is the agent's window in the cached form's tests, and
// overTrigger a conversation just over its trigger (80%): the request, the
// instruction and the summary's room fit the window together.
const (
	cachedWindow = 32_000
	overTrigger  = cachedWindow*8/10 + 100
)

// assertCachedForm checks that sent, a summarizer request, is the cached
// form of an agent request whose contents are want and whose configuration
// is cfg: the same system instruction and tools (the same values, so the
// provider's prefix is byte-identical), the same contents, then one user
// content carrying the instruction, tool calling disabled and the output
// bounded. It returns the instruction.
func assertCachedForm(t *testing.T, sent *Request, want []*genai.Content, cfg *genai.GenerateContentConfig) string {
	t.Helper()
	require.Len(t, sent.Contents, len(want)+1, "the agent's contents and one instruction")
	for i := range want {
		assert.Equal(t, want[i], sent.Contents[i], "content %d is the agent's", i)
	}
	last := sent.Contents[len(want)]
	assert.Equal(t, genai.RoleUser, last.Role)
	require.Len(t, last.Parts, 1)
	assert.Same(t, cfg.SystemInstruction, sent.Config.SystemInstruction, "the agent's system instruction, as it is")
	assert.Equal(t, cfg.Tools, sent.Config.Tools, "the agent's tools stay declared")
	require.NotNil(t, sent.Config.ToolConfig)
	require.NotNil(t, sent.Config.ToolConfig.FunctionCallingConfig)
	assert.Equal(t, genai.FunctionCallingConfigModeNone, sent.Config.ToolConfig.FunctionCallingConfig.Mode, "tool calling disabled")
	assert.Positive(t, sent.Config.MaxOutputTokens)
	assert.Nil(t, sent.Config.Temperature, "only what makes the prefix and bounds the answer")
	return last.Parts[0].Text
}

// TestCachedSummary_AgentRequestPlusInstruction: with the summarizer over
// the agent's own model, the summary is asked as the agent's request as the
// guard would have sent it (same system instruction, tools and contents)
// plus one instruction, with tool calling disabled; the summary replaces
// the conversation as in the transcript form. Before the cached form, the
// summarizer got the summary prompt over a transcript.
func TestCachedSummary_AgentRequestPlusInstruction(t *testing.T) {
	tests := []struct {
		name string
		opts []AgentOption
		// kept says the strategy keeps a verbatim tail: the instruction
		// says how many messages stay.
		kept bool
		// pruned starts the conversation with a tool result that pruning
		// replaces by its placeholder.
		pruned bool
	}{
		{name: "threshold"},
		{name: "sliding window", opts: []AgentOption{WithSlidingWindow(3)}, kept: true},
		{name: "tail retention", opts: []AgentOption{WithTailRetention(0.2)}, kept: true},
		{name: "tool-result pruning", opts: []AgentOption{WithToolResultPruning(1)}, pruned: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			size := 400
			if tc.pruned {
				size = 150 // results too small to prune (pruning.go)
			}
			raw, user := conversationOf(overTrigger, size)
			var probeOpts []AgentOption
			if tc.pruned {
				raw = append([]*genai.Content{
					userMsg("U-OLD-MARK read the schema"),
					callMsg("read_file", map[string]any{"path": "schema.sql"}),
					respMsg("read_file", map[string]any{"output": "R-OLD-MARK " + coretest.Filler(8_000, 7)}),
					modelMsg("M-OLD-MARK read it"),
				}, raw...)
				// Over its trigger the guard prunes all it can; the probe,
				// under its own, prunes as much only on a pass of any size.
				probeOpts = append(tc.opts, WithPruningMinFree(1))
			}
			cfg := agentConfig()
			sum := newCacheRecorder(cachedAgentModel)
			var events []CompactionEvent
			logs := &logBuffer{}
			g := newGuard(NewCrushRegistry(WithRegistryLogger(quietLogger)), WithLogger(logs.logger()),
				WithOnCompaction(func(_ context.Context, e CompactionEvent) { events = append(events, e) }))
			g.addModel("a", sum, append([]AgentOption{WithMaxTokens(cachedWindow)}, tc.opts...)...)
			require.NoError(t, g.Err())

			// What the guard would send had it not compacted: the same
			// request shaping (pruning) under a trigger it does not reach.
			probe := newGuard(NewCrushRegistry(WithRegistryLogger(quietLogger)))
			probe.addModel("a", fixedSummary("unused"), append([]AgentOption{WithMaxTokens(10 * cachedWindow)}, probeOpts...)...)
			unguarded := &Request{Model: cachedAgentModel, Contents: raw, Config: cfg}
			_, err := probe.beforeModel(newFakeCtx("a").withUser(user), unguarded)
			require.NoError(t, err)

			req := &Request{Model: cachedAgentModel, Contents: raw, Config: cfg}
			_, err = g.beforeModel(newFakeCtx("a").withUser(user), req)
			require.NoError(t, err)

			sent := sum.requests()
			require.NotEmpty(t, sent, "the trigger is reached")
			instr := assertCachedForm(t, sent[0], unguarded.Contents, cfg)
			assert.Contains(t, instr, "Do not call any tool")
			assert.Contains(t, instr, "## Exact Next Steps", "the structured prompt")
			assert.Regexp(t, `under \d+ words`, instr, "the summary's length")
			if tc.pruned {
				assert.NotContains(t, flattenAll(sent[0].Contents), "R-OLD-MARK", "the pruned result, as the request carries it")
			}
			if tc.kept {
				assert.Regexp(t, `The last \d+ messages before this one stay in the conversation`, instr)
			} else {
				assert.NotContains(t, instr, "stay in the conversation")
			}
			require.Len(t, events, 1)
			assert.Equal(t, SummaryFormCached, events[0].SummaryForm)
			assert.False(t, events[0].Fallback)
			assert.Zero(t, events[0].RollingCalls)
			assert.Contains(t, textcut.ContentText(req.Contents[0]), "SUMMARY-", "the summary replaces the conversation")
			assert.Contains(t, logs.String(), "summary_form=cached")
		})
	}
}

// TestCachedSummary_StoredSummaryAndFocus: a second compaction's cached
// request starts with the stored summary message, as the request sent; the
// instruction says so and carries a requested compaction's focus, the
// hook's instructions and the todo list.
func TestCachedSummary_StoredSummaryAndFocus(t *testing.T) {
	raw, user := conversationOf(overTrigger, 400)
	cfg := agentConfig()
	sum := newCacheRecorder(cachedAgentModel)
	g := newGuard(NewCrushRegistry(WithRegistryLogger(quietLogger)),
		WithBeforeCompaction(func(context.Context, PendingCompaction) CompactionDecision {
			return CompactionDecision{Instructions: "HOOK-INSTRUCTIONS keep the ticket numbers"}
		}))
	g.addModel("a", sum, WithMaxTokens(cachedWindow))
	require.NoError(t, g.Err())
	ctx := newFakeCtx("a").withUser(user)
	ctx.state.m[todosKey] = []any{map[string]any{"content": "TODO-MIGRATE the orders table", "status": "in_progress"}}

	_, err := g.beforeModel(ctx, &Request{Model: cachedAgentModel, Contents: raw, Config: cfg})
	require.NoError(t, err)
	require.Len(t, sum.requests(), 1)

	// The conversation grows, then a compaction is requested.
	grown := append(append([]*genai.Content(nil), raw...), swHistory(1000, 1003, 200)...)
	grown = append(grown, userMsg("U1003-MARK next"))
	ctx.set(state.KeyCompactRequest, "FOCUS-ORDERS the orders table")
	sent := &Request{Model: cachedAgentModel, Contents: grown, Config: cfg}
	_, err = g.beforeModel(ctx.withUser("U1003-MARK next"), sent)
	require.NoError(t, err)

	reqs := sum.requests()
	require.Len(t, reqs, 2)
	second := reqs[1]
	cut := len(raw) // the first compaction covered the whole conversation
	want := append([]*genai.Content{second.Contents[0]}, grown[cut:]...)
	instr := assertCachedForm(t, second, want, cfg)
	assert.Contains(t, textcut.ContentText(second.Contents[0]), "SUMMARY-1", "the stored summary message, as the request carries it")
	assert.Contains(t, instr, "starts with a summary of its earlier part")
	assert.Contains(t, instr, "FOCUS-ORDERS the orders table")
	assert.Contains(t, instr, "HOOK-INSTRUCTIONS keep the ticket numbers")
	assert.Contains(t, instr, "[in_progress] TODO-MIGRATE the orders table")
}

// TestCachedSummary_TranscriptForm: the summary is asked in the transcript
// form, as before the cached form, when the summarizer's model is not the
// agent's, when a custom summarizer does not opt in, when the form is
// switched off, and when the request, the instruction and the summary do
// not fit the summarizer's window (then in rolling pieces when needed).
func TestCachedSummary_TranscriptForm(t *testing.T) {
	tests := []struct {
		name string
		sum  func() Summarizer
		opts []AgentOption
		// size is the conversation's calibrated size.
		size int
	}{
		{name: "another model", sum: func() Summarizer { return newCacheRecorder("gemini-2.5-flash-lite") }, size: overTrigger},
		{name: "a custom summarizer", sum: func() Summarizer { return fixedSummary("## Current State\nSUMMARY-custom") }, size: overTrigger},
		{name: "switched off", sum: func() Summarizer { return newCacheRecorder(cachedAgentModel) },
			opts: []AgentOption{WithSummaryForm(SummaryFormTranscript)}, size: overTrigger},
		{name: "the request leaves no room for the summary", sum: func() Summarizer { return newCacheRecorder(cachedAgentModel) },
			size: cachedWindow * 9 / 10},
		{name: "a smaller summarizer window", sum: func() Summarizer { return newCacheRecorder(cachedAgentModel) },
			opts: []AgentOption{WithSummarizerWindow(cachedWindow / 2)}, size: overTrigger},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			raw, user := conversationOf(tc.size, 400)
			var events []CompactionEvent
			g := newGuard(NewCrushRegistry(WithRegistryLogger(quietLogger)),
				WithOnCompaction(func(_ context.Context, e CompactionEvent) { events = append(events, e) }))
			s := tc.sum()
			g.Add("a", s, nil, append([]AgentOption{WithMaxTokens(cachedWindow)}, tc.opts...)...)
			require.NoError(t, g.Err())
			req := &Request{Model: cachedAgentModel, Contents: raw, Config: agentConfig()}
			_, err := g.beforeModel(newFakeCtx("a").withUser(user), req)
			require.NoError(t, err)

			require.Len(t, events, 1)
			assert.Equal(t, SummaryFormTranscript, events[0].SummaryForm)
			assert.False(t, events[0].Fallback)
			if r, ok := s.(*cacheRecorder); ok {
				for i, sent := range r.requests() {
					require.Len(t, sent.Contents, 1, "call %d: the transcript prompt", i+1)
					assert.Contains(t, textcut.ContentText(sent.Contents[0]), "<conversation>")
					assert.Nil(t, sent.Config.ToolConfig)
					assert.Nil(t, sent.Config.Tools)
				}
			}
		})
	}
}

// TestCachedSummary_FailureRetriedAsTranscript: a cached-form call that
// fails (a model adapter that rejects ToolConfig, or answers with a tool
// call and no text) is asked again in the transcript form within the same
// compaction, so the summary is the summarizer's, not the fallback; a
// timeout is not asked again.
func TestCachedSummary_FailureRetriedAsTranscript(t *testing.T) {
	tests := []struct {
		name string
		err  error
		// empty answers with no text instead of an error.
		empty bool
	}{
		{name: "an error", err: errors.New("tool_config is not supported")},
		{name: "an empty answer", empty: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			raw, user := conversationOf(overTrigger, 400)
			sum := newCacheRecorder(cachedAgentModel)
			base := sum.reply
			sum.reply = func(ctx context.Context, req *Request) (string, error) {
				s, err := base(ctx, req)
				if req.Config.ToolConfig != nil && tc.empty {
					return "", nil
				}
				return s, err
			}
			sum.fail = func(_ int, req *Request) error {
				if req.Config.ToolConfig != nil {
					return tc.err
				}
				return nil
			}
			var events []CompactionEvent
			logs := &logBuffer{}
			g := newGuard(NewCrushRegistry(WithRegistryLogger(quietLogger)), WithLogger(logs.logger()),
				WithOnCompaction(func(_ context.Context, e CompactionEvent) { events = append(events, e) }))
			g.addModel("a", sum, WithMaxTokens(cachedWindow))
			require.NoError(t, g.Err())
			req := &Request{Model: cachedAgentModel, Contents: raw, Config: agentConfig()}
			_, err := g.beforeModel(newFakeCtx("a").withUser(user), req)
			require.NoError(t, err)

			// The transcript of a request over the trigger takes more than
			// one input of the same window: a rolling summary.
			reqs := sum.requests()
			require.GreaterOrEqual(t, len(reqs), 2, "the cached call, then the transcript")
			assert.NotNil(t, reqs[0].Config.ToolConfig)
			for _, r := range reqs[1:] {
				assert.Contains(t, textcut.ContentText(r.Contents[0]), "<conversation>")
			}
			require.Len(t, events, 1)
			assert.False(t, events[0].Fallback, "the summarizer's summary, not the fallback")
			assert.Equal(t, SummaryFormTranscript, events[0].SummaryForm)
			assert.Equal(t, len(reqs), events[0].SummarizerCalls)
			assert.Contains(t, textcut.ContentText(req.Contents[0]), fmt.Sprintf("SUMMARY-%d", len(reqs)))
			assert.Contains(t, logs.String(), "the summary in the cached form failed; asking in the transcript form")
		})
	}

	t.Run("a timeout", func(t *testing.T) {
		raw, user := conversationOf(overTrigger, 400)
		clock := coretest.NewFakeClock(time.Time{})
		sum := sharedLLM{slowSummarizer(clock)}
		sum.name = cachedAgentModel
		var events []CompactionEvent
		g := newGuard(NewCrushRegistry(WithRegistryLogger(quietLogger)), WithClock(clock),
			WithOnCompaction(func(_ context.Context, e CompactionEvent) { events = append(events, e) }))
		g.addModel("a", sum, WithMaxTokens(cachedWindow), WithSummaryTimeout(testSummaryTimeout))
		require.NoError(t, g.Err())
		_, err := g.beforeModel(newFakeCtx("a").withUser(user), &Request{Model: cachedAgentModel, Contents: raw, Config: agentConfig()})
		require.NoError(t, err)
		require.Len(t, events, 1)
		assert.True(t, events[0].Fallback, "a timeout takes the fallback at once")
		assert.Equal(t, 1, events[0].SummarizerCalls, "and is not asked again")
		assert.Equal(t, SummaryFormCached, events[0].SummaryForm)
	})
}

// TestWithSummaryForm: the form is validated when the agent is added.
func TestWithSummaryForm(t *testing.T) {
	for _, f := range []SummaryForm{SummaryFormCached, SummaryFormTranscript} {
		c := agentConfigFor("a", `Add("a")`, fixedSummary("s"), []AgentOption{WithSummaryForm(f)})
		assert.Empty(t, c.errs, f)
		assert.Equal(t, f, c.summaryForm)
	}
	c := agentConfigFor("a", `Add("a")`, fixedSummary("s"), []AgentOption{WithSummaryForm("prefix")})
	require.Len(t, c.errs, 1)
	assert.ErrorContains(t, c.errs[0], `WithSummaryForm("prefix"): must be "cached" or "transcript"`)
	assert.Equal(t, SummaryFormCached, agentConfigFor("a", `Add("a")`, fixedSummary("s"), nil).summaryForm, "the default")
}

// TestCachedInstruction_Golden pins the cached form's instruction: a change
// to its template shows up as a diff here.
func TestCachedInstruction_Golden(t *testing.T) {
	got, err := renderCachedInstruction(SummaryRequest{
		Todos:         []TodoItem{{Content: "Read checkout-api logs", Status: "in_progress"}},
		SummaryTokens: 1000,
		Instructions:  "Keep pod names verbatim.",
	}, true, 4)
	require.NoError(t, err)
	path := filepath.Join("testdata", "summary_cached.golden")
	if *updateGolden {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -run TestCachedInstruction_Golden -update to create it")
	assert.Equal(t, string(want), got)
	assert.False(t, strings.Contains(got, "{{"), "every template action rendered")
}

// askedWordsIn is the length an instruction asks for, in words.
func askedWordsIn(t *testing.T, instr string) int {
	t.Helper()
	var n int
	i := strings.Index(instr, "under ")
	require.GreaterOrEqual(t, i, 0, "the instruction states the length")
	_, err := fmt.Sscanf(instr[i:], "under %d words", &n)
	require.NoError(t, err)
	return n
}

// TestCachedSummary_ShorterSummaryToFit: a request that reached the trigger
// by more than the summary's room leaves is still summarized from the
// cache, asking for a shorter summary (down to half the length), whose
// answer the call bounds to the room left; further over, the transcript
// form takes it (TestCachedSummary_TranscriptForm).
func TestCachedSummary_ShorterSummaryToFit(t *testing.T) {
	instruction := func(size int) (string, *Request, CompactionEvent) {
		raw, user := conversationOf(size, 400)
		sum := newCacheRecorder(cachedAgentModel)
		var events []CompactionEvent
		g := newGuard(NewCrushRegistry(WithRegistryLogger(quietLogger)),
			WithOnCompaction(func(_ context.Context, e CompactionEvent) { events = append(events, e) }))
		g.addModel("a", sum, WithMaxTokens(cachedWindow))
		require.NoError(t, g.Err())
		_, err := g.beforeModel(newFakeCtx("a").withUser(user), &Request{Model: cachedAgentModel, Contents: raw, Config: agentConfig()})
		require.NoError(t, err)
		reqs := sum.requests()
		require.Len(t, reqs, 1)
		require.Len(t, events, 1)
		last := reqs[0].Contents[len(reqs[0].Contents)-1]
		return last.Parts[0].Text, reqs[0], events[0]
	}
	full, _, _ := instruction(overTrigger)
	short, sent, ev := instruction(cachedWindow * 86 / 100)
	assert.Equal(t, SummaryFormCached, ev.SummaryForm)
	assert.False(t, ev.Fallback)
	assert.Less(t, askedWordsIn(t, short), askedWordsIn(t, full), "a shorter summary")
	assert.GreaterOrEqual(t, askedWordsIn(t, short), askedWordsIn(t, full)/2, "at least half as long")
	room := cachedWindow - ev.TokensBefore
	assert.Less(t, int(sent.Config.MaxOutputTokens), room, "the answer bounded to the room the request leaves")
}

// underTrigger is the size of a conversation the guard lets through as it
// is at cachedWindow (its trigger is at 80%), with room left in the
// summarizer's window beside it for the instruction and the summary.
const underTrigger = cachedWindow * 68 / 100

// previousRun is a session of two calls: the first, under the trigger, let
// through as it is (the request the provider caches), the second the same
// contents plus what one step added.
type previousRun struct {
	// sent1 is what the first call sent, raw2 the second request as ADK
	// built it, and sent2 what the guard sent for it.
	sent1, raw2, sent2 []*genai.Content
	cfg                *genai.GenerateContentConfig
	reqs               []*Request
	events             []CompactionEvent
}

// playPrevious plays first (the user's request user among it), then first
// plus added, through one guard whose summarizer shares the agent's model,
// with the agent's options opts.
func playPrevious(t *testing.T, opts []AgentOption, first []*genai.Content, user string, added ...*genai.Content) previousRun {
	t.Helper()
	run := previousRun{cfg: agentConfig()}
	sum := newCacheRecorder(cachedAgentModel)
	g := newGuard(NewCrushRegistry(WithRegistryLogger(quietLogger)),
		WithOnCompaction(func(_ context.Context, e CompactionEvent) { run.events = append(run.events, e) }))
	g.addModel("a", sum, append([]AgentOption{WithMaxTokens(cachedWindow)}, opts...)...)
	require.NoError(t, g.Err())
	ctx := newFakeCtx("a").withUser(user)

	req := &Request{Model: cachedAgentModel, Contents: first, Config: run.cfg}
	_, err := g.beforeModel(ctx, req)
	require.NoError(t, err)
	require.Empty(t, run.events, "the first request is under the trigger")
	run.sent1 = req.Contents

	run.raw2 = append(append([]*genai.Content(nil), first...), added...)
	req = &Request{Model: cachedAgentModel, Contents: run.raw2, Config: run.cfg}
	_, err = g.beforeModel(ctx, req)
	require.NoError(t, err)
	run.sent2 = req.Contents
	run.reqs = sum.requests()
	return run
}

// bigResult is the model's call of read_file and its result of about
// tokens calibrated tokens, carrying the marker BIG-MARK.
func bigResult(tokens int) []*genai.Content {
	return []*genai.Content{
		callMsg("read_file", map[string]any{"path": "dump.log"}),
		respMsg("read_file", map[string]any{"output": "BIG-MARK " + fillerOf(tokens, 91)}),
	}
}

// TestCachedSummary_PreviousRequest: one large tool result pushes the
// request so far past the trigger that the agent's request, the
// instruction and the summary no longer fit the summarizer's window. The
// summary is then asked as the previous request the provider saw (which it
// has cached) plus the instruction, all of it summarized, and the step's
// call and result stay verbatim after the summary. When the result is too
// large to stay beside the summary under the threshold, the whole request
// is summarized in the transcript form, as before. Before this, every such
// request was summarized in the transcript form.
func TestCachedSummary_PreviousRequest(t *testing.T) {
	tests := []struct {
		name string
		// result is the tool result's calibrated size.
		result int
		cached bool
		opts   []AgentOption
	}{
		{name: "a result that stays beside the summary", result: 8_000, cached: true},
		// Over its trigger the guard prunes all it can, so the second
		// request prunes the result the first one ended with, which was
		// sent whole: the summarizer's request is the first as it was
		// sent.
		{name: "pruning that moved on since the previous request", result: 10_000, cached: true,
			opts: []AgentOption{WithToolResultPruning(1), WithPruningMinFree(1)}},
		{name: "a result too large to stay beside the summary", result: 24_000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			first, user := conversationOf(underTrigger, 400)
			if tc.opts != nil {
				// Results too small to prune (pruning.go), then one
				// that is not.
				first, user = conversationOf(underTrigger-2_000, 150)
				first = append(first, callMsg("read_file", map[string]any{"path": "config.yaml"}),
					respMsg("read_file", map[string]any{"output": "MID-MARK " + fillerOf(2_000, 57)}))
			}
			step := bigResult(tc.result)
			run := playPrevious(t, tc.opts, first, user, step...)

			require.Len(t, run.events, 1)
			ev := run.events[0]
			assert.False(t, ev.Fallback)
			assert.False(t, ev.Discarded)
			if !tc.cached {
				assert.Equal(t, SummaryFormTranscript, ev.SummaryForm)
				for i, r := range run.reqs {
					require.Len(t, r.Contents, 1, "call %d: the transcript prompt", i+1)
					assert.Contains(t, textcut.ContentText(r.Contents[0]), "<conversation>")
				}
				require.Len(t, run.sent2, 1, "everything summarized")
				return
			}
			assert.Equal(t, SummaryFormCached, ev.SummaryForm)
			require.Len(t, run.reqs, 1, "one summarizer call")
			assert.Equal(t, 1, ev.SummarizerCalls)
			instr := assertCachedForm(t, run.reqs[0], run.sent1, run.cfg)
			assert.NotContains(t, instr, "stay in the conversation", "the summarizer's request holds only what the summary covers")
			assert.Equal(t, len(first), ev.ContentsSummarized)

			require.Len(t, run.sent2, 1+len(step), "the summary, then the step verbatim")
			assert.Contains(t, textcut.ContentText(run.sent2[0]), "SUMMARY-1")
			assert.Contains(t, textcut.ContentText(run.sent2[0]), user, "the summary message carries the user's request")
			assert.Same(t, step[0], run.sent2[1])
			assert.Same(t, step[1], run.sent2[2], "the new result, verbatim")
			if tc.opts != nil {
				assert.Contains(t, flattenAll(run.sent1), "MID-MARK", "the first request sent the result whole")
				assert.NotContains(t, flattenAll(run.sent2), "MID-MARK", "and the second prunes it")
			}
			assert.LessOrEqual(t, ev.TokensAfter, ev.Threshold)
			assert.NoError(t, coretest.CheckPairs(run.sent2))
		})
	}
}

// TestCachedSummary_PreviousRequestPairSafe: the previous request ended
// with a function call whose response is new (a long-running tool). The
// split at its end would keep the response without its call, so it moves
// back before the call: the summary is still asked as the whole previous
// request plus the instruction, which says that its last message stays,
// and the call and its response are kept together. Before this, the
// request was summarized in the transcript form.
func TestCachedSummary_PreviousRequestPairSafe(t *testing.T) {
	conv, user := conversationOf(underTrigger, 400)
	step := bigResult(8_000)
	first := append(conv, step[0])
	run := playPrevious(t, nil, first, user, step[1])

	require.Len(t, run.events, 1)
	ev := run.events[0]
	assert.Equal(t, SummaryFormCached, ev.SummaryForm)
	assert.False(t, ev.Fallback)
	require.Len(t, run.reqs, 1)
	instr := assertCachedForm(t, run.reqs[0], run.sent1, run.cfg)
	assert.Contains(t, instr, "The last 1 messages before this one stay in the conversation")
	assert.Equal(t, len(conv), ev.ContentsSummarized, "the call is not summarized")

	require.Len(t, run.sent2, 3, "the summary, the call and its response")
	assert.Same(t, step[0], run.sent2[1])
	assert.Same(t, step[1], run.sent2[2])
	assert.NoError(t, coretest.CheckPairs(run.sent2))
}

// TestCachedSummary_AsTheProviderCachedIt: a pruning pass of the very call
// that compacts rewrites the request from the result it prunes on, so the
// request as the guard would send it shares only its start with the
// provider's cache. The summary is then asked over the request as the
// provider cached it: the previous request as it was sent (the result
// whole) and the step, plus the instruction. The compacted request is
// pruned as before. Before this, the summarizer got the re-pruned request,
// whose cached part ended at the pruned result.
func TestCachedSummary_AsTheProviderCachedIt(t *testing.T) {
	first, user := conversationOf(underTrigger-2_000, 150)
	first = append(first, callMsg("read_file", map[string]any{"path": "config.yaml"}),
		respMsg("read_file", map[string]any{"output": "MID-MARK " + fillerOf(2_000, 57)}))
	step := bigResult(cachedWindow*13/100 + 2_500)
	run := playPrevious(t, []AgentOption{WithToolResultPruning(1)}, first, user, step...)

	require.Len(t, run.events, 1)
	ev := run.events[0]
	assert.Equal(t, SummaryFormCached, ev.SummaryForm)
	assert.False(t, ev.Fallback)
	require.Len(t, run.reqs, 1, "one summarizer call")
	assert.Contains(t, flattenAll(run.sent1), "MID-MARK", "the first request sent the result whole")
	assertCachedForm(t, run.reqs[0], append(append([]*genai.Content(nil), run.sent1...), step...), run.cfg)
	assert.NotContains(t, flattenAll(run.sent2), "MID-MARK", "the compacted request does not carry the pruned result")
	assert.LessOrEqual(t, ev.TokensAfter, ev.Threshold)
	assert.NoError(t, coretest.CheckPairs(run.sent2))
}
