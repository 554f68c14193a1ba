package core

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/textcut"
)

// TestSessionSwitch_StateValues: only true switches the guard off; other
// values leave it on, and one of the wrong type is logged.
func TestSessionSwitch_StateValues(t *testing.T) {
	tests := []struct {
		name   string
		value  any
		off    bool
		logged bool
	}{
		{"true", true, true, false},
		{"false", false, false, false},
		{"nil", nil, false, false},
		{"text", "true", false, true},
		{"number", 1, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs := &logBuffer{}
			st := newMapState()
			require.NoError(t, st.Set(StateKeyDisabled, tt.value))
			assert.Equal(t, tt.off, sessionDisabled(st, logs.logger()))
			assert.Equal(t, tt.logged, strings.Contains(logs.String(), StateKeyDisabled))
		})
	}
	assert.False(t, sessionDisabled(nil, quietLog), "no state: on")
}

// TestSessionSwitch_OffKeepsWhatWasCompacted: a session compacted once and
// then switched off keeps its summary in every request while the
// conversation grows past the trigger: no new compaction, no summarizer
// call, a requested compaction and a response cut at the output limit wait
// until the guard is back on, and Usage follows the request actually sent.
// Back on, the waiting request is answered first.
func TestSessionSwitch_OffKeepsWhatWasCompacted(t *testing.T) {
	sum := fixedSummary("SUMMARY-BEFORE-OFF")
	g, _ := newTestGuard(t, sum, WithMaxTokens(8_000))
	ctx := newFakeCtx("a")
	var raw []*genai.Content
	call := func(i int) *Request {
		t.Helper()
		text := fmt.Sprintf("U%d-MARK %s", i, strings.Repeat("word ", 900))
		raw = append(raw, userMsg(text))
		ctx.withUser(text)
		req := request(raw...)
		_, err := g.beforeModel(ctx, req)
		require.NoError(t, err)
		raw = append(raw, modelMsg(fmt.Sprintf("M%d-MARK done", i)))
		return req
	}
	usage := func() Usage {
		u, err := g.UsageFromState(ctx.state, "a")
		require.NoError(t, err)
		return u
	}

	// On: the conversation is compacted once it passes the trigger.
	i := 0
	for ; usage().Compactions == 0; i++ {
		require.Less(t, i, 20, "never compacted")
		call(i)
	}
	compacted := i
	require.Equal(t, 1, sum.Calls())

	// Off: the conversation grows well past the window, and a compaction
	// is requested meanwhile.
	require.NoError(t, g.SetDisabledInState(ctx.state, true))
	require.NoError(t, g.RequestCompactionInState(ctx.state, "a", ""))
	prevTokens := usage().Tokens
	for ; i < compacted+10; i++ {
		req := call(i)
		text := requestText(req)
		assert.True(t, strings.HasPrefix(textcut.ContentText(req.Contents[0]), summaryHeader), "call %d: the summary stays applied", i)
		assert.Contains(t, text, "SUMMARY-BEFORE-OFF")
		assert.NotContains(t, text, "U0-MARK", "call %d: the compacted history came back", i)
		assert.Contains(t, text, fmt.Sprintf("U%d-MARK", i), "the user's request is sent")
		u := usage()
		assert.True(t, u.Disabled)
		assert.True(t, u.CompactionRequested, "the request waits while off")
		assert.Equal(t, 1, u.Compactions, "call %d: compacted while off", i)
		assert.Greater(t, u.Tokens, prevTokens, "call %d: Usage follows the request sent", i)
		prevTokens = u.Tokens
	}
	assert.Equal(t, 1, sum.Calls(), "the summarizer was called while off")
	assert.Greater(t, prevTokens, 8_000, "the request sent while off is over the window, and Usage says so")

	cut := Response{FinishReason: genai.FinishReasonMaxTokens, Content: modelMsg("cut"),
		UsageMetadata: &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: 7_900, CandidatesTokenCount: 90}}
	out, err := g.afterModel(ctx, &cut, nil)
	require.NoError(t, err)
	assert.Nil(t, out, "a response cut at the output limit is not rewritten while off")

	// Back on: the waiting request is answered by the next call.
	require.NoError(t, g.SetDisabledInState(ctx.state, false))
	call(i)
	u := usage()
	assert.Equal(t, 2, u.Compactions)
	assert.Equal(t, ReasonRequested, u.LastCompactionReason)
	assert.False(t, u.CompactionRequested)
	assert.Equal(t, 2, sum.Calls())
}
