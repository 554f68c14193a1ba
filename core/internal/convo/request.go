// Package convo reads a conversation as the guard must: which content is
// the user's current request (never an adapter's synthetic continuation,
// another agent's "For context:" message or a tool result), and the
// attachments a request carries.
package convo

import (
	"bytes"
	"reflect"
	"strconv"

	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/pairs"
	"github.com/adk-contextguard/contextguard/core/internal/textcut"
)

// SyntheticContinuations are texts adapters append after the guard has run
// (ADK's Gemini adapter does so when the last message is not the user's). A
// request that already carries one, because it is being retried, must not
// move the watermark.
var SyntheticContinuations = []string{
	"Continue processing previous requests as instructed. Exit or provide a summary if no more outputs are needed.",
	"Handle the requests as specified in the System Instruction.",
}

// IsSynthetic reports whether c is one of the SyntheticContinuations.
func IsSynthetic(c *genai.Content) bool {
	if c == nil || c.Role != genai.RoleUser || len(c.Parts) != 1 || c.Parts[0] == nil {
		return false
	}
	for _, s := range SyntheticContinuations {
		if c.Parts[0].Text == s {
			return true
		}
	}
	return false
}

// CoverableLen is how many leading contents a summary made now would cover:
// all of them but a trailing synthetic continuation.
func CoverableLen(cs []*genai.Content) int {
	n := len(cs)
	for n > 0 && IsSynthetic(cs[n-1]) {
		n--
	}
	return n
}

// ForeignContextLead is the first part of the user-role message in which
// ADK shows another agent's events to the current one (ConvertForeignEvent):
// context, never the user's request.
const ForeignContextLead = "For context:"

func isForeignContext(c *genai.Content) bool {
	if c == nil || c.Role != genai.RoleUser {
		return false
	}
	for _, p := range c.Parts {
		if p != nil {
			return p.Text == ForeignContextLead
		}
	}
	return false
}

// IsAttachment reports whether p is media the user sent: inline data or a
// file reference.
func IsAttachment(p *genai.Part) bool {
	return p != nil && !p.Thought && (p.InlineData != nil || p.FileData != nil)
}

// isUserRequest reports whether c is a message the user wrote: user-role
// (or, for the invocation's content, none) with text or attachments, and
// not a synthetic continuation, a "For context:" message or a tool result.
func isUserRequest(c *genai.Content) bool {
	if c == nil || (c.Role != genai.RoleUser && c.Role != "") || IsSynthetic(c) || isForeignContext(c) {
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
		if (p.Text != "" && !p.Thought) || IsAttachment(p) {
			quotable = true
		}
	}
	return quotable
}

// IsUserMessage reports whether c, a content of the history, is a message
// the user wrote, its role stated. The sliding window's turns start at one.
func IsUserMessage(c *genai.Content) bool {
	return c != nil && c.Role == genai.RoleUser && isUserRequest(c)
}

// CurrentRequest is the one place that decides which content is the user's
// current request, which a compaction must never lose: the invocation's
// content when the user wrote it, else the newest content of cs the user
// wrote. Attachments alone are a request, never passed over for an older
// text. index is where it lies in cs, -1 when cs does not hold it; c is nil
// when there is none.
func CurrentRequest(invocationUser *genai.Content, cs []*genai.Content) (c *genai.Content, index int) {
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

// sameRequest compares c and u by value, empty parts skipped: ADK rebuilds
// contents from its log as copies without empty parts.
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
			!SameAttachment(p, q) {
			return false
		}
		i++
		j++
	}
}

// blankPart reports whether p is nil or empty, as ADK drops; the common
// fields first, so the reflective test, run on every call with a summary,
// copies only parts that are probably blank.
func blankPart(p *genai.Part) bool {
	if p == nil {
		return true
	}
	if p.Text != "" || p.FunctionCall != nil || p.FunctionResponse != nil || p.InlineData != nil || p.FileData != nil {
		return false
	}
	return reflect.ValueOf(*p).IsZero()
}

// LatestUserText is the text of the user's current request (CurrentRequest),
// "" when it has none.
func LatestUserText(invocationUser *genai.Content, cs []*genai.Content) string {
	c, _ := CurrentRequest(invocationUser, cs)
	return textcut.ContentText(c)
}

// RequestAttachments returns c's attachments as new parts sharing the media
// (never copied: an image may be megabytes) but no other field.
func RequestAttachments(c *genai.Content) []*genai.Part {
	var out []*genai.Part
	for _, p := range pairs.Parts(c) {
		if IsAttachment(p) {
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

// SameAttachment reports whether two parts carry the same media (both none
// included).
func SameAttachment(p, q *genai.Part) bool {
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

// AttachmentLine names an attachment in the quoted request, even where the
// media is not sent with it.
func AttachmentLine(p *genai.Part) string {
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
