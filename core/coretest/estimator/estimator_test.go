package estimator

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/tokens"
)

func TestTokens_IsTheBuiltInEstimateSummed(t *testing.T) {
	a := genai.NewContentFromText("the staging vault code is 4471 walrus", genai.RoleUser)
	b := &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{
		Name: "recall_context", Response: map[string]any{"result": "1,2,3,4,5,6,7,8,9"}}}}}
	for _, model := range []string{"gemini-2.5-flash", "gpt-4o", "unknown-model"} {
		e := tokens.ForModel(model)
		assert.Equal(t, e.Content(a), Tokens(model, a), model)
		assert.Equal(t, e.Content(a)+e.Content(b), Tokens(model, a, b), model)
		assert.Positive(t, Tokens(model, b), model)
	}
	assert.Zero(t, Tokens("gpt-4o"))
}
