package core

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/coretest"

	"github.com/adk-contextguard/contextguard/core/internal/contentid"
	"github.com/adk-contextguard/contextguard/core/internal/convo"
	"github.com/adk-contextguard/contextguard/core/internal/countcache"
	"github.com/adk-contextguard/contextguard/core/internal/state"
	"github.com/adk-contextguard/contextguard/core/internal/textcut"
	"github.com/adk-contextguard/contextguard/core/internal/window"
)

// pruneTurn builds a tool-heavy test turn: a user request, a call and its
// response of size bytes, and the model's answer.
func pruneTurn(i, size int) []*genai.Content {
	return []*genai.Content{
		userMsg(fmt.Sprintf("U%d-MARK check the logs", i)),
		callMsg("kubectl_logs", map[string]any{"pod": fmt.Sprintf("pod-%d", i)}),
		respMsg("kubectl_logs", map[string]any{"output": fmt.Sprintf("R%d-MARK %s", i, coretest.Filler(size, i))}),
		modelMsg(fmt.Sprintf("M%d-MARK found it", i)),
	}
}

func pruneHistory(n, size int) []*genai.Content {
	var cs []*genai.Content
	for i := range n {
		cs = append(cs, pruneTurn(i, size)...)
	}
	return cs
}

// pruneTestTurn is a turn of an agent with pruning over cs in a window.
func pruneTestTurn(cs []*genai.Content, keep, win int, cache *countcache.Cache) *turn {
	t := newTestTurn(request(cs...), state.Agent{}, slog.New(slog.DiscardHandler))
	t.cfg.pruneKeep = keep
	t.lim = window.New(win)
	if cache != nil {
		t.sess.cache = cache
		t.Est.Cache = cache
	}
	return t
}

func TestPruneToolResults(t *testing.T) {
	small := respMsg("grep", map[string]any{"output": "3 matches"})
	raw := append(pruneHistory(6, 8_000), callMsg("grep", map[string]any{"q": "err"}), small, modelMsg("done"))
	tr := pruneTestTurn(raw, 2, 200_000, nil)
	out := pruneTest(tr, raw)

	require.Len(t, out, len(raw))
	require.NoError(t, coretest.CheckPairs(out), "pair structure kept")
	// Steps are the response contents at 2, 6, 10, 14, 18, 22 and the small
	// one at 25: 7 steps, K = 2, so steps 1-4 (floor((7-2)/2)*2) are pruned;
	// 18 waits for the next batch and the newest two (22, 25) are kept.
	for i, c := range raw {
		switch {
		case i == 2 || i == 6 || i == 10 || i == 14:
			require.NotSame(t, c, out[i], "content %d pruned", i)
			fr := out[i].Parts[0].FunctionResponse
			assert.Equal(t, "kubectl_logs", fr.Name)
			require.Len(t, fr.Response, 1)
			ph, _ := fr.Response[prunedKey].(string)
			bytes := len(textcut.JSON(c.Parts[0].FunctionResponse.Response))
			assert.Equal(t, fmt.Sprintf("kubectl_logs output of %d bytes removed to save context; ask again if needed", bytes), ph)
			assert.Equal(t, c.Role, out[i].Role)
			assert.Less(t, testEst.Content(out[i]), testEst.Content(c)/10)
		default:
			assert.Same(t, c, out[i], "content %d untouched (user text, calls, model text, the newest steps)", i)
		}
	}
	assert.Contains(t, coretest.FlattenText(out), "R5-MARK", "the newest steps keep their payloads")
	assert.Contains(t, coretest.FlattenText(out), "R4-MARK", "pruning advances K steps at a time")
	assert.NotContains(t, coretest.FlattenText(out), "R0-MARK")
	assert.Contains(t, coretest.FlattenText(out), "U0-MARK", "user text is never pruned")
	assert.Equal(t, "kubectl_logs output of 1 bytes removed to save context; ask again if needed", placeholderText("kubectl_logs", 1, false, ""))

	// Deterministic: the same history, rebuilt as ADK does, gives the same
	// request, with the very same pruned contents from the session's cache.
	again := pruneTest(tr, coretest.ADKCopy(raw))
	for i := range out {
		if out[i] != raw[i] {
			assert.Same(t, out[i], again[i], "content %d: the cached pruned copy is reused", i)
		}
	}
	assert.Equal(t, coretest.FlattenText(out), coretest.FlattenText(again))

	// Off, or too few steps: the contents themselves.
	tr.cfg.pruneKeep = 0
	assert.Equal(t, raw, pruneTest(tr, raw))
	tr.cfg.pruneKeep = 10
	assert.Equal(t, raw, pruneTest(tr, raw))
}

