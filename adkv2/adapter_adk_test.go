package contextguard_test

import (
	"context"
	"fmt"
	"github.com/adk-contextguard/contextguard/adkv2/internal/runnertest"
	"iter"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/session"

	contextguard "github.com/adk-contextguard/contextguard/adkv2"
	"github.com/adk-contextguard/contextguard/adkv2/contextguardtest"
	"github.com/adk-contextguard/contextguard/core/coretest"
)

// The ADK v2 plugin through ADK v2's real runner: seed rows of the stress
// matrix played by the v2 kit, and a session the earlier guard wrote picked
// up after the import-path switch.

// TestPlugin_SeedRowsThroughTheV2Runner plays seed rows that compact several
// times through the v2 runner with the guard installed as recommended (a
// recovery model set): nothing reaches the caller, every compaction shrinks
// the request, and no marker of the conversation is lost. In a row whose
// provider counts far above the guard's estimate and reports no usage, the
// provider rejects requests; each is recovered by a compaction.
func TestPlugin_SeedRowsThroughTheV2Runner(t *testing.T) {
	rows := []struct {
		name string
		// recovers: the provider rejects requests the guard let through,
		// and the guard recovers each; otherwise no request the model
		// receives is over the window and the guard compacts before it.
		recovers bool
	}{
		{"Stress_8k_NormalConversation", false},
		{"Stress_8k_PureToolStorm", false},
		{"Brutal_8k_JSON_Heavy_ToolResponses", false},
		{"Brutal_8k_NoUsageMetadata_HighRatio", true},
		{"Brutal_8k_ToolResponseBiggerThanWindow", false},
	}
	for _, row := range rows {
		name := row.name
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			sc := seedRow(t, name)
			sum := contextguardtest.NewSummarizerModel(contextguardtest.SummarizerConfig{})
			recovery := contextguardtest.NewScriptedModel(contextguardtest.ScriptConfig{Window: sc.Window, Plan: sc.TurnPlan, Counter: contextguardtest.SeedCounter(sc.TokenRatio)})
			g := contextguard.New(nil, contextguard.WithLogger(quiet))
			g.Add("assistant", sum, contextguard.WithMaxTokens(sc.Window), contextguard.WithRecoveryModel(recovery))
			res, err := contextguardtest.Run(t.Context(), sc, contextguardtest.RunConfig{Plugins: g.PluginConfig(), Summarizer: sum})
			require.NoError(t, err)
			t.Log(res.String())
			assert.Zero(t, res.OverflowsSurfaced, "overflows reaching the caller")
			if row.recovers {
				assert.Positive(t, res.OverflowsRecovered, "rejected requests recovered")
				assert.Equal(t, res.OverflowsRejected, res.OverflowsRecovered, "every rejected request recovered")
				assert.Positive(t, res.SummarizerCalls, "the recoveries compact")
			} else {
				assert.LessOrEqual(t, res.MaxRealTokens, sc.Window, "the largest request the model received")
				assert.Positive(t, res.SummarizerCalls, "the row compacts (between turns or in a model call)")
			}
			assert.Zero(t, res.NonShrinkingCompactions, "compactions that did not shrink the request")
			assert.Zero(t, res.PairViolations, "requests with a broken call/response pair")
			assert.Zero(t, res.MissingLatestUser, "requests without the user's latest message")
			assert.Zero(t, res.LostMarkers, "markers neither sent nor summarized")
			assert.Empty(t, res.Errors)
		})
	}
}

// seedRow is the seed matrix's row named fullName.
func seedRow(t *testing.T, fullName string) contextguardtest.Scenario {
	t.Helper()
	for _, sc := range coretest.SeedMatrix() {
		if sc.FullName() == fullName {
			return sc
		}
	}
	t.Fatalf("no seed row %q", fullName)
	return contextguardtest.Scenario{}
}

// The earlier guard's state keys for the agent "assistant": its summary,
// the number of contents the summary covers, and its counts. It had no
// fingerprint and no anchor.
const (
	earlierSummaryKey     = "__context_guard_summary_assistant"
	earlierWatermarkKey   = "__context_guard_contents_at_compaction_assistant"
	earlierSummarizedAt   = "__context_guard_summarized_at_assistant"
	earlierRealTokensKey  = "__context_guard_real_tokens_assistant"
	earlierLastEstimate   = "__context_guard_last_heuristic_assistant"
	anchorKey             = "__context_guard_anchor_assistant"
	earlierSummaryText    = "EARLIER-GUARD-SUMMARY: the user asked about turns 1 and 2."
	legacyApp, legacyUser = "legacy", "ana"
)

