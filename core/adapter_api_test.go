package core

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/coretest"
	"github.com/adk-contextguard/contextguard/core/internal/state"
)

// TestWithHost: the host's functions reach the engine. Its clock stamps a
// compaction's time, and its "no such key" keeps a missing key quiet;
// without WithHost every failed read is logged and the guard's clock
// (WithClock) is used.
func TestWithHost(t *testing.T) {
	hostNow := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	clockNow := time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)
	tests := []struct {
		name         string
		host         *Host
		wantTime     time.Time
		wantReadWarn bool
	}{
		{"the host's clock and missing key", &Host{
			MissingKey: func(err error) bool { return errors.Is(err, errNoKey) },
			Now:        func(context.Context) time.Time { return hostNow },
		}, hostNow, false},
		{"nil fields keep the defaults: the guard's clock", &Host{}, clockNow, true},
		{"no host", nil, clockNow, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs := &logBuffer{}
			opts := []Option{WithLogger(logs.logger()), WithClock(coretest.NewFakeClock(clockNow))}
			if tt.host != nil {
				opts = append([]Option{WithHost(*tt.host)}, opts...)
			}
			g := New(NewCrushRegistry(WithRegistryLogger(logs.logger())), opts...)
			g.addModel("a", fixedSummary("SUMMARY"), WithMaxTokens(8_000))
			require.NoError(t, g.Err())
			ctx := newFakeCtx("a")
			_, _ = compactOnce(t, g, ctx)
			stamped, err := time.Parse(time.RFC3339Nano, ctx.getStr(state.KeyCompactedAt))
			require.NoError(t, err)
			assert.Equal(t, tt.wantTime, stamped)
			assert.Equal(t, tt.wantReadWarn, strings.Contains(logs.String(), "reading session state failed"),
				"a missing key is logged only when the host does not say it is missing")
		})
	}
}

// TestResponse_NeedsGuard: AfterModel has work only for a response that
// reports a prompt-token count or stopped at the output limit.
func TestResponse_NeedsGuard(t *testing.T) {
	tests := []struct {
		name string
		resp *Response
		want bool
	}{
		{"nil", nil, false},
		{"empty", &Response{}, false},
		{"zero count", &Response{UsageMetadata: &genai.GenerateContentResponseUsageMetadata{}}, false},
		{"a count", &Response{UsageMetadata: &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: 12}}, true},
		{"stopped at the output limit", &Response{FinishReason: genai.FinishReasonMaxTokens}, true},
		{"stopped normally", &Response{FinishReason: genai.FinishReasonStop}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.resp.NeedsGuard())
		})
	}
}

// TestCompactionRequestDelta: the state delta an adapter appends for
// RequestCompaction asks the agent's next call to compact, with the focus;
// an agent not guarded and a focus too long are errors.
func TestCompactionRequestDelta(t *testing.T) {
	g, _ := newTestGuard(t, fixedSummary("S"))
	tests := []struct {
		name    string
		agent   string
		focus   string
		want    map[string]any
		wantErr string
	}{
		{"no focus", "a", "", map[string]any{state.KeyCompactRequest + "a": true}, ""},
		{"a focus", "a", "keep the ticket numbers", map[string]any{state.KeyCompactRequest + "a": "keep the ticket numbers"}, ""},
		{"agent not guarded", "stranger", "", nil, `agent "stranger" is not guarded`},
		{"empty agent", "", "", nil, "the agent name is empty"},
		{"focus too long", "a", strings.Repeat("x", MaxFocusBytes+1), nil, "at most 2000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := g.CompactionRequestDelta(tt.agent, tt.focus)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				assert.Nil(t, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)

			// Applied to the state, the next call compacts with the focus.
			st := newMapState()
			for k, v := range got {
				require.NoError(t, st.Set(k, v))
			}
			r := state.IO{Agent: tt.agent, Log: quietLog}.RequestAt(st, state.KeyCompactRequest+tt.agent)
			assert.True(t, r.Pending)
			assert.Equal(t, tt.focus, r.Focus)
		})
	}
	_, err := (*Guard)(nil).CompactionRequestDelta("a", "")
	require.ErrorContains(t, err, "the guard is nil")
}

