package core

import (
	"bytes"
	"reflect"
	"strconv"

	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/pairs"
	"github.com/adk-contextguard/contextguard/core/internal/textcut"
)

// The user's request: which content is the user's current request, and what
// of it a compaction must carry (its text and attachments).

// foreignContextLead is the first part ADK gives the user-role message that
// shows another agent's events to the current one (ConvertForeignEvent in
// ADK's contents processor): after a transfer, the coordinator's words and
// tool calls reach the sub-agent as such messages. They are context, never
// the user's request.
const foreignContextLead = "For context:"

// attachmentsNote follows the quote when the summary message carries the
// request's attachments, so the model knows whose they are.
const attachmentsNote = "[The attachments of the user's request follow.]"

// isForeignContext reports whether c is ADK's rendering of another agent's
// event ("For context: [agent] said: ...").
func isForeignContext(c *genai.Content) bool {
	if c == nil || c.Role != genai.RoleUser {
		return false
	}
	for _, p := range c.Parts {
		if p != nil {
			return p.Text == foreignContextLead
		}
	}
	return false
}

// isAttachment reports whether p is media the user sent: inline data or a
// file reference.
func isAttachment(p *genai.Part) bool {
	return p != nil && !p.Thought && (p.InlineData != nil || p.FileData != nil)
}

// isUserRequest reports whether c is a message the user wrote: a user-role
// content (or one without a role: the invocation's content may lack it) with
// text or attachments, that is neither an adapter's synthetic continuation,
// nor another agent's "For context:" message, nor a tool result.
func isUserRequest(c *genai.Content) bool {
	if c == nil || (c.Role != genai.RoleUser && c.Role != "") || isSynthetic(c) || isForeignContext(c) {
		return false
	}
	quotable := false
	for _, p := range c.Parts {
		if p == nil {
			continue
		}
		if p.FunctionResponse != nil {
			return false
		}
		if (p.Text != "" && !p.Thought) || isAttachment(p) {
			quotable = true
		}
	}
	return quotable
}

// isUserMessage reports whether c, a content of the history, is a message
// the user wrote: isUserRequest's rule, with the user role stated (only the
// invocation's own content may lack a role). The sliding window's turns
// start at one, and the fallback summary lists them.
func isUserMessage(c *genai.Content) bool {
	return c != nil && c.Role == genai.RoleUser && isUserRequest(c)
}

// currentRequest is the one place that decides which content is the user's
// current request, the message a compaction must never lose: the content
// that started the invocation (agent.CallbackContext.UserContent) when it is
// a request the user wrote, else the newest content of cs the user wrote
// (isUserRequest: never another agent's "For context:" message, a synthetic
// continuation or a tool result). A request of images or files alone is the
// request; it is never passed over for an older text. index is where the
// request lies in cs (the newest equal content for the invocation's), or -1
// when cs does not hold it; c is nil when there is no request at all.
func currentRequest(invocationUser *genai.Content, cs []*genai.Content) (c *genai.Content, index int) {
	if isUserRequest(invocationUser) {
		for i := len(cs) - 1; i >= 0; i-- {
			if sameRequest(cs[i], invocationUser) {
				return cs[i], i
			}
		}
		return invocationUser, -1
	}
	for i := len(cs) - 1; i >= 0; i-- {
		if isUserRequest(cs[i]) {
			return cs[i], i
		}
	}
	return nil, -1
}

// sameRequest reports whether the content c holds the same request as u:
// ADK rebuilds the contents from its event log as copies, without empty
// parts, so they are compared by value, empty parts skipped, cheapest fields
// first.
func sameRequest(c, u *genai.Content) bool {
	if c == u {
		return true
	}
	if c == nil || u == nil || c.Role != genai.RoleUser {
		return false
	}
	i, j := 0, 0
	for {
		for i < len(c.Parts) && blankPart(c.Parts[i]) {
			i++
		}
		for j < len(u.Parts) && blankPart(u.Parts[j]) {
			j++
		}
		if i == len(c.Parts) || j == len(u.Parts) {
			return i == len(c.Parts) && j == len(u.Parts)
		}
		p, q := c.Parts[i], u.Parts[j]
		if p.Text != q.Text || p.Thought != q.Thought || p.FunctionResponse != nil || q.FunctionResponse != nil ||
			!sameAttachment(p, q) {
			return false
		}
		i++
		j++
	}
}

// blankPart reports whether p is nil or empty, a part ADK drops when it
// builds the contents. The fields every part of a conversation uses are
// tested first, so the reflective test (which copies the part) runs only on
// parts that are probably blank: it runs on every call with a summary.
func blankPart(p *genai.Part) bool {
	if p == nil {
		return true
	}
	if p.Text != "" || p.FunctionCall != nil || p.FunctionResponse != nil || p.InlineData != nil || p.FileData != nil {
		return false
	}
	return reflect.ValueOf(*p).IsZero()
}

// coveredRequest is the user's current request when a summary cutting the
// contents at cut stands for it: the request lies before cut, or nowhere in
// the contents. It is nil when the request is sent verbatim after the cut,
// or there is none. A summary message built for cut carries its attachments
// (summaryMessage).
func coveredRequest(t *turn, cut int) *genai.Content {
	if t.betweenTurns {
		// The next turn's request comes after the summary, verbatim.
		return nil
	}
	var user *genai.Content
	if t.ctx != nil {
		user = t.ctx.UserContent()
	}
	c, i := currentRequest(user, t.raw)
	if i >= cut {
		return nil
	}
	return c
}

// latestUserText is the text of the user's current request (currentRequest),
// "" when it has none.
func latestUserText(invocationUser *genai.Content, cs []*genai.Content) string {
	c, _ := currentRequest(invocationUser, cs)
	return textcut.ContentText(c)
}

// requestAttachments returns the attachments of the request c, in order, as
// new parts that share the media (never copied: an image may be megabytes)
// but none of the part's other fields; nil when there are none.
func requestAttachments(c *genai.Content) []*genai.Part {
	var out []*genai.Part
	for _, p := range pairs.Parts(c) {
		if isAttachment(p) {
			out = append(out, &genai.Part{
				InlineData:      p.InlineData,
				FileData:        p.FileData,
				VideoMetadata:   p.VideoMetadata,
				MediaResolution: p.MediaResolution,
			})
		}
	}
	return out
}

// sameAttachment reports whether two parts carry the same media (both none
// included).
func sameAttachment(p, q *genai.Part) bool {
	if p == q {
		return true
	}
	if p == nil || q == nil {
		return false
	}
	a, b := p.InlineData, q.InlineData
	if (a == nil) != (b == nil) || (a != nil && a != b && (a.MIMEType != b.MIMEType || a.DisplayName != b.DisplayName || !bytes.Equal(a.Data, b.Data))) {
		return false
	}
	f, g := p.FileData, q.FileData
	if (f == nil) != (g == nil) || (f != nil && *f != *g) {
		return false
	}
	return reflect.DeepEqual(p.VideoMetadata, q.VideoMetadata) && reflect.DeepEqual(p.MediaResolution, q.MediaResolution)
}

// attachmentLine names one attachment in the quoted request, so the quote
// says what was attached even where the media itself is not sent with it.
func attachmentLine(p *genai.Part) string {
	switch {
	case p == nil:
		return ""
	case p.InlineData != nil:
		return "[attachment: " + p.InlineData.MIMEType + ", " + strconv.Itoa(len(p.InlineData.Data)) + " bytes]"
	case p.FileData != nil:
		return "[attachment: file " + p.FileData.FileURI + " (" + p.FileData.MIMEType + ")]"
	}
	return ""
}
