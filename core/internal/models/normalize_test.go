package models

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestNormalize(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"  ", ""},
		{"gemini-2.5-pro", "gemini-2-5-pro"},
		{" Models/Gemini-2.5-Pro ", "gemini-2-5-pro"},
		{"publishers/google/models/gemini-2.5-pro", "gemini-2-5-pro"},
		{"anthropic/claude-sonnet-4-5", "claude-sonnet-4-5"},
		{"openrouter/anthropic/claude-sonnet-4.5", "claude-sonnet-4-5"},
		{"claude-sonnet-4-5@20250929", "claude-sonnet-4-5-20250929"},
		{"us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5-20250929-v1:0"},
		{"meta-llama/Llama-3.3-70B-Instruct", "meta-llama/llama-3-3-70b-instruct"},
		{"gpt-4o-2024-08-06", "gpt-4o-2024-08-06"},
		{"ÉCLAIR-1", "éclair-1"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			assert.Equal(t, tt.want, Normalize(tt.in))
		})
	}
}

func TestStripSuffix(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"claude-opus-4-20250514", "claude-opus-4", true},
		{"gpt-4o-2024-08-06", "gpt-4o", true},
		{"x-latest", "x", true},
		{"gemini-3-pro-preview", "gemini-3-pro", true},
		{"gemini-3-1-pro-preview-customtools", "gemini-3-1-pro-preview-customtools", false},
		{"-preview", "-preview", false},
		{"claude-x-v1:0", "claude-x", true},
		{"gemini-2-0-flash-001", "gemini-2-0-flash", true},
		{"kimi-k2-instruct-0905", "kimi-k2-instruct", true},
		{"gpt-4-1", "gpt-4-1", false},
		{"grok-4-20", "grok-4-20", false},
		{"deepseek-v3", "deepseek-v3", false},
		{"123", "123", false},
		{"-123", "-123", false},
		{"-latest", "-latest", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := stripSuffix([]byte(tt.in))
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, string(got))
		})
	}
}
