package core

import (
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/convo"
)

// The user's request a summary stands for (the rules of which content is
// the request are core/internal/convo's).

// attachmentsNote follows the quote when the summary message carries the
// request's attachments, so the model knows whose they are.
const attachmentsNote = "[The attachments of the user's request follow.]"

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
	c, i := convo.CurrentRequest(user, t.raw)
	if i >= cut {
		return nil
	}
	return c
}
