package convo

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/coretest"
)

// chartPNG and specPDF stand for what a user attaches.
var (
	chartPNG = &genai.Part{InlineData: &genai.Blob{MIMEType: "image/png", Data: bytes.Repeat([]byte{0x89, 'P', 'N', 'G'}, 64)}}
	specPDF  = &genai.Part{FileData: &genai.FileData{FileURI: "gs://bucket/spec.pdf", MIMEType: "application/pdf"}}
)

func userMsg(text string) *genai.Content  { return genai.NewContentFromText(text, genai.RoleUser) }
func modelMsg(text string) *genai.Content { return genai.NewContentFromText(text, genai.RoleModel) }

func callMsg(name string, args map[string]any) *genai.Content {
	return &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{Name: name, Args: args}}}}
}

func respMsg(name string, resp map[string]any) *genai.Content {
	return &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{Name: name, Response: resp}}}}
}

func TestCurrentRequest(t *testing.T) {
	request := userMsg("REQUEST fix the build")
	image := coretest.UserWith("", chartPNG)
	older := userMsg("OLDER tidy the logs")
	synthetic := userMsg(SyntheticContinuations[0])
	toolResult := respMsg("fetch_logs", map[string]any{"output": "ok"})
	foreign := coretest.ForContext("coordinator", "Handing over.")
	// ADK drops empty parts when it rebuilds the contents from its log.
	withBlanks := &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{nil, {Text: "REQUEST fix the build"}, {}}}
	tests := []struct {
		name       string
		invocation *genai.Content
		contents   []*genai.Content
		want       *genai.Content
		wantIndex  int
	}{
		{
			name:       "the invocation's content, found in the contents as a copy",
			invocation: request,
			contents:   []*genai.Content{older, modelMsg("done"), userMsg("REQUEST fix the build"), foreign, toolResult},
			want:       request, wantIndex: 2,
		},
		{
			name:       "the invocation's content with empty parts ADK drops",
			invocation: withBlanks,
			contents:   []*genai.Content{older, userMsg("REQUEST fix the build"), foreign},
			want:       request, wantIndex: 1,
		},
		{
			name:       "the invocation's content, not in the contents",
			invocation: request,
			contents:   []*genai.Content{older, foreign},
			want:       request, wantIndex: -1,
		},
		{
			name:       "an image-only invocation is the request, not an older text",
			invocation: image,
			contents:   []*genai.Content{older, modelMsg("done"), coretest.UserWith("", chartPNG), synthetic},
			want:       image, wantIndex: 2,
		},
		{
			name:       "a tool result sent as the invocation's content falls back to the contents",
			invocation: toolResult,
			contents:   []*genai.Content{older, modelMsg("done"), request, toolResult},
			want:       request, wantIndex: 2,
		},
		{
			name:     "no invocation content: the newest message the user wrote",
			contents: []*genai.Content{older, request, foreign, callMsg("f", nil), toolResult, synthetic},
			want:     request, wantIndex: 1,
		},
		{
			name:     "no invocation content: an image-only message is the request",
			contents: []*genai.Content{older, modelMsg("done"), image, foreign},
			want:     image, wantIndex: 2,
		},
		{
			name:      "only other agents' context and tool results: no request",
			contents:  []*genai.Content{foreign, toolResult, synthetic},
			wantIndex: -1,
		},
		{
			name:      "nil contents, nil parts and empty messages",
			contents:  []*genai.Content{nil, {}, {Role: genai.RoleUser, Parts: []*genai.Part{nil, {}}}},
			wantIndex: -1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, i := CurrentRequest(tt.invocation, tt.contents)
			assert.Equal(t, tt.wantIndex, i)
			assert.Equal(t, tt.want, got)
			if i >= 0 {
				assert.Same(t, tt.contents[i], got, "the request is the content the contents hold")
			}
		})
	}
}

func TestAttachments(t *testing.T) {
	request := coretest.UserWith("compare", chartPNG, specPDF)
	atts := RequestAttachments(request)
	for _, tc := range []struct {
		name string
		got  any
		want any
	}{
		{"a request's attachments, in order, sharing its media", []bool{atts[0].InlineData == chartPNG.InlineData, atts[1].FileData == specPDF.FileData}, []bool{true, true}},
		{"a text-only request has none", len(RequestAttachments(userMsg("hi"))), 0},
		{"an image is named by its type and size", AttachmentLine(chartPNG), "[attachment: image/png, 256 bytes]"},
		{"a file is named by its URI and type", AttachmentLine(specPDF), "[attachment: file gs://bucket/spec.pdf (application/pdf)]"},
		{"a copy of an attachment is the same attachment", SameAttachment(atts[0], chartPNG), true},
		{"an image and a file differ", SameAttachment(atts[0], specPDF), false},
		{"a trailing synthetic continuation is not covered", CoverableLen([]*genai.Content{request, userMsg(SyntheticContinuations[1])}), 1},
		{"another agent's context is not the user's message", IsUserMessage(coretest.ForContext("coordinator", "hi")), false},
	} {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, tc.got) })
	}
}