// TestPlugin_PicksUpTheEarlierGuardsV2State: a session the earlier guard
// compacted on ADK v2 (its summary and the count of contents it covers in
// state) goes on under this plugin after the import-path switch. The first
// request sends the summary in place of exactly the contents it covers and
// keeps the rest, and the plugin anchors the summary to the session event
// it ends at, so the next calls keep the same cut.
func TestPlugin_PicksUpTheEarlierGuardsV2State(t *testing.T) {
	svc := session.InMemoryService()
	chat := &echoModel{}

	// Two turns played without a guard, as the earlier guard's session
	// holds them: 4 contents (user, model, user, model).
	first := runnertest.NewRunner(t, legacyApp, svc, chat)
	for turn := 1; turn <= 2; turn++ {
		runnertest.RunTurn(t, first, legacyUser, fmt.Sprintf("question %d", turn))
	}
	require.Len(t, chat.requests(), 2)
	require.Len(t, chat.requests()[1], 3, "the second request: question 1, answer 1, question 2")

	// The earlier guard's state: its summary covers the first two contents
	// (question 1 and answer 1). It reaches the session as a state delta.
	writeState(t, svc, map[string]any{
		earlierSummaryKey:    earlierSummaryText,
		earlierWatermarkKey:  2,
		earlierSummarizedAt:  2,
		earlierRealTokensKey: 100,
		earlierLastEstimate:  90,
		"unrelated_app_key":  "kept",
	})

	// The same app after the import-path switch: this plugin.
	g := contextguard.New(nil, contextguard.WithLogger(quiet))
	g.Add("assistant", nil, contextguard.WithSummarizer(failingSummarizer{}), contextguard.WithMaxTokens(100_000))
	guarded := runnertest.NewRunner(t, legacyApp, svc, chat, g.PluginConfig().Plugins...)
	runnertest.RunTurn(t, guarded, legacyUser, "question 3")
	runnertest.RunTurn(t, guarded, legacyUser, "question 4")

	reqs := chat.requests()
	require.Len(t, reqs, 4)
	for i, req := range reqs[2:] {
		texts := runnertest.ContentTexts(req)
		require.NotEmpty(t, texts)
		assert.Contains(t, texts[0], earlierSummaryText, "request %d starts with the earlier guard's summary", i+3)
		joined := strings.Join(texts, "\n")
		assert.NotContains(t, joined, "question 1", "request %d: a covered content is not sent again", i+3)
		assert.NotContains(t, joined, "answer to: question 1", "request %d: a covered content is not sent again", i+3)
		assert.Contains(t, joined, "question 2", "request %d: a content after the cut is kept", i+3)
		assert.Contains(t, joined, "answer to: question 2", "request %d: a content after the cut is kept", i+3)
	}
	assert.Contains(t, strings.Join(runnertest.ContentTexts(reqs[3]), "\n"), "question 4")

	st := readState(t, svc)
	anchor, ok := st[anchorKey].(string)
	require.True(t, ok, "the plugin anchored the earlier guard's summary: state %v", st)
	assert.NotEmpty(t, anchor)
	assert.Equal(t, "kept", st["unrelated_app_key"])
	assert.Equal(t, earlierSummaryText, st[earlierSummaryKey], "the earlier guard's summary is kept as it was")
}

// quiet discards the guard's logs.
var quiet = slog.New(slog.DiscardHandler)

// echoModel answers every request with "answer to: <last user text>" and
// records the requests it received.
type echoModel struct {
	mu   sync.Mutex
	reqs [][]*genai.Content
}

func (m *echoModel) Name() string { return "gemini-2.5-flash" }

func (m *echoModel) GenerateContent(_ context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	m.mu.Lock()
	m.reqs = append(m.reqs, append([]*genai.Content(nil), req.Contents...))
	m.mu.Unlock()
	last := ""
	if n := len(req.Contents); n > 0 {
		last = strings.Join(runnertest.Texts(req.Contents[n-1]), " ")
	}
	return func(yield func(*model.LLMResponse, error) bool) {
		yield(&model.LLMResponse{Content: genai.NewContentFromText("answer to: "+last, genai.RoleModel), TurnComplete: true}, nil)
	}
}

func (m *echoModel) requests() [][]*genai.Content {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([][]*genai.Content(nil), m.reqs...)
}

// failingSummarizer fails every call: the test asserts that no compaction
// is needed.
type failingSummarizer struct{}

func (failingSummarizer) Summarize(context.Context, contextguard.SummaryRequest) (string, error) {
	return "", fmt.Errorf("no compaction expected")
}

func writeState(t *testing.T, svc session.Service, delta map[string]any) {
	t.Helper()
	resp, err := svc.Get(t.Context(), &session.GetRequest{AppName: legacyApp, UserID: legacyUser, SessionID: "s1"})
	require.NoError(t, err)
	ev := session.NewEvent(t.Context(), "earlier-guard")
	ev.Author = "user"
	ev.Actions.StateDelta = delta
	require.NoError(t, svc.AppendEvent(t.Context(), resp.Session, ev))
}

func readState(t *testing.T, svc session.Service) map[string]any {
	t.Helper()
	resp, err := svc.Get(t.Context(), &session.GetRequest{AppName: legacyApp, UserID: legacyUser, SessionID: "s1"})
	require.NoError(t, err)
	out := map[string]any{}
	for k, v := range resp.Session.State().All() {
		out[k] = v
	}
	return out
}
