package plugintest

import (
	"encoding/json"
	"fmt"
	"strings"

	"google.golang.org/adk/model"
	"google.golang.org/genai"
)

// What the root's tests read of the engine from the outside, as an
// application or a later version of the guard would: the session-state keys
// the engine writes (the persisted format, ARCHITECTURE.md, Session state)
// and the messages it puts into requests. They are the engine's (module
// core) values, repeated here on purpose: a change to either is a change of
// the persisted format, which these tests then catch.
const (
	stateKeyPrefix    = "__context_guard_"
	keySummary        = stateKeyPrefix + "summary_"
	keyRealTokens     = stateKeyPrefix + "real_tokens_"
	keyCompactions    = stateKeyPrefix + "compactions_"
	keyWindow         = stateKeyPrefix + "window_"
	keyLastTokens     = stateKeyPrefix + "last_tokens_"
	keyThreshold      = stateKeyPrefix + "threshold_"
	keyCompactedAt    = stateKeyPrefix + "last_compaction_at_"
	keyCompactReason  = stateKeyPrefix + "last_compaction_reason_"
	keyCompactRequest = stateKeyPrefix + "compact_request_"
)

// The texts the engine puts into requests (core's compaction_utils.go and
// recovery.go).
const (
	summaryHeader    = "[Conversation summary: the earlier part of this conversation was compacted to fit the context window. It is reference material about work already done.]"
	continuationLead = "[Continuation: the user's request at the time of compaction is quoted below for reference. Continue the current task from where it stopped; do not redo finished steps and do not ask the user to repeat anything.]"
	cutCallNote      = "[contextguard: my response was cut at the output-token limit before it was complete, so the tool call it started was not run. The conversation will be compacted; ask me to continue.]"
)

// contentText is the text of c's non-thought text parts, one per line.
func contentText(c *genai.Content) string {
	if c == nil {
		return ""
	}
	var parts []string
	for _, p := range c.Parts {
		if p != nil && p.Text != "" && !p.Thought {
			parts = append(parts, p.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// compactJSON is v as JSON, for finding the markers a tool result carries.
func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// quotedRequest is the continuation's quote in the request's summary
// message, "" when there is none.
func quotedRequest(req *model.LLMRequest) string {
	if req == nil || len(req.Contents) == 0 {
		return ""
	}
	text := contentText(req.Contents[0])
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

// filler is size bytes of token-dense text (identifiers and numbers, about
// 2.5 bytes a token), different for each seed.
func filler(size, seed int) string {
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "id%d=%x ", (seed*7919+i*31)%997, (seed+1)*(i+3)*2654435761%65521)
	}
	return b.String()[:size]
}
