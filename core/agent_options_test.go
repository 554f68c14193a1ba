package core

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/adk-contextguard/contextguard/core/coretest"
	"github.com/adk-contextguard/contextguard/core/internal/textcut"
)

func TestTriggerOptions(t *testing.T) {
	tests := []struct {
		name      string
		opt       AgentOption
		window    int
		threshold int
		ok        bool
	}{
		{"default small window", nil, 8_000, 6_400, true},
		{"default large window", nil, 1_000_000, 980_000, true},
		{"tokens", WithTriggerTokens(5_000), 8_000, 5_000, true},
		{"tokens beyond the window fall back", WithTriggerTokens(9_000), 8_000, 6_400, false},
		{"fraction", WithTriggerFraction(0.5), 8_000, 4_000, true},
		{"reserve", WithReserve(3_000), 8_000, 5_000, true},
		{"reserve larger than the window falls back", WithReserve(9_000), 8_000, 6_400, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var opts []AgentOption
			if tt.opt != nil {
				opts = append(opts, tt.opt)
			}
			cfg := agentConfigFor("a", `Add("a")`, fixedSummary("x"), opts)
			require.Empty(t, cfg.errs)
			l, ok := cfg.limitsFor(tt.window)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.threshold, l.Threshold)
			assert.Equal(t, tt.window-tt.threshold, l.Buffer)
		})
	}
}

func TestTriggerOption_DrivesCompactionAndInstructionsReachPrompt(t *testing.T) {
	sum := fixedSummary("S")
	g, logs := newTestGuard(t, sum, WithMaxTokens(100_000), WithTriggerTokens(2_000), WithInstructions("Keep every TICKET-ID."))
	ctx := newFakeCtx("a").withUser("go")
	_, err := g.beforeModel(ctx, request(coretest.History(3, 1000)...))
	require.NoError(t, err)
	assert.Equal(t, 1, sum.Calls(), "2,000-token trigger reached in a 100k window")
	assert.Contains(t, textcut.ContentText(sum.last.Config.SystemInstruction), "Keep every TICKET-ID.")
	assert.Contains(t, logs.String(), "threshold=2000")
}

// TestOneOptionPerRole: a second strategy, like a second trigger, is an
// error naming both options; the same option given twice keeps the last.
func TestOneOptionPerRole(t *testing.T) {
	tests := []struct {
		name    string
		opts    []AgentOption
		wantErr string
		policy  compactionStrategy
		trigger int // WithTriggerTokens' tokens in effect
	}{
		{"sliding window then tail retention", []AgentOption{WithSlidingWindow(10), WithTailRetention(0.3)},
			"WithTailRetention(0.3): the strategy is already set by WithSlidingWindow(10); use only one of WithSlidingWindow, WithTailRetention", nil, 0},
		{"tail retention then sliding window", []AgentOption{WithTailRetention(0.3), WithSlidingWindow(0)},
			"WithSlidingWindow(0): the strategy is already set by WithTailRetention(0.3)", nil, 0},
		{"the same strategy twice keeps the last", []AgentOption{WithSlidingWindow(10), WithSlidingWindow(6)}, "", slidingWindow{maxTurns: 6}, 0},
		{"two triggers", []AgentOption{WithReserve(1000), WithTriggerFraction(0.5)},
			"WithTriggerFraction(0.5): the trigger is already set by WithReserve(1000); use only one of WithTriggerTokens, WithTriggerFraction, WithReserve", nil, 0},
		{"the same trigger twice keeps the last", []AgentOption{WithTriggerTokens(5000), WithTriggerTokens(4000)}, "", thresholdStrategy{}, 4000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := agentConfigFor("a", `Add("a")`, fixedSummary("x"), tt.opts)
			if tt.wantErr != "" {
				require.Len(t, cfg.errs, 1)
				assert.ErrorContains(t, cfg.errs[0], tt.wantErr)
				return
			}
			require.Empty(t, cfg.errs)
			assert.Equal(t, tt.policy, cfg.policy)
			assert.Equal(t, tt.trigger, cfg.trigger.tokens)
		})
	}
}

// TestOptionsFitTheWindow: the options that must fit inside the window are
// checked against WithMaxTokens, or, without it, against the registry's
// window for the model given to Add when the registry knows it.
func TestOptionsFitTheWindow(t *testing.T) {
	reg := windowRegistry{"summarizer": 8_000}
	tests := []struct {
		name    string
		model   HostModel
		opts    []AgentOption
		wantErr string
	}{
		{"pruning minimum at the window", fixedSummary("x"), []AgentOption{WithMaxTokens(16_000), WithPruningMinFree(16_000)},
			"WithPruningMinFree(16000) is not below WithMaxTokens(16000): no pruning pass can free a whole window"},
		{"pruning minimum just below the window", fixedSummary("x"), []AgentOption{WithMaxTokens(16_000), WithPruningMinFree(15_999)}, ""},
		{"summary tokens at the window", fixedSummary("x"), []AgentOption{WithMaxTokens(16_000), WithSummaryTokens(16_000)},
			"WithSummaryTokens(16000) is not below WithMaxTokens(16000)"},
		{"trigger at the registry's window", fixedSummary("x"), []AgentOption{WithTriggerTokens(8_000)},
			`Add("a"): WithTriggerTokens(8000) is not below the registry's window of 8000 tokens for model "summarizer" (set WithMaxTokens when the agent's model is another): the trigger must be inside the window`},
		{"reserve of the registry's window", fixedSummary("x"), []AgentOption{WithReserve(8_000)},
			"WithReserve(8000) is not below the registry's window of 8000 tokens"},
		{"pruning minimum at the registry's window", fixedSummary("x"), []AgentOption{WithPruningMinFree(9_000)},
			"WithPruningMinFree(9000) is not below the registry's window of 8000 tokens"},
		{"trigger just below the registry's window", fixedSummary("x"), []AgentOption{WithTriggerTokens(7_999)}, ""},
		{"WithMaxTokens replaces the registry's window", fixedSummary("x"), []AgentOption{WithTriggerTokens(9_000), WithMaxTokens(10_000)}, ""},
		{"a model the registry does not know is not checked", &fakeLLM{name: "in-house"}, []AgentOption{WithTriggerTokens(1_000_000)}, ""},
		{"no model given to Add is not checked", nil, []AgentOption{WithSummarizer(fixedSummary("x")), WithTriggerTokens(1_000_000)}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGuard(reg, WithLogger(quietLogger))
			g.addModel("a", tt.model, tt.opts...)
			if tt.wantErr == "" {
				require.NoError(t, g.Err())
				return
			}
			assert.ErrorContains(t, g.Err(), tt.wantErr)
			assert.Nil(t, g.Agent("a"), "an agent whose options are in error is left unguarded")
		})
	}
}
