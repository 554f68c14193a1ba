package integration

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/session"

	"github.com/adk-contextguard/contextguard"
)

// replicaPair is two runner replicas of one service on one database: each
// has its own database handle, session service and guard; they share the
// models, which stand for the remote provider.
type replicaPair struct {
	replicas [2]*replica
	svcs     [2]*dbHandle
	llm      *agentModel
	summ     *summarizerModel
	log      *compactionLog
	logs     *logRecorder
}

func newReplicaPair(t *testing.T, open opener, window, stepsPerTurn, outputBytes int) *replicaPair {
	p := &replicaPair{
		llm:  newAgentModel(stepsPerTurn, window),
		summ: &summarizerModel{},
		log:  &compactionLog{},
		logs: &logRecorder{},
	}
	for i, name := range []string{"replica-a", "replica-b"} {
		p.svcs[i] = open(t)
		p.replicas[i] = newReplica(t, replicaConfig{name: name, svc: p.svcs[i].svc, agentLLM: p.llm, summarizer: p.summ,
			window: window, outputBytes: outputBytes, log: p.log, logs: p.logs})
	}
	return p
}

// turn runs one user turn on replica i, retrying stale-session errors.
func (p *replicaPair) turn(ctx context.Context, i int, sessionID, salt string, turn int) (int, error) {
	p.log.setTurn(turn)
	return runTurnWithRetry(ctx, p.replicas[i], p.svcs[i].svc, sessionID, userMessage(salt, turn), marker(salt, turn), agent.RunConfig{})
}

// checkRequests asserts every request fits the window by the ground truth,
// and that no request both carries a summary and resends a user message
// that summary covers (the request quoted in the continuation excepted).
func checkRequests(t *testing.T, recs []agentRecord, window int) int {
	t.Helper()
	maxTokens := 0
	for i, r := range recs {
		maxTokens = max(maxTokens, r.Tokens)
		assert.LessOrEqual(t, r.Tokens, window, "request %d exceeds the window by the ground truth", i)
		if !strings.HasPrefix(r.FirstText, "[Conversation summary") {
			continue
		}
		rest := withoutQuotedRequest(r.Text)
		for _, tag := range summarizedRe.FindAllString(r.FirstText, -1) {
			assert.NotContains(t, rest, markerOfTag(tag), "request %d carries a summary and the user message it covers", i)
		}
	}
	return maxTokens
}

// withoutQuotedRequest removes the user request the guard quotes in its
// summary message.
func withoutQuotedRequest(s string) string {
	i := strings.Index(s, "<user_request>")
	j := strings.Index(s, "</user_request>")
	if i < 0 || j < i {
		return s
	}
	return s[:i] + s[j:]
}

// checkSummaryChain asserts that the summaries form a chain: summary k
// was made from summary k-1 (handed over through the session, whichever
// replica made it) plus a new span of conversation that no earlier summary
// covered, and every user marker covered by the final summary was
// summarized in exactly one compaction's new span.
func checkSummaryChain(t *testing.T, inputs []string, finalSummary string) map[string]int {
	t.Helper()
	inSpans := map[string]int{}
	var covered []string // markers covered by the previous summary
	for k, in := range inputs {
		span, ok := spanMarkers(in)
		require.True(t, ok, "summarizer input %d has no <conversation> block", k)
		for _, m := range span {
			inSpans[m]++
			assert.NotContains(t, covered, m, "compaction %d summarizes %s again", k+1, m)
		}
		var handed []string
		if i, j := strings.Index(in, "<previous_summary>"), strings.Index(in, "</previous_summary>"); i >= 0 && j > i {
			for _, tag := range summarizedRe.FindAllString(in[i:j], -1) {
				handed = append(handed, markerOfTag(tag))
			}
		}
		slices.Sort(handed)
		want := slices.Clone(covered)
		slices.Sort(want)
		assert.Equal(t, want, uniq(handed), "compaction %d was handed the previous summary", k+1)
		for _, tag := range summarizedRe.FindAllString(summaryOf(in), -1) {
			if m := markerOfTag(tag); !slices.Contains(covered, m) {
				covered = append(covered, m)
			}
		}
	}
	var final []string
	for _, tag := range summarizedRe.FindAllString(finalSummary, -1) {
		final = append(final, markerOfTag(tag))
	}
	assert.ElementsMatch(t, covered, uniq(final), "the stored summary is the last one made")
	for _, m := range covered {
		assert.Equal(t, 1, inSpans[m], "%s is in exactly one compaction's new span", m)
	}
	return inSpans
}

