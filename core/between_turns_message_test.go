package core

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"
)

// costlyMessageExtra is what the provider of TestBetweenTurns_MessageCost
// charges a costly message beyond the guard's estimate of it (as a provider
// that bills an attachment by its encoded size does), in the window of
// betweenTurnsWindow: enough that a request under the trigger by the
// between-turns margin is over it with one more such message.
const costlyMessageExtra = 1_700

// TestBetweenTurns_MessageCost plays three runs whose user messages the
// provider charges as the scenario says, each run one model call that
// reports the provider's count and ends with the agent's answer
// (AfterRun). After the third run the session is at about 5,100 tokens
// of the 6,400 trigger: a message that costs what the last two did
// (1,700 more than its estimate) brings the next request past the
// trigger, so the guard compacts between the turns; a message judged by
// its estimate does not. One costly message alone (a document pasted once)
// does not make the guard judge the next one as costly, nor does the
// agent's long answer that the next request holds before the message; a
// provider that reports no count measures nothing.
func TestBetweenTurns_MessageCost(t *testing.T) {
	tests := []struct {
		name string
		// replyTokens is about the estimate of the agent's answer in the
		// first run (a long report), which the provider charges at its
		// estimate; costly says which runs' messages cost
		// costlyMessageExtra more.
		replyTokens int
		costly      [3]bool
		noUsage     bool
		wantBetween bool
	}{
		{name: "every message costs far more than its estimate: compacted between turns",
			replyTokens: 0, costly: [3]bool{true, true, true}, wantBetween: true},
		{name: "a long answer, then one costly message: the next one is judged by its estimate",
			replyTokens: 2 * costlyMessageExtra, costly: [3]bool{false, false, true}},
		{name: "the same session without the provider's counts: nothing measured",
			replyTokens: 0, costly: [3]bool{true, true, true}, noUsage: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var events []CompactionEvent
			logs := &logBuffer{}
			g := newGuard(NewCrushRegistry(WithRegistryLogger(logs.logger())), WithLogger(logs.logger()),
				WithOnCompaction(func(_ context.Context, ev CompactionEvent) { events = append(events, ev) }))
			g.addModel("a", fixedSummary("SUMMARY of the screenshots so far."), WithMaxTokens(betweenTurnsWindow))
			require.NoError(t, g.Err())
			ctx := newFakeCtx("a")

			var raw []*genai.Content
			extra, real := 0, 0
			for run := range 3 {
				msg := fmt.Sprintf("run %d: what does this screenshot show?", run)
				ctx.withUser(msg)
				raw = append(raw, ctx.user)
				if tt.costly[run] {
					extra += costlyMessageExtra
				}
				req := request(raw...)
				_, err := g.beforeModel(ctx, req)
				require.NoError(t, err)
				require.Empty(t, events, "run %d: its own request is under the trigger", run)
				real = requestTokens(testEst, engineReq(request(raw...))) + extra
				if !tt.noUsage {
					_, err = g.afterModel(ctx, &Response{UsageMetadata: &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: int32(real)}}, nil)
					require.NoError(t, err)
				}
				answer := fmt.Sprintf("run %d: it shows the build page.", run)
				if run == 0 {
					answer += " " + fillerOfTokens(t, tt.replyTokens)
				}
				final := modelMsg(answer)
				g.AfterRun(ctx, RunEnd{State: ctx.state, Final: final, FinalAuthor: "a", Before: ctx.user})
				raw = append(raw, final)
				if run < 2 {
					require.Empty(t, events, "run %d: far from the trigger", run)
				}
			}
			lim := newLimits(betweenTurnsWindow)
			next := scaleSat(testEst.content(userMsg("run 3: what does this screenshot show?")), maxCorrection)
			require.Less(t, scaleSat(real+next, betweenTurnsMargin), lim.threshold,
				"test setup: judged by its estimate, the next message leaves the request under the trigger")
			require.Greater(t, real+costlyMessageExtra, lim.threshold,
				"test setup: a costly next message takes it past the trigger")

			if !tt.wantBetween {
				assert.Empty(t, events, "no compaction between turns")
				return
			}
			require.Len(t, events, 1, "one compaction between turns")
			assert.Equal(t, RanBetweenTurns, events[0].Ran)
			assert.Equal(t, ReasonTokens, events[0].Reason)
		})
	}
}

// fillerOfTokens is filler text the test estimator counts at least n
// tokens, and at most a few more ("" for 0).
func fillerOfTokens(t *testing.T, n int) string {
	t.Helper()
	if n <= 0 {
		return ""
	}
	for size := n; size < 100*n; size += 16 {
		if s := filler(size, 0); testEst.text(s) >= n {
			return s
		}
	}
	t.Fatalf("test setup: no filler of %d tokens", n)
	return ""
}
