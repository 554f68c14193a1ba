package core

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/coretest"
	"github.com/adk-contextguard/contextguard/core/internal/pairs"
	"github.com/adk-contextguard/contextguard/core/internal/textcut"
)

// The user's current request survives compaction whole in kind ("Nothing
// lost", item 3): its attachments go with the continuation, a request of
// images or files alone is never replaced by an older text, its text is
// quoted in full while it fits half the room, and another agent's
// "For context:" message is never taken for it.

// requestWindow is the window of these scenarios: small enough that a short
// history compacts, as in the 8k rows of the stress matrix.
const requestWindow = 8_000

// chartPNG and specPDF stand for what a user attaches.
var (
	chartPNG = &genai.Part{InlineData: &genai.Blob{MIMEType: "image/png", Data: bytes.Repeat([]byte{0x89, 'P', 'N', 'G'}, 64)}}
	specPDF  = &genai.Part{FileData: &genai.FileData{FileURI: "gs://bucket/spec.pdf", MIMEType: "application/pdf"}}
)

// toolStep is one model call and its result, as ADK appends them.
func toolStep(i int) []*genai.Content {
	return []*genai.Content{
		callMsg("fetch_logs", map[string]any{"step": i}),
		respMsg("fetch_logs", map[string]any{"output": coretest.Filler(200, 1000+i)}),
	}
}

// quotedRequest is the continuation's quote in the request's summary
// message, "" when there is none.
func quotedRequest(req *Request) string {
	if req == nil || len(req.Contents) == 0 {
		return ""
	}
	text := textcut.ContentText(req.Contents[0])
	if !strings.HasPrefix(text, summaryHeader) {
		return ""
	}
	_, after, ok := strings.Cut(text, "<user_request>\n")
	if !ok {
		return ""
	}
	quote, _, _ := strings.Cut(after, "\n</user_request>")
	return quote
}

// mediaOf returns the inline data and file parts of c.
func mediaOf(c *genai.Content) []*genai.Part {
	var out []*genai.Part
	for _, p := range pairs.Parts(c) {
		if p != nil && (p.InlineData != nil || p.FileData != nil) {
			out = append(out, p)
		}
	}
	return out
}

// requestScenario is a conversation that compacts on its first call and
// takes one more tool step on its second.
type requestScenario struct {
	name string
	// before is what precedes the current request (after the history).
	before []*genai.Content
	// current is the user's current request; invocation says whether the
	// callback context returns it as the invocation's user content.
	current    *genai.Content
	invocation bool
	// after follows the request before the compaction (e.g. another
	// agent's context after a transfer).
	after []*genai.Content
}

// run plays the scenario: a compaction, the next step, and the next step
// again in a new guard (a new process) reading the same session state. It
// returns the three requests as the model receives them.
func (sc requestScenario) run(t *testing.T) (compacted, next, restarted *Request) {
	t.Helper()
	sum := fixedSummary("SUMMARY: the agent fetched logs; nothing else is known.")
	g, _ := newTestGuard(t, sum, WithMaxTokens(requestWindow))
	ctx := newFakeCtx("a")
	if sc.invocation {
		ctx.user = sc.current
	}
	raw := append(coretest.History(20, 300), sc.before...)
	raw = append(raw, sc.current)
	raw = append(raw, sc.after...)
	raw = append(raw, toolStep(0)...)

	compacted = request(raw...)
	_, err := g.beforeModel(ctx, compacted)
	require.NoError(t, err)
	require.Equal(t, 1, sum.Calls(), "the first call compacts")

	raw = append(raw, toolStep(1)...)
	next = request(raw...)
	_, err = g.beforeModel(ctx, next)
	require.NoError(t, err)
	require.Equal(t, 1, sum.Calls(), "the next step reuses the summary")

	g2, _ := newTestGuard(t, sum, WithMaxTokens(requestWindow))
	raw = append(raw, toolStep(2)...)
	restarted = request(raw...)
	_, err = g2.beforeModel(ctx, restarted)
	require.NoError(t, err)
	require.Equal(t, 1, sum.Calls(), "a new process reuses the stored summary")
	return compacted, next, restarted
}

