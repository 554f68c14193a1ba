package core

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"google.golang.org/genai"
)

func TestPairSafeStart(t *testing.T) {
	cs := []*genai.Content{
		userMsg("u0"),
		callMsg("get", nil),
		respMsg("get", map[string]any{"r": 1}),
		modelMsg("m"),
		userMsg("u1"),
	}
	assert.Equal(t, 1, pairSafeStart(cs, 2), "a cut between a call and its response moves back to the call")
	assert.Equal(t, 3, pairSafeStart(cs, 3))
	assert.Equal(t, 0, pairSafeStart(cs, 0))
	withIDs := []*genai.Content{
		{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{ID: "1", Name: "t"}}, {FunctionCall: &genai.FunctionCall{ID: "2", Name: "t"}}}},
		{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{ID: "1", Name: "t"}}, {FunctionResponse: &genai.FunctionResponse{ID: "2", Name: "t"}}}},
	}
	assert.Equal(t, 0, pairSafeStart(withIDs, 1))
}