// TestTwoReplicasShareOneSession alternates the turns of one session
// between two replicas on one database for 30 turns, with compactions in
// between, and checks that the summaries hand over cleanly between them.
func TestTwoReplicasShareOneSession(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open opener) {
		const (
			window       = 8_000
			stepsPerTurn = 2
			outputBytes  = 3_000
			turns        = 30
			sessionID    = "two-replicas"
		)
		ctx := t.Context()
		salt := t.Name()
		p := newReplicaPair(t, open, window, stepsPerTurn, outputBytes)
		createSession(t, p.svcs[0].svc, sessionID)

		stale := 0
		for turn := 1; turn <= turns; turn++ {
			n, err := p.turn(ctx, turn%2, sessionID, salt, turn)
			stale += n
			require.NoError(t, err, "turn %d", turn)
		}

		events := p.log.Events()
		byReplica := map[string]int{}
		byRun := map[contextguard.CompactionRun]int{}
		for _, c := range events {
			byReplica[c.Replica]++
			byRun[c.Event.Ran]++
			assert.False(t, c.Event.Fallback, "compaction at turn %d used the fallback: %s", c.Turn, c.Event.FallbackReason)
		}
		assert.GreaterOrEqual(t, len(events), 5, "compactions in %d turns", turns)
		assert.Positive(t, byReplica["replica-a"], "replica a compacted")
		assert.Positive(t, byReplica["replica-b"], "replica b compacted")
		assert.Equal(t, len(events), p.summ.Calls(), "one summarizer call per compaction")

		for i := range p.svcs {
			s := getSession(t, p.svcs[i].svc, sessionID)
			assert.Equal(t, len(events), stateInt(t, s, "compactions"), "compaction counter read through replica %d", i)
		}
		s := getSession(t, p.svcs[0].svc, sessionID)
		finalSummary, ok := rawState(t, s, stateKey("summary")).(string)
		require.True(t, ok)
		inSpans := checkSummaryChain(t, p.summ.Inputs(), finalSummary)

		// Nothing before the last compaction's turn is left out of the
		// summary, and nothing after it was summarized.
		last := events[len(events)-1].Turn
		for turn := 1; turn <= turns; turn++ {
			m := marker(salt, turn)
			switch {
			case turn < last:
				assert.Equal(t, 1, inSpans[m], "turn %d (before the last compaction at turn %d) is summarized once", turn, last)
			case turn > last:
				assert.Zero(t, inSpans[m], "turn %d (after the last compaction) was not summarized", turn)
			}
			assert.Equal(t, 1, countUserMessages(s, m), "turn %d's user message is stored once", turn)
		}

		maxTokens := checkRequests(t, p.llm.Records(), window)
		noSkippedSummary(t, p.logs)
		t.Logf("turns=%d compactions=%d (a %d, b %d; between turns %d, inline %d) summarizer calls=%d stale-session retries=%d model calls=%d max request=%d/%d tokens (o200k)",
			turns, len(events), byReplica["replica-a"], byReplica["replica-b"], byRun[contextguard.RanBetweenTurns], byRun[contextguard.RanInline],
			p.summ.Calls(), stale, len(p.llm.Records()), maxTokens, window)
	})
}

// countUserMessages counts the user events of s carrying mark.
func countUserMessages(s session.Session, mark string) int {
	n := 0
	for ev := range s.Events().All() {
		if ev.Author == "user" && strings.Contains(contentText(ev.Content), mark) {
			n++
		}
	}
	return n
}