func TestUserRequest_AttachmentsGoWithTheContinuation(t *testing.T) {
	tests := []requestScenario{
		{
			name:       "text, an image and a file reference, from the invocation",
			current:    coretest.UserWith("LATEST compare the chart with the spec", chartPNG, specPDF),
			invocation: true,
		},
		{
			name:    "text, an image and a file reference, found in the contents",
			current: coretest.UserWith("LATEST compare the chart with the spec", chartPNG, specPDF),
		},
		{
			name:       "an image alone",
			current:    coretest.UserWith("", chartPNG),
			invocation: true,
		},
	}
	for _, sc := range tests {
		t.Run(sc.name, func(t *testing.T) {
			compacted, next, restarted := sc.run(t)
			want := mediaOf(sc.current)
			require.NotEmpty(t, want)

			// The compaction names the attachments in its quote.
			quote := quotedRequest(compacted)
			assert.Contains(t, quote, "image/png", "the continuation names the attached image")
			if text := textcut.ContentText(sc.current); text != "" {
				assert.Contains(t, quote, text)
			}

			// Every later request carries them, once, in the summary message,
			// also when a new process rebuilds it from the session state.
			for name, req := range map[string]*Request{"next step": next, "new process": restarted} {
				require.NotEmpty(t, req.Contents, name)
				got := mediaOf(req.Contents[0])
				require.Len(t, got, len(want), "%s: the summary message carries the request's attachments", name)
				for i := range want {
					assert.True(t, sameAttachmentValue(want[i], got[i]), "%s: attachment %d", name, i)
				}
				n := 0
				for _, c := range req.Contents {
					n += len(mediaOf(c))
				}
				assert.Equal(t, len(want), n, "%s: attachments are not sent twice", name)
				assert.Contains(t, quotedRequest(req), "image/png", name)
			}
		})
	}
}

// sameAttachmentValue compares two media parts by value (old and new code
// alike).
func sameAttachmentValue(a, b *genai.Part) bool {
	switch {
	case a.InlineData != nil:
		return b.InlineData != nil && a.InlineData.MIMEType == b.InlineData.MIMEType && bytes.Equal(a.InlineData.Data, b.InlineData.Data)
	case a.FileData != nil:
		return b.FileData != nil && *a.FileData == *b.FileData
	}
	return false
}

func TestUserRequest_MediaOnlyRequestIsNotReplacedByAnOlderText(t *testing.T) {
	older := []*genai.Content{userMsg("OLDER text request: tidy the logs"), modelMsg("Done, the logs are tidy.")}
	tests := []requestScenario{
		{name: "an image from the invocation", before: older, current: coretest.UserWith("", chartPNG), invocation: true},
		{name: "an image found in the contents", before: older, current: coretest.UserWith("", chartPNG)},
		{name: "a file reference from the invocation", before: older, current: coretest.UserWith("", specPDF), invocation: true},
	}
	for _, sc := range tests {
		t.Run(sc.name, func(t *testing.T) {
			compacted, next, _ := sc.run(t)
			for name, req := range map[string]*Request{"compaction": compacted, "next step": next} {
				quote := quotedRequest(req)
				assert.NotContains(t, quote, "OLDER text request", "%s: the older text is not the request", name)
				assert.Contains(t, quote, "[attachment: ", "%s: the quote names the media request", name)
			}
			assert.Len(t, mediaOf(next.Contents[0]), 1, "the next step carries the media request")
		})
	}
}

// longRequest is a task of about n tokens (calibrated) whose head, middle
// and tail carry markers.
func longRequest(n int) string {
	const markers = 16 // the markers' own tokens, about
	half := (n - markers) / 2
	return "HEAD-MARK " + fillerOf(half, 77) + " MIDDLE-MARK " + fillerOf(half, 78) + " TAIL-MARK"
}

