package coretest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"
)

// TestGeminiServer answers as the Gemini API does: routes and the key are
// checked, a request over the window gets the API's overflow error (which
// IsOverflowError recognises), and a reply comes whole or as server-sent
// events with the usage on the last one; every request is recorded.
func TestGeminiServer(t *testing.T) {
	srv := &GeminiServer{
		APIKey: "k",
		Window: 100,
		Count: func(c *GeminiCall) int { // one token a byte of text
			n := 0
			for _, content := range c.Contents {
				for _, p := range content.Parts {
					n += len(p.Text)
				}
			}
			return n
		},
		Reply: func(*GeminiCall) (*genai.Content, error) {
			return genai.NewContentFromText("one two three four five six", genai.RoleModel), nil
		},
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	body := func(text string) string {
		b, err := json.Marshal(map[string]any{"contents": []*genai.Content{genai.NewContentFromText(text, genai.RoleUser)}})
		require.NoError(t, err)
		return string(b)
	}
	tests := []struct {
		name, path, key, body string
		wantStatus            int
		wantIn                []string
	}{
		{"an unknown route", "/v1beta/models/m:countTokens", "k", body("hi"), http.StatusNotFound, []string{"NOT_FOUND"}},
		{"a wrong key", "/v1beta/models/m:generateContent", "x", body("hi"), http.StatusUnauthorized, []string{"API key not valid"}},
		{"a request over the window", "/v1beta/models/m:generateContent", "k", body(strings.Repeat("a", 200)), http.StatusBadRequest,
			[]string{"exceeds the maximum number of tokens allowed (100)"}},
		{"a reply", "/v1beta/models/m:generateContent", "k", body("hi"), http.StatusOK,
			[]string{`"finishReason":"STOP"`, `"promptTokenCount":2`, "one two three four five six"}},
		{"a streamed reply", "/v1beta/models/m:streamGenerateContent?alt=sse", "k", body("hi"), http.StatusOK,
			[]string{"data: ", `"text":"one two "`, `"promptTokenCount":2`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, ts.URL+tt.path, strings.NewReader(tt.body))
			require.NoError(t, err)
			req.Header.Set("x-goog-api-key", tt.key)
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			got, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			assert.Equal(t, tt.wantStatus, resp.StatusCode)
			for _, want := range tt.wantIn {
				assert.Contains(t, string(got), want)
			}
		})
	}
	calls := srv.Calls()
	require.Len(t, calls, 3, "the rejected request and both replies are recorded")
	assert.Equal(t, 200, calls[0].Tokens)
	assert.True(t, IsOverflowError(&genai.APIError{Code: 400, Message: "The input token count (200) exceeds the maximum number of tokens allowed (100)."}))
	assert.False(t, calls[1].Stream)
	assert.True(t, calls[2].Stream)
	assert.Equal(t, 3, calls[2].Chunks, "six words in three pieces")
}