// TestWithRecoveryModel_TypedNil: a recovery model that is nil, typed nil
// included, is a configuration error; a model is kept for the adapter.
func TestWithRecoveryModel_TypedNil(t *testing.T) {
	var typedNil *fakeLLM
	for _, tt := range []struct {
		name  string
		model HostModel
		want  string
	}{
		{"nil", nil, "WithRecoveryModel: model is nil"},
		{"typed nil", typedNil, "WithRecoveryModel: model is nil"},
		{"a model", fixedSummary("x"), ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := newGuard(nil, WithLogger(quietLogger))
			g.addModel("a", fixedSummary("s"), WithRecoveryModel(tt.model))
			if tt.want != "" {
				require.ErrorContains(t, g.Err(), tt.want)
				assert.Nil(t, g.Agent("a"), "the agent is left unguarded")
				return
			}
			require.NoError(t, g.Err())
			assert.Same(t, tt.model, g.Agent("a").RecoveryModel())
			assert.Equal(t, "a", g.Agent("a").Name())
		})
	}
}

// TestCheckRun: a run none of whose agents is guarded is warned about once
// per run agent, naming the agents the guard does guard; a run with one
// guarded agent, anywhere in its tree, or a guard with a default, is not.
func TestCheckRun(t *testing.T) {
	const warning = "no agent of this run is guarded"
	tests := []struct {
		name  string
		setup func(g *Guard)
		runs  [][]string
		want  int // warnings
	}{
		{"a misspelt name warns once over two runs", func(g *Guard) { g.addModel("asistant", fixedSummary("s")) },
			[][]string{{"assistant"}, {"assistant"}}, 1},
		{"two unguarded run agents warn once each", func(g *Guard) { g.addModel("a", fixedSummary("s")) },
			[][]string{{"root"}, {"other"}}, 2},
		{"the run's agent guarded", func(g *Guard) { g.addModel("assistant", fixedSummary("s")) },
			[][]string{{"assistant"}}, 0},
		{"a sub-agent guarded", func(g *Guard) { g.addModel("worker", fixedSummary("s")) },
			[][]string{{"router", "worker"}}, 0},
		{"a default guards every agent", func(g *Guard) { g.addDefaultModel(fixedSummary("s")) },
			[][]string{{"anyone"}}, 0},
		{"no agents to tell", func(*Guard) {}, [][]string{nil}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs := &logBuffer{}
			g := newGuard(nil, WithLogger(logs.logger()))
			tt.setup(g)
			for _, names := range tt.runs {
				g.CheckRun(names)
			}
			assert.Equal(t, tt.want, strings.Count(logs.String(), warning), logs.String())
			if tt.want > 0 {
				assert.Contains(t, logs.String(), "level=WARN")
				assert.Contains(t, logs.String(), "guarded=")
			}
		})
	}
	assert.NotPanics(t, func() { (*Guard)(nil).CheckRun([]string{"a"}) })
}

// TestAfterModel_CachedTokens: the provider's cached-token count is kept
// for Usage when a response reports usage, and a count that cannot be
// right (above the prompt's, negative) reads as none.
func TestAfterModel_CachedTokens(t *testing.T) {
	g, _ := newTestGuard(t, fixedSummary("S"), WithMaxTokens(100_000))
	ctx := newFakeCtx("a")
	_, err := g.beforeModel(ctx, request(coretest.History(2, 200)...))
	require.NoError(t, err)
	cached := func() int {
		u, err := g.UsageFromState(ctx.state, "a")
		require.NoError(t, err)
		return u.CachedTokens
	}
	report := func(prompt, cached int32) {
		_, err := g.afterModel(ctx, &Response{UsageMetadata: &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: prompt, CachedContentTokenCount: cached}}, nil)
		require.NoError(t, err)
	}
	assert.Zero(t, cached(), "nothing reported yet")
	report(900, 640)
	assert.Equal(t, 640, cached())
	report(1_000, 0)
	assert.Zero(t, cached(), "a report of none clears it")
	report(1_000, 5_000)
	assert.Zero(t, cached(), "more than the prompt is not believable")
	report(1_000, -3)
	assert.Zero(t, cached(), "negative is not believable")
	report(1_100, 900)
	assert.Equal(t, 900, cached())
}
