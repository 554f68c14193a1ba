package core

import (
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
