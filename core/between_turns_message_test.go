package core

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/coretest"
	"github.com/adk-contextguard/contextguard/core/internal/calib"
	"github.com/adk-contextguard/contextguard/core/internal/sat"
	"github.com/adk-contextguard/contextguard/core/internal/state"
	"github.com/adk-contextguard/contextguard/core/internal/window"
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
			lim := window.New(betweenTurnsWindow)
			next := sat.Scale(testEst.Content(userMsg("run 3: what does this screenshot show?")), calib.MaxCorrection)
			require.Less(t, sat.Scale(real+next, betweenTurnsMargin), lim.Threshold,
				"test setup: judged by its estimate, the next message leaves the request under the trigger")
			require.Greater(t, real+costlyMessageExtra, lim.Threshold,
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
		if s := coretest.Filler(size, 0); testEst.Text(s) >= n {
			return s
		}
	}
	t.Fatalf("test setup: no filler of %d tokens", n)
	return ""
}

// TestMessageMeasure_Arming: a model call that starts a turn arms the
// measure with the provider's count of the request before plus the
// calibrated answer in between, only when its request goes out as built
// and extends the one the provider counted; a call that does not start a
// turn leaves a pending measure as it is.
func TestMessageMeasure_Arming(t *testing.T) {
	answer := modelMsg("the build page shows a failing test.")
	turnStart := []*genai.Content{userMsg("what does this show?"), answer, userMsg("and this one?")}
	toolStep := []*genai.Content{userMsg("run the tests"), callMsg("run_tests", nil), respMsg("run_tests", map[string]any{"ok": false})}
	pending := messageMeasure{from: 900, est: 40, compactions: 1, last: 500}
	tests := []struct {
		name      string
		raw       []*genai.Content
		real      int
		unmatched bool
		compacted bool
		start     messageMeasure
		wantFrom  bool
	}{
		{name: "a turn's first request extending the counted one: armed", raw: turnStart, real: 1_000, wantFrom: true},
		{name: "the request does not extend the one counted (after a compaction or a recovery): not armed", raw: turnStart, real: 1_000, unmatched: true},
		{name: "the call compacts: what it sends is not what was built", raw: turnStart, real: 1_000, compacted: true},
		{name: "the provider counted nothing", raw: turnStart},
		{name: "a new turn drops an older pending measure", raw: turnStart, start: pending, unmatched: true},
		{name: "a tool step leaves the pending measure", raw: toolStep, real: 1_000, start: pending},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tu := newTestTurn(request(tt.raw...), state.Agent{RealTokens: tt.real, LastEstimate: 30, Compactions: 2}, quietLog)
			tu.Cal = calib.Calibration{Factor: 2}
			tu.prefix.matched = !tt.unmatched
			s := step{next: state.Agent{LastEstimate: 77, Compactions: 2}}
			if tt.compacted {
				s.event = &CompactionEvent{}
			}
			m := tt.start
			m.observe(tu.prev, tu.measure, tu.prefix.matched && s.event == nil && s.err == nil, s.next)
			assert.Equal(t, tt.start.last, m.last, "nothing settled")
			switch {
			case tt.wantFrom:
				assert.Equal(t, messageMeasure{from: tt.real + 2*testEst.Content(answer), est: 77, compactions: 2}, m)
			case startsTurn(tt.raw):
				assert.Zero(t, m.from, "nothing pending")
			default:
				assert.Equal(t, tt.start, m, "unchanged")
			}
		})
	}
}

// TestMessageMeasure_Settle: a pending measure settles from the provider's
// count of the very request it armed on (same last estimate, same
// compaction counter), shifting the last cost to the one before; the cost
// the next message is judged at is the smaller of the two.
func TestMessageMeasure_Settle(t *testing.T) {
	armed := messageMeasure{from: 1_000, est: 77, compactions: 2, last: 600, before: 900}
	tests := []struct {
		name     string
		prev     state.Agent
		want     messageMeasure
		wantCost int
	}{
		{name: "the count of the armed request", prev: state.Agent{RealTokens: 1_800, LastEstimate: 77, Compactions: 2},
			want: messageMeasure{est: 77, compactions: 2, last: 800, before: 600}, wantCost: 600},
		{name: "a count below the one before measures no cost", prev: state.Agent{RealTokens: 700, LastEstimate: 77, Compactions: 2},
			want: messageMeasure{est: 77, compactions: 2, last: 0, before: 600}, wantCost: 0},
		{name: "the count of another request", prev: state.Agent{RealTokens: 1_800, LastEstimate: 78, Compactions: 2}, want: armed, wantCost: 600},
		{name: "a compaction came between", prev: state.Agent{RealTokens: 1_800, LastEstimate: 77, Compactions: 3}, want: armed, wantCost: 600},
		{name: "no count yet", prev: state.Agent{LastEstimate: 77, Compactions: 2}, want: armed, wantCost: 600},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := armed
			m.settle(tt.prev)
			assert.Equal(t, tt.want, m)
			assert.Equal(t, tt.wantCost, m.cost(), "the smaller of the last two costs")
		})
	}
	one := messageMeasure{last: 5_000}
	assert.Zero(t, one.cost(), "one measured turn alone says nothing of the next")
}