func TestPruneToolResults_ParallelAndSmallParts(t *testing.T) {
	parallel := &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{
		{FunctionResponse: &genai.FunctionResponse{ID: "c1", Name: "http_get", Response: map[string]any{"output": coretest.Filler(9_000, 1)}}},
		{FunctionResponse: &genai.FunctionResponse{ID: "c2", Name: "grep", Response: map[string]any{"output": "2 lines"}}},
		{Text: "user note"},
	}}
	call := &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{
		{FunctionCall: &genai.FunctionCall{ID: "c1", Name: "http_get"}},
		{FunctionCall: &genai.FunctionCall{ID: "c2", Name: "grep"}},
	}}
	raw := append([]*genai.Content{userMsg("go"), call, parallel, modelMsg("ok")}, pruneHistory(2, 100)...)
	out := pruneTest(pruneTestTurn(raw, 1, 200_000, nil), raw) // 3 steps, K = 1: steps 1-2
	require.NoError(t, coretest.CheckPairs(out))
	p := out[2]
	require.NotSame(t, parallel, p)
	require.Len(t, p.Parts, 3)
	assert.Equal(t, "c1", p.Parts[0].FunctionResponse.ID)
	assert.Contains(t, p.Parts[0].FunctionResponse.Response[prunedKey], "http_get output of")
	assert.Same(t, parallel.Parts[1], p.Parts[1], "a small result is kept")
	assert.Same(t, parallel.Parts[2], p.Parts[2], "user text is kept")
}

// TestPruneToolResults_Batches: pruning advances K steps at a time, never
// touches the newest K steps, and a result once pruned stays pruned as the
// conversation grows.
func TestPruneToolResults_Batches(t *testing.T) {
	const keep = 3
	cache := countcache.New()
	var raw, prev []*genai.Content
	changes := 0
	for i := range 40 {
		raw = append(raw, pruneTurn(i, 2_000)...)
		out := pruneTest(pruneTestTurn(raw, keep, 200_000, cache), raw)
		pruned := 0
		for j := range raw {
			if out[j] != raw[j] {
				pruned++
				assert.Less(t, j, len(raw)-4*keep, "turn %d: content %d is among the newest %d steps", i, j, keep)
			}
		}
		assert.Equal(t, max((i+1-keep)/keep*keep, 0), pruned, "turn %d", i)
		changed := false
		for j := range prev {
			if prev[j] != raw[j] {
				assert.Same(t, prev[j], out[j], "turn %d: content %d was pruned and is not any more", i, j)
			} else if out[j] != raw[j] {
				changed = true
			}
		}
		if changed {
			changes++
		}
		prev = out
	}
	t.Logf("the request prefix changed %d times in 40 steps", changes)
	assert.Equal(t, (40-keep)/keep, changes, "once every K steps")
}

// TestPruneToolResults_StableAcrossCompaction: the contents a compaction
// keeps are pruned exactly as before it, so a compaction never brings pruned
// results back.
func TestPruneToolResults_StableAcrossCompaction(t *testing.T) {
	raw := pruneHistory(12, 3_000)
	tr := pruneTestTurn(raw, 3, 200_000, nil)
	before := pruneTest(tr, raw)
	for _, split := range []int{4, 20, 36} {
		cs := append([]*genai.Content{summaryContent("S", "u", false)}, raw[split:]...)
		after := pruneTest(tr, cs)
		for i, c := range after[1:] {
			assert.Same(t, before[split+i], c, "split %d: content %d", split, split+i)
		}
	}
}

