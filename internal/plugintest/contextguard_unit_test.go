package plugintest

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/adk/model"
	"google.golang.org/genai"

	. "github.com/adk-contextguard/contextguard"
)

func TestOptionValidation(t *testing.T) {
	llm := fixedSummary("x")
	tests := []struct {
		name string
		add  func(g *ContextGuard)
		opts []Option
		want []string
	}{
		{"valid", func(g *ContextGuard) {
			g.Add("a", llm, WithSlidingWindow(0), WithMaxTokens(0), WithMaxCompactionAttempts(0), WithMaxSummarizerCalls(0))
		}, nil, nil},
		{"negative sliding window", func(g *ContextGuard) { g.Add("a", llm, WithSlidingWindow(-1)) }, nil, []string{`Add("a")`, "WithSlidingWindow(-1)"}},
		{"negative max tokens", func(g *ContextGuard) { g.Add("a", llm, WithMaxTokens(-5)) }, nil, []string{"WithMaxTokens(-5)"}},
		{"negative attempts", func(g *ContextGuard) { g.Add("a", llm, WithMaxCompactionAttempts(-1)) }, nil, []string{"WithMaxCompactionAttempts(-1)"}},
		{"negative summarizer calls", func(g *ContextGuard) { g.Add("a", llm, WithMaxSummarizerCalls(-1)) }, nil, []string{"WithMaxSummarizerCalls(-1)"}},
		{"zero summary timeout", func(g *ContextGuard) { g.Add("a", llm, WithSummaryTimeout(0)) }, nil, []string{"WithSummaryTimeout(0s)"}},
		{"nil summarizer", func(g *ContextGuard) { g.Add("a", llm, WithSummarizer(nil)) }, nil, []string{"WithSummarizer"}},
		{"nil model", func(g *ContextGuard) { g.Add("a", nil) }, nil, []string{"model is nil"}},
		{"empty name", func(g *ContextGuard) { g.Add("", llm) }, nil, []string{"agent name is empty"}},
		{"nil option", func(g *ContextGuard) { g.Add("a", llm, nil) }, nil, []string{"nil AgentOption"}},
		{"nil logger", func(*ContextGuard) {}, []Option{WithLogger(nil)}, []string{"WithLogger"}},
		{"zero trigger tokens", func(g *ContextGuard) { g.Add("a", llm, WithTriggerTokens(0)) }, nil, []string{"WithTriggerTokens(0): must be > 0"}},
		{"trigger fraction of one", func(g *ContextGuard) { g.Add("a", llm, WithTriggerFraction(1)) }, nil, []string{"WithTriggerFraction(1): must be in (0, 1)"}},
		{"NaN trigger fraction", func(g *ContextGuard) { g.Add("a", llm, WithTriggerFraction(math.NaN())) }, nil, []string{"WithTriggerFraction(NaN)"}},
		{"negative reserve", func(g *ContextGuard) { g.Add("a", llm, WithReserve(-3)) }, nil, []string{"WithReserve(-3): must be > 0"}},
		{"trigger above the window", func(g *ContextGuard) { g.Add("a", llm, WithTriggerTokens(9000), WithMaxTokens(8000)) }, nil, []string{`Add("a")`, "WithTriggerTokens(9000) is not below WithMaxTokens(8000)"}},
		{"trigger at the window", func(g *ContextGuard) { g.Add("a", llm, WithMaxTokens(8000), WithTriggerTokens(8000)) }, nil, []string{"WithTriggerTokens(8000) is not below WithMaxTokens(8000)"}},
		{"reserve of the whole window", func(g *ContextGuard) { g.Add("a", llm, WithReserve(8000), WithMaxTokens(8000)) }, nil, []string{"WithReserve(8000) is not below WithMaxTokens(8000)"}},
		{"trigger below the window", func(g *ContextGuard) { g.Add("a", llm, WithTriggerTokens(7999), WithMaxTokens(8000)) }, nil, nil},
		{"two triggers", func(g *ContextGuard) { g.Add("a", llm, WithReserve(1000), WithTriggerFraction(0.5)) }, nil, []string{"WithTriggerFraction(0.5): the trigger is already set by WithReserve(1000)"}},
		{"empty instructions", func(g *ContextGuard) { g.Add("a", llm, WithInstructions("")) }, nil, []string{"WithInstructions: text is empty"}},
		{"unknown summary form", func(g *ContextGuard) { g.Add("a", llm, WithSummaryForm("prefix")) }, nil, []string{`WithSummaryForm("prefix"): must be "cached" or "transcript"`}},
		{"nil tracer provider", func(*ContextGuard) {}, []Option{WithTracerProvider(nil)}, []string{"WithTracerProvider"}},
		{"nil meter provider", func(*ContextGuard) {}, []Option{WithMeterProvider(nil)}, []string{"WithMeterProvider"}},
		{"nil clock", func(*ContextGuard) {}, []Option{WithClock(nil)}, []string{"WithClock: clock is nil"}},
		{"nil option", func(*ContextGuard) {}, []Option{nil}, []string{"nil Option"}},
		{"nil hook", func(*ContextGuard) {}, []Option{WithOnCompaction(nil)}, []string{"WithOnCompaction"}},
		{"all errors joined", func(g *ContextGuard) {
			g.Add("a", llm, WithMaxTokens(-1))
			g.Add("b", llm, WithSlidingWindow(-2))
		}, nil, []string{"WithMaxTokens(-1)", "WithSlidingWindow(-2)", `Add("b")`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := New(nil, tt.opts...)
			tt.add(g)
			p, err := g.Plugin()
			if tt.want == nil {
				require.NoError(t, err)
				require.NotNil(t, p)
				assert.NotPanics(t, func() { g.PluginConfig() })
				return
			}
			require.Error(t, err)
			assert.Nil(t, p)
			for _, w := range tt.want {
				assert.Contains(t, err.Error(), w)
			}
			assert.PanicsWithError(t, err.Error(), func() { g.PluginConfig() })
		})
	}
}

func TestAfterModel(t *testing.T) {
	usage := func(n int32) *genai.GenerateContentResponseUsageMetadata {
		return &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: n}
	}
	tests := []struct {
		name  string
		agent string
		resp  *model.LLMResponse
		err   error
		want  any
	}{
		{"final response persisted", "a", &model.LLMResponse{UsageMetadata: usage(1234)}, nil, 1234},
		{"partial skipped", "a", &model.LLMResponse{Partial: true, UsageMetadata: usage(1234)}, nil, nil},
		{"nil usage skipped", "a", &model.LLMResponse{}, nil, nil},
		{"zero count skipped", "a", &model.LLMResponse{UsageMetadata: usage(0)}, nil, nil},
		{"unknown agent skipped", "b", &model.LLMResponse{UsageMetadata: usage(1234)}, nil, nil},
		{"error skipped", "a", &model.LLMResponse{UsageMetadata: usage(1234)}, errBoom, nil},
		{"nil response", "a", nil, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, _ := newTestGuard(t, fixedSummary("x"))
			ctx := newFakeCtx(tt.agent)
			p, err := g.Plugin()
			require.NoError(t, err)
			resp, err := p.AfterModelCallback()(ctx, tt.resp, tt.err)
			require.NoError(t, err)
			assert.Nil(t, resp)
			v, _ := ctx.state.Get(keyRealTokens + tt.agent)
			assert.Equal(t, tt.want, v)
		})
	}
}
