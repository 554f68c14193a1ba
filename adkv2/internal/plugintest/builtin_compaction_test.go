package plugintest_test

import (
	"context"
	"fmt"
	"github.com/adk-contextguard/contextguard/adkv2/internal/runnertest"
	"iter"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/plugin"
	"google.golang.org/adk/v2/session"

	contextguard "github.com/adk-contextguard/contextguard/adkv2"
	"github.com/adk-contextguard/contextguard/core/coretest/o200k"
)

// ADK v2.3 and later can compact a session themselves
// (runner.Config.EventsCompactionConfig): older events are replaced by a
// summary, counted at characters/4, before the plugins' BeforeModel
// callbacks see the request. ADK v2.2, which this module builds with, has no
// such compaction, so this test stands one in: a plugin ahead of the guard
// that replaces the older contents by one summary content once their
// characters/4 pass a threshold, as ADK's compaction does. It shows what the
// README's "ADK v2.3's built-in compaction" section says: with both, every
// request still fits the window, because the guard counts what the other
// compaction left; without the guard, characters/4 lets requests over the
// window through.

// builtinCompaction stands in for ADK v2.3's compaction: once the request's
// characters/4 exceed threshold, every content but the newest keep is
// replaced by one summary content.
type builtinCompaction struct {
	threshold, keep int
	runs            atomic.Int32
}

func (b *builtinCompaction) plugin(t *testing.T) *plugin.Plugin {
	p, err := plugin.New(plugin.Config{Name: "builtin_compaction", BeforeModelCallback: b.beforeModel})
	require.NoError(t, err)
	return p
}

func (b *builtinCompaction) beforeModel(_ agent.Context, req *model.LLMRequest) (*model.LLMResponse, error) {
	chars := 0
	for _, c := range req.Contents {
		chars += len(strings.Join(runnertest.Texts(c), ""))
	}
	if chars/4 <= b.threshold || len(req.Contents) <= b.keep {
		return nil, nil
	}
	b.runs.Add(1)
	cut := len(req.Contents) - b.keep
	summary := genai.NewContentFromText(fmt.Sprintf("[Summary of %d earlier contents]", cut), genai.RoleUser)
	req.Contents = append([]*genai.Content{summary}, req.Contents[cut:]...)
	return nil, nil
}

// countingSummarizer answers every summary request with a short summary and
// counts the calls.
type countingSummarizer struct{ calls atomic.Int32 }

func (s *countingSummarizer) Summarize(context.Context, contextguard.SummaryRequest) (string, error) {
	s.calls.Add(1)
	return "The user sent batches of hex identifiers; each was acknowledged.", nil
}

// hexModel answers with a short acknowledgement and records each request's
// text.
type hexModel struct {
	mu    sync.Mutex
	texts []string
}

func (m *hexModel) Name() string { return "gemini-2.5-flash" }

func (m *hexModel) GenerateContent(_ context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	m.mu.Lock()
	m.texts = append(m.texts, strings.Join(runnertest.ContentTexts(req.Contents), "\n"))
	m.mu.Unlock()
	return func(yield func(*model.LLMResponse, error) bool) {
		yield(&model.LLMResponse{Content: genai.NewContentFromText("Noted.", genai.RoleModel), TurnComplete: true}, nil)
	}
}

func (m *hexModel) requests() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.texts...)
}

// hexMessage is a user message of n hex identifiers, text that real
// tokenizers split finer than characters/4 assumes.
func hexMessage(r *rand.Rand, turn, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "TURN-%d please record these identifiers:", turn)
	for range n {
		fmt.Fprintf(&b, " %08x", r.Uint32())
	}
	return b.String()
}

func TestPlugin_BesideADKsBuiltInCompaction(t *testing.T) {
	const (
		window = 8_000
		turns  = 16
		// threshold and keep are the stand-in's settings: it compacts
		// at 75% of the window by characters/4 and keeps the newest two
		// turns.
		threshold = window * 3 / 4
		keep      = 4
		idsPerMsg = 400
	)
	tests := []struct {
		name      string
		withGuard bool
	}{
		{"built-in compaction alone", false},
		{"built-in compaction and the guard", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			llm := &hexModel{}
			builtin := &builtinCompaction{threshold: threshold, keep: keep}
			plugins := []*plugin.Plugin{builtin.plugin(t)}
			sum := &countingSummarizer{}
			if tt.withGuard {
				g := contextguard.New(nil, contextguard.WithLogger(quiet))
				g.Add("assistant", nil, contextguard.WithSummarizer(sum), contextguard.WithMaxTokens(window))
				p, err := g.Plugin()
				require.NoError(t, err)
				plugins = append(plugins, p)
			}
			r := runnertest.NewRunner(t, testApp, session.InMemoryService(), llm, plugins...)
			rng := rand.New(rand.NewPCG(7, 11))
			for turn := range turns {
				runnertest.RunTurn(t, r, testUser, hexMessage(rng, turn, idsPerMsg))
			}

			reqs := llm.requests()
			require.Len(t, reqs, turns)
			require.Positive(t, builtin.runs.Load(), "the built-in compaction ran")
			over := 0
			for i, text := range reqs {
				assert.Contains(t, text, fmt.Sprintf("TURN-%d ", i), "request %d carries the user's message", i)
				if o200k.Count(text) > window {
					over++
				}
			}
			t.Logf("%d of %d requests over the window; %d built-in compactions, %d summaries by the guard",
				over, len(reqs), builtin.runs.Load(), sum.calls.Load())
			if !tt.withGuard {
				assert.Positive(t, over, "characters/4 alone let no request over the window: the scenario tests nothing")
				return
			}
			assert.Zero(t, over, "a request over the window with the guard installed")
			assert.Positive(t, sum.calls.Load(), "the guard compacted what the built-in compaction left")
		})
	}
}