func TestPruning_AvoidsTheSummarizer(t *testing.T) {
	sum := fixedSummary("S")
	g, _ := newTestGuard(t, sum, WithMaxTokens(32_000), WithToolResultPruning(0))
	ctx := newFakeCtx("a").withUser("U9-MARK latest")
	raw := append(pruneHistory(14, 5_000), userMsg("U9-MARK latest"))
	require.Greater(t, newCalibration(state.Agent{}, testEst).Count(requestTokens(testEst, engineReq(request(raw...)))), window.New(32_000).Threshold, "test setup: over the trigger unpruned")
	req := request(raw...)
	_, err := g.beforeModel(ctx, req)
	require.NoError(t, err)
	assert.Zero(t, sum.Calls(), "pruning alone brought the request under the trigger")
	assert.Len(t, req.Contents, len(raw))
	unpruned := 14 - (14-DefaultPruneKeepSteps)/DefaultPruneKeepSteps*DefaultPruneKeepSteps
	assert.Equal(t, unpruned, strings.Count(coretest.FlattenText(req.Contents), "-MARK id"), "the newest steps keep their payloads")
	assert.Contains(t, coretest.FlattenText(req.Contents), "removed to save context")
	assert.NoError(t, coretest.CheckPairs(req.Contents))
	assert.Equal(t, requestTokens(testEst, engineReq(req)), ctx.getInt(state.KeyLastEstimate), "calibration learns the pruned request")

	// Still over after pruning: the summarizer runs.
	huge := append(pruneHistory(3, 60_000), userMsg("U9-MARK latest"))
	req = request(huge...)
	_, err = g.beforeModel(newFakeCtx("a").withUser("U9-MARK latest"), req)
	require.NoError(t, err)
	assert.Equal(t, 1, sum.Calls())
}

