package core

import (
	"google.golang.org/genai"
)

// The threshold strategy: everything since the last summary is summarized
// into one message once the request reaches the trigger.

// compactThreshold is the threshold strategy (ARCHITECTURE.md, Strategies): summarize the
// previous summary plus everything after the watermark, replace the request's
// contents with one summary message, reset calibration and persist.
func (g *Guard) compactThreshold(t *turn, reason string) (guardState, error) {
	c, next, err := g.beginCompaction(t, StrategyThreshold, reason)
	if c == nil {
		return next, err
	}
	return g.finishCompaction(t, c, g.fullSummary(t, c))
}

// fullSummary summarizes everything the compaction may cover and makes the
// summary message the request's only content (the threshold behaviour).
func (g *Guard) fullSummary(t *turn, c *compaction) outcome {
	o := g.summarizeSpan(t, c, c.cov, true, func(summary string) []*genai.Content {
		return []*genai.Content{summaryMessage(t, summary, c.userReq, coveredRequest(t, c.cov))}
	})
	o.watermark = max(c.cov, 1)
	return o
}
