package coretest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"google.golang.org/genai"
)

func TestCheckPairs(t *testing.T) {
	user := func(s string) *genai.Content { return genai.NewContentFromText(s, genai.RoleUser) }
	modelText := func(s string) *genai.Content { return genai.NewContentFromText(s, genai.RoleModel) }
	call := func(ids ...string) *genai.Content {
		c := &genai.Content{Role: genai.RoleModel}
		for _, id := range ids {
			name, callID := id, ""
			if len(id) > 2 && id[1] == '#' {
				name, callID = id[:1], id[2:]
			}
			c.Parts = append(c.Parts, &genai.Part{FunctionCall: &genai.FunctionCall{Name: name, ID: callID}})
		}
		return c
	}
	resp := func(ids ...string) *genai.Content {
		c := &genai.Content{Role: genai.RoleUser}
		for _, id := range ids {
			name, callID := id, ""
			if len(id) > 2 && id[1] == '#' {
				name, callID = id[:1], id[2:]
			}
			c.Parts = append(c.Parts, &genai.Part{FunctionResponse: &genai.FunctionResponse{Name: name, ID: callID}})
		}
		return c
	}
	tests := []struct {
		name     string
		contents []*genai.Content
		wantErr  string
	}{
		{"empty", nil, ""},
		{"text only", []*genai.Content{user("a"), modelText("b"), nil, user("c")}, ""},
		{"parallel pairs", []*genai.Content{user("a"), call("x", "y", "x"), resp("y", "x", "x"), modelText("done")}, ""},
		{"by id", []*genai.Content{user("a"), call("x#1", "x#2"), resp("x#2", "x#1")}, ""},
		{"trailing pending call", []*genai.Content{user("a"), call("x"), resp("x"), call("y", "z")}, ""},
		{"orphaned response", []*genai.Content{user("summary"), resp("x"), modelText("b")}, "has no preceding call"},
		{"orphaned response by id", []*genai.Content{call("x#1"), resp("x#2")}, "has no preceding call"},
		{"unanswered call", []*genai.Content{user("a"), call("x"), user("next")}, "not answered"},
		{"partly answered", []*genai.Content{call("x", "y"), resp("x"), modelText("b")}, "not answered"},
		{"call without response mid-request", []*genai.Content{call("x"), modelText("b")}, "not answered"},
		{"lost response at end", []*genai.Content{user("a"), call("x"), nil}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckPairs(tt.contents)
			if tt.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, tt.wantErr)
		})
	}
}
