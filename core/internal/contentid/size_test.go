package contentid

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"google.golang.org/genai"
)

// TestSize: a content's size is what its strings, bytes and payloads
// hold, so a cache pinning it can bound what it retains; a payload that
// holds itself is sized in bounded time.
func TestSize(t *testing.T) {
	loop := map[string]any{"k": "v"}
	loop["self"] = loop
	for _, tc := range []struct {
		name    string
		c       *genai.Content
		atLeast int
		atMost  int
	}{
		{"a text is its bytes and its role's", userMsg(strings.Repeat("x", 1_000)), 1_000, 1_100},
		{"an image is its bytes", &genai.Content{Parts: []*genai.Part{{InlineData: &genai.Blob{MIMEType: "image/png", Data: make([]byte, 5_000)}}}}, 5_000, 5_100},
		{"a payload is its strings and a word per value", respMsg("f", map[string]any{"out": strings.Repeat("y", 2_000)}), 2_000, 2_200},
		{"a payload holding itself stops at the walk's bound", respMsg("f", loop), 1, maxKeyNodes * 32},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := Size(tc.c)
			assert.GreaterOrEqual(t, n, tc.atLeast)
			assert.LessOrEqual(t, n, tc.atMost)
		})
	}
}