func TestUserRequest_QuotedInFullWithinHalfTheRoom(t *testing.T) {
	tests := []struct {
		name string
		// tokens is the request's size; system is the system instruction's.
		tokens, system int
		wantMiddle     bool
	}{
		// At 8k the threshold is 6.4k: half of it holds a 2k-token task.
		{name: "a 2k-token task at 8k is quoted whole", tokens: 2_000, wantMiddle: true},
		{name: "a 2.5k-token task at 8k is quoted whole", tokens: 2_500, wantMiddle: true},
		// 4k tokens exceed half the room: head and tail only.
		{name: "a 4k-token task at 8k keeps head and tail", tokens: 4_000, wantMiddle: false},
		// A 3k-token system instruction leaves 3.4k, half of it 1.7k.
		{name: "a large system instruction leaves less room", tokens: 2_000, system: 3_000, wantMiddle: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			task := longRequest(tt.tokens)
			sum := fixedSummary("SUMMARY: short.")
			g, _ := newTestGuard(t, sum, WithMaxTokens(requestWindow))
			ctx := newFakeCtx("a").withUser(task)
			raw := append(coretest.History(20, 300), userMsg(task))
			raw = append(raw, toolStep(0)...)
			req := request(raw...)
			if tt.system > 0 {
				req.Config.SystemInstruction = genai.NewContentFromText(fillerOf(tt.system, 5), genai.RoleUser)
			}
			_, err := g.beforeModel(ctx, req)
			require.NoError(t, err)
			require.Equal(t, 1, sum.Calls())

			raw = append(raw, toolStep(1)...)
			next := request(raw...)
			next.Config = req.Config
			_, err = g.beforeModel(ctx, next)
			require.NoError(t, err)

			for name, r := range map[string]*Request{"compaction": req, "next step": next} {
				quote := quotedRequest(r)
				assert.True(t, strings.HasPrefix(quote, "HEAD-MARK"), "%s: the head is quoted", name)
				assert.True(t, strings.HasSuffix(quote, "TAIL-MARK"), "%s: the tail is quoted", name)
				if tt.wantMiddle {
					assert.True(t, quote == task, "%s: the task is quoted in full (%d of %d bytes)", name, len(quote), len(task))
				} else {
					assert.False(t, strings.Contains(quote, "MIDDLE-MARK"), "%s: beyond half the room only head and tail", name)
					assert.True(t, strings.Contains(quote, "bytes omitted"), "%s: the cut is said", name)
				}
			}
		})
	}
}

func TestUserRequest_AnotherAgentsContextIsNotTheRequest(t *testing.T) {
	const realRequest = "REAL-REQUEST: find why checkout fails since the 2.3 deploy"
	transfer := []*genai.Content{
		coretest.ForContext("coordinator", "This is for the specialist."),
		{Role: genai.RoleUser, Parts: []*genai.Part{
			{Text: "For context:"},
			{Text: "[coordinator] called tool `transfer_to_agent` with parameters: {\"agent_name\":\"specialist\"}"},
		}},
		{Role: genai.RoleUser, Parts: []*genai.Part{
			{Text: "For context:"},
			{Text: "[coordinator] `transfer_to_agent` tool returned result: {}"},
		}},
	}
	tests := []requestScenario{
		{name: "the invocation's user content", current: userMsg(realRequest), invocation: true, after: transfer},
		{name: "no invocation content: the newest message the user wrote", current: userMsg(realRequest), after: transfer},
	}
	for _, sc := range tests {
		t.Run(sc.name, func(t *testing.T) {
			compacted, next, restarted := sc.run(t)
			for name, req := range map[string]*Request{"compaction": compacted, "next step": next, "new process": restarted} {
				quote := quotedRequest(req)
				assert.Equal(t, realRequest, quote, "%s: the continuation quotes the user's request", name)
				assert.NotContains(t, quote, "For context:", name)
			}
		})
	}
}
