package countcache

import (
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/estimate"
)

// testEst is the feature estimator the tests count with.
var testEst = estimate.ForModel("gemini-2.5-flash")

func userMsg(text string) *genai.Content { return genai.NewContentFromText(text, genai.RoleUser) }

func callMsg(name string, args map[string]any) *genai.Content {
	return &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{Name: name, Args: args}}}}
}

func respMsg(name string, resp map[string]any) *genai.Content {
	return &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{Name: name, Response: resp}}}}
}
