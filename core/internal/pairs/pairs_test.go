package pairs

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"google.golang.org/genai"
)

func TestSafeStart(t *testing.T) {
	call := func(name, id string) *genai.Part {
		return &genai.Part{FunctionCall: &genai.FunctionCall{ID: id, Name: name}}
	}
	resp := func(name, id string) *genai.Part {
		return &genai.Part{FunctionResponse: &genai.FunctionResponse{ID: id, Name: name}}
	}
	msg := func(role string, parts ...*genai.Part) *genai.Content {
		return &genai.Content{Role: role, Parts: parts}
	}
	text := func(role, s string) *genai.Content { return msg(role, &genai.Part{Text: s}) }
	byName := []*genai.Content{
		text(genai.RoleUser, "u0"),
		msg(genai.RoleModel, call("get", "")),
		msg(genai.RoleUser, resp("get", "")),
		text(genai.RoleModel, "m"),
		text(genai.RoleUser, "u1"),
	}
	withIDs := []*genai.Content{
		msg(genai.RoleModel, call("t", "1"), call("t", "2")),
		msg(genai.RoleUser, resp("t", "1"), resp("t", "2")),
	}
	for _, tc := range []struct {
		name        string
		cs          []*genai.Content
		start, want int
	}{
		{"a cut between a call and its response moves back to the call", byName, 2, 1},
		{"a cut after the pair stays", byName, 3, 3},
		{"a cut at the start stays", byName, 0, 0},
		{"responses matched by ID move the cut to their calls", withIDs, 1, 0},
		{"a nil content holds no call", []*genai.Content{nil, msg(genai.RoleUser, resp("x", ""))}, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, SafeStart(tc.cs, tc.start)) })
	}
}
