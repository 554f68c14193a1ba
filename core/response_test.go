package core

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"google.golang.org/genai"
)

// TestResponse_Readers: what the engine reads of a response: the prompt
// count (0 without usage), a cached count only when it is believable
// beside the prompt's, the output-limit stop, and a request for tools
// only from a function call.
func TestResponse_Readers(t *testing.T) {
	usage := func(prompt, cached int32) *genai.GenerateContentResponseUsageMetadata {
		return &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: prompt, CachedContentTokenCount: cached}
	}
	call := &genai.Part{FunctionCall: &genai.FunctionCall{Name: "run_tests"}}
	tests := []struct {
		name   string
		resp   Response
		prompt int
		cached int
		cut    bool
		tools  bool
	}{
		{name: "no usage, no content: nothing to read"},
		{name: "a counted prompt with part of it cached", resp: Response{UsageMetadata: usage(1_000, 400)}, prompt: 1_000, cached: 400},
		{name: "a cached count above the prompt's is not believed", resp: Response{UsageMetadata: usage(1_000, 1_001)}, prompt: 1_000},
		{name: "a negative cached count is not believed", resp: Response{UsageMetadata: usage(1_000, -1)}, prompt: 1_000},
		{name: "stopped at the output limit", resp: Response{FinishReason: genai.FinishReasonMaxTokens}, cut: true},
		{name: "text only asks for no tools", resp: Response{Content: genai.NewContentFromText("done", genai.RoleModel)}},
		{name: "a function call among nil and text parts asks for tools",
			resp: Response{Content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{nil, {Text: "running"}, call}}}, tools: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.prompt, tt.resp.promptTokens())
			if tt.resp.UsageMetadata != nil {
				assert.Equal(t, tt.cached, tt.resp.cachedTokens(tt.prompt))
			}
			assert.Equal(t, tt.cut, tt.resp.cutAtOutputLimit())
			assert.Equal(t, tt.tools, tt.resp.asksForTools())
		})
	}
}