// TestTwoReplicasRetryStaleSession makes ADK's stale-session error happen
// for real: while replica A waits for the model in its turn, replica B runs
// the next turn of the same session. A's next AppendEvent then finds the
// session row newer than its copy and fails; runTurnWithRetry re-fetches
// the session and resumes A's invocation without storing its message
// twice. The conversation then goes on through compactions as usual.
func TestTwoReplicasRetryStaleSession(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open opener) {
		const (
			window       = 8_000
			stepsPerTurn = 2
			outputBytes  = 3_000
			turns        = 10
			sessionID    = "stale"
		)
		ctx := t.Context()
		salt := t.Name()
		p := newReplicaPair(t, open, window, stepsPerTurn, outputBytes)
		createSession(t, p.svcs[0].svc, sessionID)

		// Turn 1 on A, with no compaction yet: calls 0..2. Turn 2 on A: its
		// first model call (call 3) lets B run turn 3 to the end first.
		var bRetries int
		var bErr error
		interleaved := false
		p.llm.beforeReply = func(call int) {
			if call != stepsPerTurn+1 || interleaved {
				return
			}
			interleaved = true
			bRetries, bErr = p.turn(ctx, 1, sessionID, salt, 3)
		}
		_, err := p.turn(ctx, 0, sessionID, salt, 1)
		require.NoError(t, err)
		retries, err := p.turn(ctx, 0, sessionID, salt, 2)
		require.NoError(t, err, "turn 2 recovers from the stale session")
		require.NoError(t, bErr, "turn 3 on replica b")
		require.True(t, interleaved)
		assert.Equal(t, 1, retries, "replica a met one stale-session error and retried once")
		assert.Zero(t, bRetries, "replica b was never stale")
		p.llm.beforeReply = nil
		for _, c := range p.log.Events() {
			// State written by A's guard on the call whose event was lost
			// would be lost with it; the scenario keeps A under the trigger.
			require.NotEqual(t, "replica-a", c.Replica, "replica a compacted during the interleaving")
		}
		interleavedCompactions := len(p.log.Events())

		for turn := 4; turn <= turns; turn++ {
			n, err := p.turn(ctx, turn%2, sessionID, salt, turn)
			require.NoError(t, err, "turn %d", turn)
			retries += n
		}
		assert.Equal(t, 1, retries, "stale-session retries over the whole run")

		events := p.log.Events()
		assert.NotEmpty(t, events, "the conversation compacted after the retry")
		assert.Equal(t, len(events), p.summ.Calls(), "one summarizer call per compaction")
		s := getSession(t, p.svcs[1].svc, sessionID)
		assert.Equal(t, len(events), stateInt(t, s, "compactions"))
		for turn := 1; turn <= turns; turn++ {
			assert.Equal(t, 1, countUserMessages(s, marker(salt, turn)), "turn %d's user message is stored once", turn)
		}
		finalSummary, ok := rawState(t, s, stateKey("summary")).(string)
		require.True(t, ok)
		checkSummaryChain(t, p.summ.Inputs(), finalSummary)
		maxTokens := checkRequests(t, p.llm.Records(), window)
		noSkippedSummary(t, p.logs)
		t.Logf("stale-session retries=%d compactions=%d (%d by replica b inside a's stale turn) summarizer calls=%d max request=%d/%d tokens (o200k)",
			retries, len(events), interleavedCompactions, p.summ.Calls(), maxTokens, window)
	})
}

// TestTwoReplicasCompactBetweenTurns: replica A plays turns until the run
// that leaves the session near the trigger, after which it compacts
// between turns and persists the compaction with its session service (an
// event appended to the database). The next turn runs on replica B, which
// never served the session: its first request already starts with A's
// summary, with the user's new message after it, and no model call of B
// compacts; no stale-session error occurs on either.
func TestTwoReplicasCompactBetweenTurns(t *testing.T) {
	forEachBackend(t, func(t *testing.T, open opener) {
		const (
			window       = 8_000
			stepsPerTurn = 1
			// outputBytes keeps a turn's growth under the margin the guard
			// projects the next turn with, so no model call in a turn
			// reaches the trigger before the run that leaves the session
			// near it ends.
			outputBytes = 500
			maxTurns    = 40
			sessionID   = "between-turns"
		)
		ctx := t.Context()
		salt := t.Name()
		p := newReplicaPair(t, open, window, stepsPerTurn, outputBytes)
		createSession(t, p.svcs[0].svc, sessionID)

		turn := 0
		for turn < maxTurns && len(p.log.Events()) == 0 {
			turn++
			p.log.setTurn(turn)
			require.NoError(t, p.replicas[0].runTurn(ctx, sessionID, userMessage(salt, turn), agent.RunConfig{}), "turn %d on replica a", turn)
		}
		events := p.log.Events()
		require.Len(t, events, 1, "the session came near the trigger within %d turns", maxTurns)
		require.Equal(t, "replica-a", events[0].Replica)
		require.Equal(t, contextguard.RanBetweenTurns, events[0].Event.Ran, "replica a compacted after its run, not in a model call")
		stored := getSession(t, p.svcs[1].svc, sessionID)
		assert.Equal(t, 1, stateInt(t, stored, "compactions"), "the compaction is in the database")

		before := len(p.llm.Records())
		turn++
		p.log.setTurn(turn)
		require.NoError(t, p.replicas[1].runTurn(ctx, sessionID, userMessage(salt, turn), agent.RunConfig{}), "turn %d on replica b: no stale session", turn)
		recs := p.llm.Records()
		require.Greater(t, len(recs), before)
		first := recs[before]
		assert.True(t, strings.HasPrefix(first.FirstText, "[Conversation summary"), "replica b's first request starts with replica a's summary")
		assert.Contains(t, withoutQuotedRequest(first.Text), marker(salt, turn), "and holds the user's new message")
		assert.NotContains(t, first.FirstText, "<user_request>", "which the summary does not quote: it follows it")
		for _, c := range p.log.Events()[1:] {
			assert.NotEqual(t, contextguard.RanInline, c.Event.Ran, "no model call compacted (turn %d, %s)", c.Turn, c.Replica)
		}
		assert.Equal(t, len(p.log.Events()), p.summ.Calls(), "one summarizer call per compaction")
		checkRequests(t, recs, window)
		noSkippedSummary(t, p.logs)
		t.Logf("compacted between turns after turn %d on replica a; turn %d on replica b sent %d requests", turn-1, turn, len(recs)-before)
	})
}
