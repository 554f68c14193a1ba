package o200k_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/adk/model"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/contextguardtest"
	"github.com/adk-contextguard/contextguard/contextguardtest/o200k"
	"github.com/adk-contextguard/contextguard/core/coretest"
	coreo200k "github.com/adk-contextguard/contextguard/core/coretest/o200k"
)

func TestCounter_CountsRequestsAsCoretestDoes(t *testing.T) {
	contents := []*genai.Content{genai.NewContentFromText("The quick brown fox jumps over the lazy dog.", genai.RoleUser)}
	config := &genai.GenerateContentConfig{SystemInstruction: genai.NewContentFromText("Answer briefly.", genai.RoleUser)}
	tests := []struct {
		name   string
		factor float64
	}{
		{name: "a GPT-like provider", factor: 1},
		{name: "a provider that bills a fifth more", factor: 1.2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := o200k.Counter(tt.factor)
			want := coreo200k.Counter(tt.factor).Count(contents, config)
			assert.Equal(t, want, c.CountRequest(&model.LLMRequest{Contents: contents, Config: config}))
			assert.Equal(t, coreo200k.Counter(tt.factor).Count(contents, nil), contextguardtest.CountContents(c, contents))
			assert.Equal(t, fmt.Sprint(coreo200k.Counter(tt.factor)), fmt.Sprint(c))
		})
	}
	assert.Zero(t, o200k.Counter(1).CountRequest(nil), "a nil request counts 0")
}

// matrixRow returns the seed matrix's row of that full name.
func matrixRow(t *testing.T, fullName string) contextguardtest.Scenario {
	t.Helper()
	for _, sc := range coretest.SeedMatrix() {
		if sc.FullName() == fullName {
			return sc
		}
	}
	t.Fatalf("no row %s", fullName)
	return contextguardtest.Scenario{}
}

// TestRun_ConcurrentUnderTheTokenizer: runs of the kit measured by the exact
// counter, in parallel, each complete and pair-safe.
func TestRun_ConcurrentUnderTheTokenizer(t *testing.T) {
	t.Parallel()
	var wg sync.WaitGroup
	for _, name := range []string{"Stress_8k_KubeAgent", "Brutal_4k_CodingAgent", "Stress_8k_InlineSmallImages", "Brutal_8k_ToolDefsAndInlineCombined"} {
		sc := matrixRow(t, name)
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := contextguardtest.Run(context.Background(), sc, contextguardtest.RunConfig{Counter: o200k.Counter(1)})
			assert.NoError(t, err)
			assert.Equal(t, sc.Turns, res.Turns)
			assert.Zero(t, res.PairViolations)
		}()
	}
	wg.Wait()
}

// TestRun_StreamingProviderIDsTokenizer: a streamed run with provider call
// IDs, images, documents and MCP tools, measured by the exact counter.
func TestRun_StreamingProviderIDsTokenizer(t *testing.T) {
	sc := contextguardtest.Scenario{Name: "streaming", Window: 50_000, Turns: 4, TokenRatio: 2, Streaming: true, ProviderCallIDs: true,
		ToolDefs: 3, ToolDefSchemaSize: 1500, ErrorStyle: coretest.ErrorAnthropic,
		Plan: func(t int) contextguardtest.TurnPlan {
			return contextguardtest.TurnPlan{Images: []int{5_000}, Documents: []int{2_000}, Steps: append(contextguardtest.Parallel(contextguardtest.Call("grep", 500), contextguardtest.Call(coretest.MCPToolName(t%3), 700)), contextguardtest.Sequential(contextguardtest.Call("read_file", 300))...)}
		}}
	res, err := contextguardtest.Run(context.Background(), sc, contextguardtest.RunConfig{Counter: o200k.Counter(1.2)})
	require.NoError(t, err)
	t.Log(res)
	require.Equal(t, 4*3, res.Steps)
	assert.Empty(t, res.Errors)
	assert.Zero(t, res.PairViolations)
	for _, rec := range res.Requests {
		assert.True(t, rec.Streamed)
	}
}
