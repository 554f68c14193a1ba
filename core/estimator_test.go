package core

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/adk-contextguard/contextguard/core/coretest"
)

// byteCounter is a TokenCounter that counts one token per byte (about four
// times the built-in estimator's count, so a count made with the wrong
// estimator shows) and records the texts it was asked about.
type byteCounter struct {
	mu    sync.Mutex
	texts []string
}

func (c *byteCounter) CountTokens(s string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.texts = append(c.texts, s)
	return len(s)
}

// reset forgets the texts counted so far.
func (c *byteCounter) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.texts = nil
}

// counted reports whether a text holding sub was counted since the last
// reset.
func (c *byteCounter) counted(sub string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range c.texts {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// TestTurnEstimator_RecoveryCountsWithTheUsersTokenCounter: the overflow
// path builds its estimator as BeforeModelCallback does, so with
// WithTokenCounter the rejected request is counted by the user's counter,
// with and without a recovery model, and the next call's calibration
// compares the provider's count with a count of the same kind.
func TestTurnEstimator_RecoveryCountsWithTheUsersTokenCounter(t *testing.T) {
	tests := []struct {
		name     string
		recovery bool
	}{
		{"with a recovery model", true},
		{"without a recovery model", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tc := &byteCounter{}
			var events []CompactionEvent
			g := newGuard(nil, WithLogger((&logBuffer{}).logger()),
				WithOnCompaction(func(_ context.Context, e CompactionEvent) { events = append(events, e) }))
			opts := []AgentOption{WithTokenCounter(tc)}
			if tt.recovery {
				opts = append(opts, WithRecoveryModel(&fakeLLM{name: "gemini-2.5-flash",
					reply: func(context.Context, *Request) (string, error) { return "recovered", nil }}))
			}
			raw := append(coretest.History(20, 300), userMsg("LATEST please fix the build"))
			// The window fits the request by the user's count, which the
			// provider then exceeds by 1,000 tokens.
			est, _ := agentConfigFor("a", `Add("a")`, fixedSummary("x"), opts).estimator("gemini-2.5-flash")
			n := requestTokens(est, engineReq(request(raw...)))
			g.addModel("a", fixedSummary("THE-SUMMARY"), append(opts, WithMaxTokens(n))...)
			require.NoError(t, g.Err())
			ctx := newFakeCtx("a").withUser("LATEST please fix the build")
			tc.reset()

			_, err := g.onModelError(ctx, request(raw...), &coretest.OverflowError{Style: coretest.ErrorGemini, Tokens: n + 1_000, Limit: n})
			require.NoError(t, err)
			assert.True(t, tc.counted("OLD-U0"), "the rejected request's history was counted by the user's counter")
			if tt.recovery {
				assert.True(t, tc.counted("THE-SUMMARY"), "the recovery compaction's summary was counted by the user's counter")
				return
			}

			// The next call compacts first, calibrated by the provider's
			// count against the user's count of the rejected request: the
			// counts agree to within the 1,000 tokens the provider added.
			_, err = g.beforeModel(ctx, request(raw...))
			require.NoError(t, err)
			require.Len(t, events, 1)
			assert.InDelta(t, n+1_000, events[0].TokensBefore, float64(n)*0.05,
				"the calibration compares counts of the same kind")
		})
	}
}
