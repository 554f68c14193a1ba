package o200k_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"google.golang.org/adk/model"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/contextguardtest"
	"github.com/adk-contextguard/contextguard/contextguardtest/o200k"
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
