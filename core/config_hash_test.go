package core

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/coretest"
	"github.com/adk-contextguard/contextguard/core/internal/state"
)

// TestFixedOf_CountedOncePerGuard: an agent's system instruction and tool
// declarations are counted once by a guard, not once per session: the first
// call of a session the guard never served (a new session, or one evicted
// from its table) counts only its contents, unless the instruction, the
// tools or the estimator differ.
func TestFixedOf_CountedOncePerGuard(t *testing.T) {
	bigTools := func(desc string) *genai.GenerateContentConfig {
		cfg := prefixTools(desc)
		for i := range 40 {
			cfg.Tools[0].FunctionDeclarations = append(cfg.Tools[0].FunctionDeclarations, &genai.FunctionDeclaration{
				Name: "tool_" + strings.Repeat("x", i%7) + string(rune('a'+i%26)), Description: strings.Repeat("Reads what the cluster reports. ", 8),
			})
		}
		return cfg
	}
	tests := []struct {
		name string
		// second is the second session's request config and model.
		config       *genai.GenerateContentConfig
		model        string
		countsConfig bool
	}{
		{"the same instruction and tools: counted once", bigTools("Reads the logs of a pod."), "gemini-2.5-flash", false},
		{"other tools: counted", bigTools("Reads the logs of a pod, newest last."), "gemini-2.5-flash", true},
		{"another estimator family: counted", bigTools("Reads the logs of a pod."), "claude-sonnet-4-5", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			counter := &countingCounter{}
			g, _ := newTestGuard(t, fixedSummary("unused"), WithTokenCounter(counter), WithMaxTokens(1_000_000))
			first := &Request{Model: "gemini-2.5-flash", Config: bigTools("Reads the logs of a pod."), Contents: coretest.ToolHistory(1, "s1")}
			_, err := g.beforeModel(newFakeCtx("a"), first)
			require.NoError(t, err)
			// The first call counts everything: the bytes past its contents'
			// are the instruction's and the tools'.
			configBytes := counter.take() - len(requestText(&Request{Contents: first.Contents}))
			require.Greater(t, configBytes, 5_000, "the tools outweigh the contents")
			ctx := newFakeCtx("a")
			ctx.sessionID = "another-session"
			second := &Request{Model: tt.model, Config: tt.config, Contents: coretest.ToolHistory(1, "s2")}
			_, err = g.beforeModel(ctx, second)
			require.NoError(t, err)
			counted := counter.take()

			assert.Equal(t, exactCount(second), ctx.getInt(state.KeyLastEstimate), "the count used is the whole request's")
			contentBytes := len(requestText(&Request{Contents: second.Contents}))
			if tt.countsConfig {
				assert.GreaterOrEqual(t, counted, configBytes*3/4, "the instruction and tools are counted")
			} else {
				assert.Less(t, counted, contentBytes+configBytes/4, "only the contents are counted")
			}
		})
	}
}
