package core

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/coretest"
	"github.com/adk-contextguard/contextguard/core/internal/estimate"
	"github.com/adk-contextguard/contextguard/core/internal/state"
)

// TestUsage_PrefixKeptAndInvalidated: an extension keeps the whole previous
// request; a compaction keeps only the system instruction and tools, and
// reports the rest of the previous request as invalidated, in its event,
// its log line and Usage.
func TestUsage_PrefixKeptAndInvalidated(t *testing.T) {
	var events []CompactionEvent
	logs := &logBuffer{}
	g := newGuard(nil, WithLogger(logs.logger()), WithOnCompaction(func(_ context.Context, ev CompactionEvent) { events = append(events, ev) }))
	g.addModel("a", fixedSummary("S"), WithMaxTokens(8_000))
	require.NoError(t, g.Err())
	ctx := newFakeCtx("a")
	config := &genai.GenerateContentConfig{SystemInstruction: genai.NewContentFromText("You are a helpful agent.", genai.RoleUser)}
	send := func(cs []*genai.Content) *Request {
		req := &Request{Model: "gemini-2.5-flash", Contents: coretest.ADKCopy(cs), Config: config}
		_, err := g.beforeModel(ctx, req)
		require.NoError(t, err)
		return req
	}
	usage := func() Usage {
		u, err := g.UsageFromState(ctx.state, "a")
		require.NoError(t, err)
		return u
	}
	h := coretest.History(2, 200)
	send(h)
	assert.Zero(t, usage().PrefixKeptTokens, "no previous request")
	assert.Zero(t, usage().InvalidatedTokens)

	prev := ctx.getInt(state.KeyLastEstimate)
	h = append(h, userMsg("next"))
	send(h)
	cal := newCalibration(state.Agent{}, testEst)
	assert.Equal(t, cal.Scale(prev), usage().PrefixKeptTokens, "an extension keeps the whole previous request")
	assert.Zero(t, usage().InvalidatedTokens)

	prev = ctx.getInt(state.KeyLastEstimate)
	h = append(h, coretest.History(12, 1_500)...)
	h = append(h, userMsg("latest"))
	ctx.withUser("latest")
	send(h)
	require.Len(t, events, 1, "compacted")
	ev := events[0]
	fixed := estimate.Fixed(testEst, config)
	assert.Equal(t, cal.Scale(fixed), ev.PrefixKeptTokens, "a compaction keeps the system instruction and tools")
	assert.Equal(t, cal.Scale(prev)-cal.Scale(fixed), ev.InvalidatedTokens, "and invalidates the rest of the previous request")
	assert.Equal(t, ev.PrefixKeptTokens, usage().PrefixKeptTokens)
	assert.Equal(t, ev.InvalidatedTokens, usage().InvalidatedTokens)
	assert.Contains(t, logs.String(), "prefix_kept_tokens=")
	assert.Contains(t, logs.String(), "invalidated_tokens=")

	h = append(h, modelMsg("done"))
	send(h)
	assert.Zero(t, usage().InvalidatedTokens, "the call after a compaction extends the compacted request")
	assert.Positive(t, usage().PrefixKeptTokens)
}

// TestUsage_PrefixKeptWhenTheHistoryChanged: a request that does not extend
// the previous one (its history was rewritten, or its instruction changed)
// keeps of it only what is provably the same: the system instruction and
// tools when they did not change, else nothing.
func TestUsage_PrefixKeptWhenTheHistoryChanged(t *testing.T) {
	instruction := func(text string) *genai.GenerateContentConfig {
		return &genai.GenerateContentConfig{SystemInstruction: genai.NewContentFromText(text, genai.RoleUser)}
	}
	cases := []struct {
		name   string
		config *genai.GenerateContentConfig
		edit   func(h []*genai.Content) []*genai.Content
		fixed  bool // the instruction and tools are kept
	}{
		{name: "a content of the history rewritten", config: instruction("You are a helpful agent."), fixed: true,
			edit: func(h []*genai.Content) []*genai.Content {
				return append([]*genai.Content{userMsg("rewritten")}, h[1:]...)
			}},
		{name: "another system instruction", config: instruction("You are a terse agent."),
			edit: func(h []*genai.Content) []*genai.Content { return h }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g, _ := newTestGuard(t, fixedSummary("S"), WithMaxTokens(100_000))
			ctx := newFakeCtx("a")
			h := coretest.History(3, 300)
			_, err := g.beforeModel(ctx, &Request{Model: "gemini-2.5-flash", Contents: coretest.ADKCopy(h), Config: instruction("You are a helpful agent.")})
			require.NoError(t, err)
			prev := ctx.getInt(state.KeyLastEstimate)
			req := &Request{Model: "gemini-2.5-flash", Contents: coretest.ADKCopy(append(tc.edit(h), userMsg("next"))), Config: tc.config}
			_, err = g.beforeModel(ctx, req)
			require.NoError(t, err)
			u, err := g.UsageFromState(ctx.state, "a")
			require.NoError(t, err)
			cal := newCalibration(state.Agent{}, testEst)
			kept := 0
			if tc.fixed {
				kept = cal.Scale(estimate.Fixed(testEst, req.Config))
				require.Positive(t, kept)
			}
			assert.Equal(t, kept, u.PrefixKeptTokens)
			assert.Equal(t, cal.Scale(prev)-kept, u.InvalidatedTokens, "the rest of the previous request is invalidated")
		})
	}
}
