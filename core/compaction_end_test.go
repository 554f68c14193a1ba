package core

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/adk-contextguard/contextguard/core/coretest"
	"github.com/adk-contextguard/contextguard/core/internal/state"
	"github.com/adk-contextguard/contextguard/core/internal/textcut"
)

// TestCompaction_NotAppliedWhenNotSmaller: a summarizer that ignores the
// length asked writes a summary longer than what it replaces, while the
// request would still fit under the threshold. The compaction is not
// applied: the request is sent as it was, nothing is stored, it is logged
// once, and the guard compacts again only once the request has outgrown
// what the compaction came out at. Before, the larger request was sent.
func TestCompaction_NotAppliedWhenNotSmaller(t *testing.T) {
	raw, user := slidingDue(2_300)
	long := fillerOf(4_000, 9)
	calls := 0
	rs := &recordingSummarizer{reply: func(int, SummaryRequest) (string, error) {
		calls++
		if calls == 1 {
			return long, nil
		}
		return "SHORT-SUMMARY", nil
	}}
	g, events, logs := guardWithEvents(t, WithSummarizer(rs), WithSlidingWindow(4), WithMaxTokens(32_000))
	ctx := newFakeCtx("a").withUser(user)

	// The first compaction would make the request grow: not applied.
	req := request(raw...)
	_, err := g.beforeModel(ctx, req)
	require.NoError(t, err)
	require.Len(t, *events, 1)
	e := (*events)[0]
	assert.True(t, e.Discarded)
	assert.Equal(t, e.TokensBefore, e.TokensAfter)
	assert.Equal(t, raw, req.Contents, "the request is sent as it was")
	assert.Empty(t, ctx.getStr(state.KeySummary), "nothing stored")
	assert.Zero(t, ctx.getInt(state.KeyWatermark))
	assert.Equal(t, 1, strings.Count(logs.String(), "not smaller than the request"))

	// A step later, one short message more: not grown past what the
	// compaction came out at, so no summarizer call.
	raw = append(raw, modelMsg("ok"))
	req = request(raw...)
	_, err = g.beforeModel(ctx, req)
	require.NoError(t, err)
	assert.Equal(t, 1, calls, "no retry before the request has grown")
	assert.Len(t, *events, 1)
	assert.Len(t, req.Contents, len(raw))

	// Once the request has outgrown it, the guard compacts again.
	raw = append(raw, modelMsg("M6-MARK "+fillerOf(2_500, 4)), userMsg("U7-MARK go on"))
	ctx.withUser("U7-MARK go on")
	req = request(raw...)
	_, err = g.beforeModel(ctx, req)
	require.NoError(t, err)
	assert.Equal(t, 2, calls, "compacted again after growth")
	require.Len(t, *events, 2)
	assert.False(t, (*events)[1].Discarded)
	assert.Less(t, (*events)[1].TokensAfter, (*events)[1].TokensBefore)
	assert.Contains(t, textcut.ContentText(req.Contents[0]), "SHORT-SUMMARY")
	assert.Equal(t, 1, strings.Count(logs.String(), "not smaller than the request"), "logged once")
}

// TestCompaction_DiscardedAfterPruningForgetsTheProvidersCount: the
// provider counted the previous, unpruned request; this call prunes it,
// the sliding window's compaction is due, and its summary comes out no
// smaller, so the request goes out as pruned. That request is smaller than
// the one the provider counted: its count must not survive as the next
// call's lower bound, as after a pruned request let through.
func TestCompaction_DiscardedAfterPruningForgetsTheProvidersCount(t *testing.T) {
	raw := append(pruneHistory(8, 1_500), userMsg("U9-MARK latest"))
	unpruned := requestTokens(testEst, engineReq(request(raw...)))
	rs := &recordingSummarizer{reply: func(int, SummaryRequest) (string, error) {
		return fillerOf(3*unpruned, 5), nil
	}}
	g, events, _ := guardWithEvents(t, WithSummarizer(rs), WithSlidingWindow(4),
		WithToolResultPruning(0), WithPruningMinFree(1), WithMaxTokens(200_000))
	ctx := newFakeCtx("a").withUser("U9-MARK latest")
	// The provider's count of the previous request, unpruned.
	ctx.set(state.KeyRealTokens, unpruned)
	ctx.set(state.KeyLastEstimate, unpruned)

	req := request(raw...)
	_, err := g.beforeModel(ctx, req)
	require.NoError(t, err)
	require.Len(t, *events, 1, "the sliding window's compaction ran")
	e := (*events)[0]
	require.True(t, e.Discarded, "test setup: the summary is not smaller")
	require.Contains(t, coretest.FlattenText(req.Contents), "removed to save context", "test setup: the request went out pruned")
	sent := requestTokens(testEst, engineReq(req))
	require.Less(t, sent, unpruned)

	assert.Zero(t, ctx.getInt(state.KeyRealTokens), "the provider counted a larger request")
	assert.Equal(t, sent, ctx.getInt(state.KeyLastEstimate))
	assert.Less(t, ctx.getInt(state.KeyLastTokens), unpruned, "the count of the request sent, not the provider's of the one before")
	assert.Equal(t, pruneFrontier(DefaultPruneKeepSteps, raw), ctx.getInt(state.KeyPruneFrontier), "the frontier the request was pruned to")
}