// BenchmarkBeforeModel_Pruning is BenchmarkBeforeModel's steady state with
// pruning on: the pruned copies come from the session's count cache.
func BenchmarkBeforeModel_Pruning(b *testing.B) {
	for _, size := range benchSizes[1:] {
		base := syntheticRequest(size.tokens)
		for _, keep := range []int{0, DefaultPruneKeepSteps} {
			opts := []AgentOption{WithMaxTokens(size.tokens * 10)}
			if keep > 0 {
				opts = append(opts, WithToolResultPruning(keep))
			}
			g, _ := newTestGuard(b, fixedSummary("unused"), opts...)
			b.Run(fmt.Sprintf("keep=%d/%s", keep, size.name), func(b *testing.B) {
				ctx := newFakeCtx("a")
				const pool = 64
				reqs := make([]*Request, pool)
				contents := make([][]*genai.Content, pool)
				for i := range reqs {
					contents[i] = append(coretest.ADKCopy(base.Contents), userMsg(coretest.Generate(coretest.KindProseEnglish, 400, int64(1000+i))))
					reqs[i] = &Request{Model: base.Model, Config: base.Config}
				}
				reqs[0].Contents = contents[0]
				_, _ = g.beforeModel(ctx, reqs[0])
				b.ReportAllocs()
				b.ResetTimer()
				for i := range b.N {
					r := reqs[i%pool]
					r.Contents = contents[i%pool][:len(contents[i%pool]):len(contents[i%pool])]
					if _, err := g.beforeModel(ctx, r); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func TestPruning_Option(t *testing.T) {
	c := agentConfigFor("a", `Add("a")`, fixedSummary("x"), []AgentOption{WithToolResultPruning(0)})
	assert.Empty(t, c.errs)
	assert.Equal(t, DefaultPruneKeepSteps, c.pruneKeep)
	c = agentConfigFor("a", `Add("a")`, fixedSummary("x"), []AgentOption{WithToolResultPruning(5), WithSlidingWindow(8)})
	assert.Empty(t, c.errs)
	assert.Equal(t, 5, c.pruneKeep)
	c = agentConfigFor("a", `Add("a")`, fixedSummary("x"), nil)
	assert.Zero(t, c.pruneKeep, "off by default")

	g := newGuard(nil, WithLogger(slog.New(slog.DiscardHandler)))
	g.addModel("a", fixedSummary("x"), WithToolResultPruning(-2))
	err := g.Err()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "WithToolResultPruning(-2)")
	assert.Contains(t, err.Error(), `Add("a")`)
}

// pruneTest prunes cs as tr's call would.
func pruneTest(tr *turn, cs []*genai.Content) []*genai.Content {
	out, _ := pruneToolResults(tr.Est, tr.cfg.pruneKeep, declaresRecall(tr.req.Config), tr.Raw, cs)
	return out
}

// extends reports whether next starts with every content of prev, by value:
// the provider's prompt cache can read all of prev again.
func extends(prev, next []*genai.Content) bool {
	if len(next) < len(prev) {
		return false
	}
	for i, c := range prev {
		if contentid.ChainHash(c) != contentid.ChainHash(next[i]) {
			return false
		}
	}
	return true
}

// TestPruning_WaitsUntilItFreesEnough plays a tool-heavy session call by
// call, far from the trigger: each request extends the one before it until
// advancing the pruning frontier frees at least the agent's minimum
// (WithPruningMinFree); then the request is rewritten once, and shrinks by
// at least that much. A restart (a new guard on the same state) keeps the
// stored frontier. WithPruningMinFree(1) rewrites on every batch of K
// steps, as before the option existed.
func TestPruning_WaitsUntilItFreesEnough(t *testing.T) {
	const (
		keep    = 2
		minFree = 10_000
		turns   = 24
	)
	play := func(t *testing.T, free int) (rewrites int) {
		opts := []AgentOption{WithMaxTokens(400_000), WithToolResultPruning(keep), WithPruningMinFree(free)}
		g, _ := newTestGuard(t, fixedSummary("unused"), opts...)
		ctx := newFakeCtx("a")
		var h, prev []*genai.Content
		for i, c := range pruneHistory(turns, 3_000) {
			if i == len(pruneHistory(turns, 3_000))/2 {
				g, _ = newTestGuard(t, fixedSummary("unused"), opts...) // a restart: only the state carries over
			}
			h = append(h, c)
			before := ctx.getInt(state.KeyLastEstimate)
			req := request(coretest.ADKCopy(h)...)
			_, err := g.beforeModel(ctx, req)
			require.NoError(t, err)
			require.Len(t, req.Contents, len(h), "no compaction")
			if prev != nil && !extends(prev, req.Contents) {
				rewrites++
				freed := before + testEst.Content(c) - ctx.getInt(state.KeyLastEstimate)
				assert.GreaterOrEqual(t, freed, free, "content %d: a rewrite frees at least the minimum", i)
				assert.Positive(t, ctx.getInt(state.KeyInvalidated), "content %d: the rewrite is reported", i)
				assert.Less(t, ctx.getInt(state.KeyPrefixKept), newCalibration(state.Agent{}, testEst).Scale(before))
			} else if prev != nil {
				assert.Zero(t, ctx.getInt(state.KeyInvalidated), "content %d: an extension invalidates nothing", i)
				assert.Equal(t, newCalibration(state.Agent{}, testEst).Scale(before), ctx.getInt(state.KeyPrefixKept), "content %d: the whole previous request is kept", i)
			}
			prev = req.Contents
		}
		assert.Equal(t, pruneFrontier(keep, h) > 0, ctx.getInt(state.KeyPruneFrontier) > 0, "the frontier is in state")
		return rewrites
	}
	waiting := play(t, minFree)
	eager := play(t, 1)
	t.Logf("rewrites in %d turns: %d with a minimum of %d tokens, %d with 1", turns, waiting, minFree, eager)
	assert.Positive(t, waiting, "pruning still runs")
	assert.Less(t, waiting, eager/2, "waiting for enough to free rewrites far less often")
	assert.Equal(t, (turns-keep)/keep, eager, "a minimum of 1 advances every K steps")
}

// TestPruning_OverTheTriggerFreesAllItCan: a request over the trigger is
// pruned as far as it can be, whatever the minimum, when that avoids the
// summarizer; the frontier reached is stored.
func TestPruning_OverTheTriggerFreesAllItCan(t *testing.T) {
	sum := fixedSummary("S")
	g, _ := newTestGuard(t, sum, WithMaxTokens(32_000), WithToolResultPruning(0), WithPruningMinFree(31_999))
	ctx := newFakeCtx("a").withUser("U9-MARK latest")
	raw := append(pruneHistory(14, 5_000), userMsg("U9-MARK latest"))
	require.Greater(t, newCalibration(state.Agent{}, testEst).Count(requestTokens(testEst, engineReq(request(raw...)))), window.New(32_000).Threshold, "test setup: over the trigger unpruned")
	req := request(raw...)
	_, err := g.beforeModel(ctx, req)
	require.NoError(t, err)
	assert.Zero(t, sum.Calls(), "pruning alone brought the request under the trigger")
	assert.Contains(t, coretest.FlattenText(req.Contents), "removed to save context")
	assert.Equal(t, pruneFrontier(DefaultPruneKeepSteps, raw), ctx.getInt(state.KeyPruneFrontier))
}

// TestPruning_CompactionResetsTheFrontier: a compaction prunes the contents
// it keeps to the full frontier and stores it, so the next call extends the
// compacted request rather than rewriting its kept tool results.
func TestPruning_CompactionResetsTheFrontier(t *testing.T) {
	sum := fixedSummary("S")
	g, _ := newTestGuard(t, sum, WithMaxTokens(32_000), WithToolResultPruning(2), WithSlidingWindow(4), WithPruningMinFree(31_999))
	ctx := newFakeCtx("a")
	var h, prev []*genai.Content
	compactions := 0
	for i, c := range pruneHistory(30, 2_000) {
		h = append(h, c)
		if convo.IsUserMessage(c) {
			ctx.withUser(c.Parts[0].Text)
		}
		req := request(coretest.ADKCopy(h)...)
		before := ctx.getInt(state.KeyCompactions)
		_, err := g.beforeModel(ctx, req)
		require.NoError(t, err)
		if ctx.getInt(state.KeyCompactions) > before {
			compactions++
			assert.Equal(t, pruneFrontier(2, h), ctx.getInt(state.KeyPruneFrontier), "content %d: a compaction stores the full frontier", i)
		} else if prev != nil {
			assert.True(t, extends(prev, req.Contents), "content %d: no compaction, no rewrite", i)
		}
		prev = req.Contents
	}
	assert.Positive(t, compactions)
}

func TestPruning_MinFreeOption(t *testing.T) {
	c := agentConfigFor("a", `Add("a")`, fixedSummary("x"), []AgentOption{WithToolResultPruning(0)})
	assert.Empty(t, c.errs)
	assert.Equal(t, math.MaxInt, c.pruningMinFree(), "only at the trigger by default")
	c = agentConfigFor("a", `Add("a")`, fixedSummary("x"), []AgentOption{WithToolResultPruning(0), WithPruningMinFree(3_000)})
	assert.Empty(t, c.errs)
	assert.Equal(t, 3_000, c.pruningMinFree())

	g := newGuard(nil, WithLogger(slog.New(slog.DiscardHandler)))
	g.addModel("a", fixedSummary("x"), WithPruningMinFree(-1))
	err := g.Err()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "WithPruningMinFree(-1)")
}

// TestPruning_AtTheTriggerIsACompaction: by default pruning rewrites the
// kept history only where the request reaches the trigger, and that pass is
// reported as a compaction (StrategyToolResultPruning, no summarizer call),
// so between two reported compactions each request extends the one before
// it, and under the trigger old results go out as they are.
func TestPruning_AtTheTriggerIsACompaction(t *testing.T) {
	sum := fixedSummary("S")
	var events []CompactionEvent
	logs := &logBuffer{}
	g := newGuard(NewCrushRegistry(WithRegistryLogger(quietLogger)), WithLogger(logs.logger()),
		WithOnCompaction(func(_ context.Context, e CompactionEvent) { events = append(events, e) }))
	g.addModel("a", sum, WithMaxTokens(32_000), WithToolResultPruning(2))
	require.NoError(t, g.Err())
	ctx := newFakeCtx("a")
	var h, prev []*genai.Content
	placeholderBefore := false
	for i, c := range pruneHistory(30, 2_000) {
		h = append(h, c)
		if convo.IsUserMessage(c) {
			ctx.withUser(c.Parts[0].Text)
		}
		req := request(coretest.ADKCopy(h)...)
		before := len(events)
		_, err := g.beforeModel(ctx, req)
		require.NoError(t, err)
		if len(events) == before {
			if prev != nil {
				assert.True(t, extends(prev, req.Contents), "content %d: no compaction, no rewrite", i)
			}
		} else if len(events) == 1 && events[0].Strategy == StrategyToolResultPruning {
			placeholderBefore = placeholderBefore || strings.Contains(coretest.FlattenText(prev), "removed to save context")
		}
		prev = req.Contents
	}
	var pruned []CompactionEvent
	for _, e := range events {
		if e.Strategy == StrategyToolResultPruning {
			pruned = append(pruned, e)
		}
	}
	require.NotEmpty(t, pruned, "the trigger was reached with old results to prune")
	assert.False(t, placeholderBefore, "under the trigger the old results went out whole")
	for _, e := range pruned {
		assert.Zero(t, e.SummarizerCalls)
		assert.Equal(t, ReasonTokens, e.Reason)
		assert.Equal(t, RanInline, e.Ran)
		assert.Greater(t, e.TokensBefore, e.Threshold, "the request reached the trigger")
		assert.LessOrEqual(t, e.TokensAfter, e.Threshold, "pruning alone took it back under")
		assert.Positive(t, e.InvalidatedTokens, "the pass rewrote the request")
	}
	assert.Less(t, sum.Calls(), len(events), "pruning compactions call no summarizer")
	assert.Contains(t, logs.String(), "pruned tool results at the trigger")
}

// TestPruning_SwitchedOffMovesNoFurther: a session switched off keeps the
// pruning it had and prunes no further, even over the trigger, so it
// reports no compaction by pruning either.
func TestPruning_SwitchedOffMovesNoFurther(t *testing.T) {
	var events []CompactionEvent
	g := newGuard(NewCrushRegistry(WithRegistryLogger(quietLogger)), WithLogger(quietLogger),
		WithOnCompaction(func(_ context.Context, e CompactionEvent) { events = append(events, e) }))
	g.addModel("a", fixedSummary("S"), WithMaxTokens(32_000), WithToolResultPruning(0), WithPruningMinFree(1))
	require.NoError(t, g.Err())
	ctx := newFakeCtx("a").withUser("U9-MARK latest")
	require.NoError(t, g.SetDisabledInState(ctx.state, true))
	raw := append(pruneHistory(14, 5_000), userMsg("U9-MARK latest"))
	req := request(raw...)
	_, err := g.beforeModel(ctx, req)
	require.NoError(t, err)
	assert.Empty(t, events, "no compaction while switched off")
	assert.NotContains(t, coretest.FlattenText(req.Contents), "removed to save context", "nothing pruned beyond the stored frontier")
	assert.Zero(t, ctx.getInt(state.KeyPruneFrontier))
}
