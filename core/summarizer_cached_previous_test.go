package core

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/coretest"

	"github.com/adk-contextguard/contextguard/core/internal/textcut"
)

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
