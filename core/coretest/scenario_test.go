package coretest

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestScenario_FillsWindow: a row fills the window when one tool result (a
// step's results, which arrive together) or one user message, with its
// attachments, reaches the default trigger by itself, as the seed ground
// truth counts it; a turn that is large only in sum does not.
func TestScenario_FillsWindow(t *testing.T) {
	step := func(sizes ...int) func(int) TurnPlan {
		calls := make([]ToolCall, len(sizes))
		for i, n := range sizes {
			calls[i] = Call("grep", n)
		}
		return func(int) TurnPlan { return TurnPlan{Steps: Parallel(calls...)} }
	}
	tests := []struct {
		name string
		sc   Scenario
		want bool
	}{
		// 8k window at ratio 2.0: the trigger is 6,400 tokens, 12,800 bytes.
		{"a tool result over the trigger", Scenario{Window: 8_000, Turns: 2, TokenRatio: 2, Plan: step(13_000)}, true},
		{"a tool result under it", Scenario{Window: 8_000, Turns: 2, TokenRatio: 2, Plan: step(12_000)}, false},
		{"one step's parallel results together", Scenario{Window: 8_000, Turns: 2, TokenRatio: 2, Plan: step(7_000, 7_000)}, true},
		{"two steps of a turn, each under it", Scenario{Window: 8_000, Turns: 1, TokenRatio: 2, Plan: func(int) TurnPlan {
			return TurnPlan{Steps: append(Parallel(Call("grep", 7_000)), Parallel(Call("grep", 7_000))...)}
		}}, false},
		{"an image counted by its base64 length", Scenario{Window: 8_000, Turns: 1, TokenRatio: 2, Plan: func(int) TurnPlan {
			return TurnPlan{Images: []int{10_000}} // 13,336 bytes of base64
		}}, true},
		{"a long user message in a later turn", Scenario{Window: 8_000, Turns: 3, TokenRatio: 2, Plan: func(turn int) TurnPlan {
			if turn == 2 {
				return TurnPlan{UserTextSize: 14_000}
			}
			return TurnPlan{}
		}}, true},
		{"a late ratio that makes a result fill it", Scenario{Window: 8_000, Turns: 2, TokenRatio: 1, LateTokenRatio: 2, Plan: step(13_000)}, true},
		{"the seed matrix's giant burst", seedRow(t, "Stress_200k_MassiveToolBurst"), true},
		{"the seed matrix's normal conversation", seedRow(t, "Stress_200k_NormalConversation"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.sc.FillsWindow())
		})
	}
}

// seedRow is the seed matrix's row named fullName.
func seedRow(t *testing.T, fullName string) Scenario {
	t.Helper()
	for _, sc := range SeedMatrix() {
		if sc.FullName() == fullName {
			return sc
		}
	}
	t.Fatalf("no seed row %q", fullName)
	return Scenario{}
}
