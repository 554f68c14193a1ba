package core

import (
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/convo"
)

// The user's request a summary stands for (the rules of which content is
// the request are core/internal/convo's).

// coveredRequest is the user's current request when a summary cutting the
// contents at cut stands for it (the request lies before cut, or nowhere in
// the contents), else nil; the summary message carries its attachments.
func (v *callView) coveredRequest(cut int) *genai.Content {
	if v.betweenTurns {
		// The next turn's request comes after the summary, verbatim.
		return nil
	}
	c, i := convo.CurrentRequest(v.user, v.Raw)
	if i >= cut {
		return nil
	}
	return c
}

// boundedUserRequest is the continuation's text: the user's current request
// with its attachments named, bounded (boundContinuation) so that a request
// larger than the window still leaves room for the summary.
func (v *callView) boundedUserRequest() string {
	return boundContinuation(v.measure, v.lim.Threshold, continuationText(v.coveredRequest(len(v.Raw))))
}
