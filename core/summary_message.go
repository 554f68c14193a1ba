package core

import (
	"strings"

	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/convo"
	"github.com/adk-contextguard/contextguard/core/internal/pairs"
	"github.com/adk-contextguard/contextguard/core/internal/sat"
	"github.com/adk-contextguard/contextguard/core/internal/textcut"
)

// The summary message: the one user message that stands for the summarized
// contents, with the user's request quoted within its bound.

const (
	summaryHeader = "[Conversation summary: the earlier part of this conversation was compacted to fit the context window. It is reference material about work already done.]"
	summaryFooter = "[End of summary]"
	// recallNote tells a model that has the recall tool that what the
	// summary left out can be fetched (ARCHITECTURE.md, Recall).
	recallNote = "[The full earlier conversation is recallable: call " + RecallToolName + " with words or a phrase (an error message, a file name, a value) to get the exact excerpts, or with the call_id of a removed tool result to get it whole.]"
	// continuationLead frames the user's request as reference, not a new task.
	continuationLead = "[Continuation: the user's request at the time of compaction is quoted below for reference. Continue the current task from where it stopped; do not redo finished steps and do not ask the user to repeat anything.]"
	// attachmentsNote follows the quote when the summary message carries the
	// request's attachments, so the model knows whose they are.
	attachmentsNote = "[The attachments of the user's request follow.]"
)

// isSummaryMessage reports whether c is a summary message the guard made.
func isSummaryMessage(c *genai.Content) bool {
	return c != nil && c.Role == genai.RoleUser && len(c.Parts) > 0 && c.Parts[0] != nil &&
		strings.HasPrefix(c.Parts[0].Text, summaryHeader)
}

// summaryContent builds the one user message that stands for the summarized
// contents: header, summary, with recall a note that the earlier
// conversation can be recalled, and the continuation quoting the user's
// request, with its non-nil attachments as parts after the text so the
// model sees them as the user sent them.
func summaryContent(summary, userRequest string, recall bool, attachments ...*genai.Part) *genai.Content {
	var b strings.Builder
	b.Grow(len(summaryHeader) + len(summary) + len(userRequest) + len(continuationLead) + len(attachmentsNote) + len(recallNote) + 64)
	b.WriteString(summaryHeader)
	b.WriteString("\n\n")
	b.WriteString(strings.TrimSpace(summary))
	b.WriteString("\n\n")
	b.WriteString(summaryFooter)
	if recall {
		b.WriteString("\n")
		b.WriteString(recallNote)
	}
	parts := make([]*genai.Part, 1, 1+len(attachments))
	for _, p := range attachments {
		if p != nil {
			parts = append(parts, p)
		}
	}
	n := len(parts) - 1
	if userRequest != "" || n > 0 {
		b.WriteString("\n\n")
		b.WriteString(continuationLead)
		b.WriteString("\n<user_request>\n")
		b.WriteString(userRequest)
		b.WriteString("\n</user_request>")
		if n > 0 {
			b.WriteString("\n")
			b.WriteString(attachmentsNote)
		}
	}
	parts[0] = &genai.Part{Text: b.String()}
	return &genai.Content{Role: genai.RoleUser, Parts: parts}
}

// continuationText is the request c as the continuation quotes it: its text,
// then one line naming each attachment.
func continuationText(c *genai.Content) string {
	text := textcut.ContentText(c)
	var b strings.Builder
	b.WriteString(text)
	for _, p := range pairs.Parts(c) {
		if convo.IsAttachment(p) {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(convo.AttachmentLine(p))
		}
	}
	return textcut.Sanitize(b.String())
}

// requestHeadBytes is how much of a request's text must appear in a stored
// continuation for it to count as quoting the request: a bounded
// continuation always keeps at least this much of the head.
const requestHeadBytes = 16

// quotesRequest reports whether a stored continuation quotes the user
// message c: the start of its text appears in it, or, for a message of
// attachments alone, the line naming its first attachment.
func quotesRequest(stored string, c *genai.Content) bool {
	head := strings.TrimSpace(textcut.Prefix(textcut.Sanitize(textcut.ContentText(c)), requestHeadBytes))
	if head == "" {
		for _, p := range pairs.Parts(c) {
			if convo.IsAttachment(p) {
				head = textcut.Sanitize(convo.AttachmentLine(p))
				break
			}
		}
	}
	return head == "" || strings.Contains(stored, head)
}

// Bounds of the quoted request.
const (
	// continuationShare: the quoted request may take 1/continuationShare of
	// the room under the threshold; the other half is the summary's and the
	// newest contents'.
	continuationShare = 2
	// minContinuationTokens is the least a request is quoted with, however
	// full the window: its head and tail still say what the task is.
	minContinuationTokens = 64
	// minContinuationBytes is the smallest cut textcut.Middle is asked for.
	minContinuationBytes = 64
)

// continuationBound is the most calibrated tokens the quoted request may
// take in a request under threshold.
func continuationBound(m measure, threshold int) int {
	m = m.Calibrated()
	return max((threshold-m.Cal.Scale(m.Fixed))/continuationShare, minContinuationTokens)
}

// boundContinuation quotes s in full when it fits continuationBound, else
// its head and tail.
func boundContinuation(m measure, threshold int, s string) string {
	maxTokens := continuationBound(m, threshold)
	m = m.Calibrated()
	if m.Text(s) <= maxTokens {
		return s
	}
	n := min(maxTokens*textcut.BytesPerTokenGuess, len(s))
	for n > minContinuationBytes {
		cut := textcut.Middle(s, n)
		if m.Text(cut) <= maxTokens {
			return cut
		}
		n = sat.MulDiv(n, textcut.RetryPercent, 100)
	}
	return textcut.Middle(s, minContinuationBytes)
}

// message is summaryContent with the attachments of cur (the user's request
// when the summary stands for it, else nil), memoized per session so the
// steady state neither rebuilds nor recounts it.
func (m *summaryMemo) message(summary, request string, recall bool, cur *genai.Content) *genai.Content {
	atts := convo.RequestAttachments(cur)
	if m.msg == nil || m.summary != summary || m.request != request || m.recall != recall || !carries(m.msg, atts) {
		m.summary, m.request, m.recall = summary, request, recall
		m.msg = summaryContent(summary, request, recall, atts...)
	}
	return m.msg
}

// carries reports whether the summary message msg carries exactly the
// attachments atts after its text.
func carries(msg *genai.Content, atts []*genai.Part) bool {
	if len(msg.Parts) != 1+len(atts) {
		return false
	}
	for i, p := range atts {
		if !convo.SameAttachment(msg.Parts[1+i], p) {
			return false
		}
	}
	return true
}
