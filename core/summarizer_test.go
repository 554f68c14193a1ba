package core

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestSummaryPrompt_Golden pins the rendered summary prompt and transcript:
// a change to the templates or the rendering shows up as a diff here.
func TestSummaryPrompt_Golden(t *testing.T) {
	cs := []*genai.Content{
		userMsg("Why is checkout-api failing in prod? Use namespace shop."),
		callMsg("kubectl_get_pods", map[string]any{"namespace": "shop"}),
		respMsg("kubectl_get_pods", map[string]any{"output": "NAME READY STATUS\ncheckout-api-7d9 0/1 CrashLoopBackOff\n"}),
		modelMsg("checkout-api-7d9 is crash-looping; reading its logs next."),
		{Role: genai.RoleUser, Parts: []*genai.Part{{InlineData: &genai.Blob{MIMEType: "image/png", Data: make([]byte, 2048)}}}},
	}
	lim := limitsForBudget(20_000)
	var transcript string
	for _, c := range cs {
		transcript += renderContent(c, lim)
	}
	system, user, err := RenderSummaryPrompt(SummaryRequest{
		PreviousSummary: "## Current State\nThe user reported checkout errors.",
		Transcript:      transcript,
		UserRequest:     "Why is checkout-api failing in prod? Use namespace shop.",
		Todos:           []TodoItem{{Content: "Read checkout-api logs", Status: "in_progress"}},
		SummaryTokens:   1000,
		Instructions:    "Keep pod names verbatim.",
	})
	require.NoError(t, err)
	got := "=== system\n" + system + "\n=== user\n" + user + "\n"
	path := filepath.Join("testdata", "summary_prompt.golden")
	if *updateGolden {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -run TestSummaryPrompt_Golden -update to create it")
	assert.Equal(t, string(want), got)
}

// TestTranscriptJSON_SelfReferencingAndDeepValues: the summarizer's
// transcript renders a tool result that refers to itself (json.Marshal
// fails on it) with the reference as null and the rest in full, and one
// nested 10,000 deep as json.Marshal does.
func TestTranscriptJSON_SelfReferencingAndDeepValues(t *testing.T) {
	var out string
	identityWalkEnds(t, func() { out = compactJSON(selfReferencing()) })
	assert.True(t, json.Valid([]byte(out)), "valid JSON: %.100s", out)
	assert.Contains(t, out, `"self":null`)
	assert.Contains(t, out, "result line", "the result itself is in the transcript")

	var v any = "leaf"
	for range 10_000 {
		v = map[string]any{"node": v}
	}
	want, err := json.Marshal(v)
	require.NoError(t, err)
	assert.Equal(t, string(want), marshalJSON(v))
}
