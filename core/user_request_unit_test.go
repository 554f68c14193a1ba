package core

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/coretest"
	"github.com/adk-contextguard/contextguard/core/internal/convo"
	"github.com/adk-contextguard/contextguard/core/internal/state"
	"github.com/adk-contextguard/contextguard/core/internal/window"
)

func TestContinuationText_NamesAttachments(t *testing.T) {
	tests := []struct {
		name string
		c    *genai.Content
		want string
	}{
		{"text only", userMsg("fix it"), "fix it"},
		{"text and media", coretest.UserWith("compare", chartPNG, specPDF),
			"compare\n[attachment: image/png, 256 bytes]\n[attachment: file gs://bucket/spec.pdf (application/pdf)]"},
		{"an image alone", coretest.UserWith("", chartPNG), "[attachment: image/png, 256 bytes]"},
		{"thoughts are not the request", &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: "hmm", Thought: true}, {Text: "go"}}}, "go"},
		{"nil", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, continuationText(tt.c))
		})
	}
}

func TestQuotesRequest(t *testing.T) {
	tests := []struct {
		name   string
		stored string
		c      *genai.Content
		want   bool
	}{
		{"the head of the text is quoted", "REQUEST fix the build\n[... 10 bytes omitted ...]\nend", userMsg("REQUEST fix the build, then deploy"), true},
		{"another text", "OLDER tidy the logs", userMsg("REQUEST fix the build"), false},
		{"an image-only request is quoted by its line", continuationText(coretest.UserWith("", chartPNG)), coretest.UserWith("", chartPNG), true},
		{"an image-only request is not quoted by an older text", "OLDER tidy the logs", coretest.UserWith("", chartPNG), false},
		{"nothing to quote", "anything", &genai.Content{Role: genai.RoleUser}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, quotesRequest(tt.stored, tt.c))
		})
	}
}

func TestSummaryContent_CarriesAttachments(t *testing.T) {
	atts := convo.RequestAttachments(coretest.UserWith("compare", chartPNG, specPDF))
	c := summaryContent("S", "compare", false, atts[0], nil, atts[1])
	require.Len(t, c.Parts, 3, "the text, then each attachment; nil ones skipped")
	assert.Contains(t, c.Parts[0].Text, attachmentsNote)
	assert.Equal(t, chartPNG.InlineData.Data, c.Parts[1].InlineData.Data)
	assert.Equal(t, *specPDF.FileData, *c.Parts[2].FileData)
	assert.Greater(t, testEst.Content(c), testEst.Content(summaryContent("S", "compare", false)), "the attachments are counted with the message")

	alone := summaryContent("S", "", false, atts[0])
	assert.Contains(t, alone.Parts[0].Text, continuationLead, "media alone still make a continuation")
	assert.NotContains(t, summaryContent("S", "", false).Parts[0].Text, continuationLead)
	assert.NotPanics(t, func() { summaryContent("", "", false, nil, nil) })
}

func TestSummaryMessage_ReusedWhileUnchanged(t *testing.T) {
	tr := newTestTurn(request(), state.Agent{}, quietTestLogger())
	cur := coretest.UserWith("compare", chartPNG)
	first := tr.sess.summary.message("S", "compare", false, cur)
	// ADK's next rebuild: an equal copy of the request.
	again := tr.sess.summary.message("S", "compare", false, coretest.UserWith("compare", chartPNG))
	assert.Same(t, first, again, "the steady state neither rebuilds nor recounts the message")

	other := coretest.UserWith("compare", &genai.Part{InlineData: &genai.Blob{MIMEType: "image/png", Data: []byte("other")}})
	assert.NotSame(t, first, tr.sess.summary.message("S", "compare", false, other), "other media make another message")
	assert.Len(t, tr.sess.summary.message("S", "compare", false, nil).Parts, 1, "no request: no attachments")
}

func TestContinuationBound_HalfTheRoomAfterSystemAndTools(t *testing.T) {
	tests := []struct {
		name         string
		threshold    int
		systemTokens int
		want         int
	}{
		{"empty system instruction", 6_400, 0, 3_200},
		{"the system instruction takes its share", 6_400, 2_000, 2_200},
		{"no room left: the floor", 6_400, 7_000, minContinuationTokens},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := request()
			if tt.systemTokens > 0 {
				req.Config.SystemInstruction = genai.NewContentFromText(fillerOf(tt.systemTokens, 3), genai.RoleUser)
			}
			tr := newTestTurn(req, state.Agent{}, quietTestLogger())
			tr.lim = window.Limits{Threshold: tt.threshold, Window: tt.threshold * 5 / 4}
			tr.Cal = newCalibration(state.Agent{}, testEst)
			assert.InDelta(t, tt.want, continuationBound(tr.measure, tr.lim.Threshold), float64(tt.want)/20+10)
		})
	}
}

func TestCoveredRequest(t *testing.T) {
	current := userMsg("REQUEST fix the build")
	raw := []*genai.Content{userMsg("OLDER"), modelMsg("done"), userMsg("REQUEST fix the build"), callMsg("f", nil), respMsg("f", nil)}
	tests := []struct {
		name       string
		invocation *genai.Content
		cut        int
		want       bool
	}{
		{name: "the summary covers the request", invocation: current, cut: 4, want: true},
		{name: "the request is kept verbatim after the cut", invocation: current, cut: 2, want: false},
		{name: "the request is nowhere in the contents", invocation: userMsg("NEW request"), cut: 1, want: true},
		{name: "no invocation content: found in the contents", cut: 3, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := newTestTurn(request(raw...), state.Agent{}, quietTestLogger())
			tr.ctx.(*fakeCtx).user = tt.invocation
			v := viewOf(tr)
			assert.Equal(t, tt.want, v.coveredRequest(tt.cut) != nil)
		})
	}
}
