package core

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
			assert.Equal(t, tt.threshold, l.threshold)
			assert.Equal(t, tt.window-tt.threshold, l.buffer)
		})
	}
}

func TestTriggerOption_DrivesCompactionAndInstructionsReachPrompt(t *testing.T) {
	sum := fixedSummary("S")
	g, logs := newTestGuard(t, sum, WithMaxTokens(100_000), WithTriggerTokens(2_000), WithInstructions("Keep every TICKET-ID."))
	ctx := newFakeCtx("a").withUser("go")
	_, err := g.beforeModel(ctx, request(history(3, 1000)...))
	require.NoError(t, err)
	assert.Equal(t, 1, sum.Calls(), "2,000-token trigger reached in a 100k window")
	assert.Contains(t, contentText(sum.last.Config.SystemInstruction), "Keep every TICKET-ID.")
	assert.Contains(t, logs.String(), "threshold=2000")
}
