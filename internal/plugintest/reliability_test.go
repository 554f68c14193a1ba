package plugintest

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/genai"

	. "github.com/adk-contextguard/contextguard"
	"github.com/adk-contextguard/contextguard/contextguardtest"
	"github.com/adk-contextguard/contextguard/core/coretest"
)

// concurrencySummarizer wraps the kit's summarizer with a count of calls in
// flight, overall and per session (a session is known by the markers in its
// input). Its calls wait at a gate that opens once two are in flight at
// once: a guard that summarized sessions one after the other would never
// open it, and its calls fail after overlapBound.
type concurrencySummarizer struct {
	inner *contextguardtest.SummarizerModel
	owner func(marker string) int // session of a marker, -1 if unknown
	gate  chan struct{}
	once  sync.Once

	active, maxActive atomic.Int64
	mu                sync.Mutex
	perSession        map[int]int
	overlap           []string // sessions summarized twice at once
	mixed             []string // inputs holding markers of several sessions
}

func (s *concurrencySummarizer) Name() string { return s.inner.Name() }

func (s *concurrencySummarizer) GenerateContent(ctx context.Context, req *model.LLMRequest, stream bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		contents := []*genai.Content{req.Config.SystemInstruction}
		text := contextguardtest.FlattenText(append(contents, req.Contents...))
		sessions := map[int]bool{}
		for _, m := range contextguardtest.MarkerPattern.FindAllString(text, -1) {
			sessions[s.owner(m)] = true
		}
		sess := -1
		for k := range sessions {
			sess = k
		}
		s.mu.Lock()
		if len(sessions) > 1 {
			s.mixed = append(s.mixed, fmt.Sprint(sessions))
		}
		s.perSession[sess]++
		if sess >= 0 && s.perSession[sess] > 1 {
			s.overlap = append(s.overlap, fmt.Sprint(sess))
		}
		s.mu.Unlock()
		n := s.active.Add(1)
		for {
			m := s.maxActive.Load()
			if n <= m || s.maxActive.CompareAndSwap(m, n) {
				break
			}
		}
		defer func() {
			s.active.Add(-1)
			s.mu.Lock()
			s.perSession[sess]--
			s.mu.Unlock()
		}()
		if n >= 2 {
			s.once.Do(func() { close(s.gate) })
		}
		select {
		case <-s.gate:
		case <-ctx.Done():
		case <-time.After(overlapBound):
			yield(nil, errors.New("no two summarizer calls were ever in flight at once"))
			return
		}
		for resp, err := range s.inner.GenerateContent(ctx, req, stream) {
			if !yield(resp, err) {
				return
			}
		}
	}
}

// sessionMarker is the marker of turn turn of session s.
func sessionMarker(s, turn int) string { return contextguardtest.Marker(int64(s)*1_000 + int64(turn)) }

// overlapBound is how long a summarizer call waits for a second one to be in
// flight: far beyond the time 200 sessions take to reach their first
// compaction, a guard against a test that would hang.
const overlapBound = 20 * time.Second

// TestConcurrency_200Sessions runs 200 sessions at once through one guard
// shared by three agents, each behind its own runner, with a summarizer
// whose calls wait until two are in flight at once. Run with -race. Every summary must hold only its own
// session's markers, no session may be summarized twice at once, and
// summaries of different sessions must overlap in time.
func TestConcurrency_200Sessions(t *testing.T) {
	const sessions, turns = 200, 6
	owner := map[string]int{}
	for s := range sessions {
		for turn := range turns {
			owner[sessionMarker(s, turn)] = s
		}
	}
	sum := &concurrencySummarizer{
		gate:  make(chan struct{}),
		inner: contextguardtest.NewSummarizerModel(contextguardtest.SummarizerConfig{SummarySize: 600}),
		owner: func(m string) int {
			if s, ok := owner[m]; ok {
				return s
			}
			return -1
		},
		perSession: map[int]int{},
	}
	logs := &logBuffer{}
	// A fake clock no one moves: no summary timeout fires while calls wait
	// at the summarizer's gate.
	g := New(nil, WithLogger(logs.logger()), WithClock(contextguardtest.NewFakeClock(time.Time{})))
	agents := []string{"alpha", "beta", "gamma"}
	m := contextguardtest.NewScriptedModel(contextguardtest.ScriptConfig{Name: "gemini-2.5-flash"})
	svc := session.InMemoryService()
	runners := make([]*runner.Runner, len(agents))
	for i, name := range agents {
		g.Add(name, sum, WithMaxTokens(4_000))
		a, err := llmagent.New(llmagent.Config{Name: name, Model: m, Instruction: "You are agent " + name + "."})
		require.NoError(t, err)
		runners[i], err = runner.New(runner.Config{AppName: "app-" + name, Agent: a, SessionService: svc, PluginConfig: g.PluginConfig(), AutoCreateSession: true})
		require.NoError(t, err)
	}

	var wg sync.WaitGroup
	errs := make(chan error, sessions*turns)
	for s := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := runners[s%len(runners)]
			for turn := range turns {
				text := coretest.UserMessage(turn, sessionMarker(s, turn), coretest.Generate(coretest.KindProseEnglish, 2_500, int64(s*100+turn)))
				msg := genai.NewContentFromText(text, genai.RoleUser)
				for _, err := range r.Run(context.Background(), "u", fmt.Sprintf("s%03d", s), msg, agent.RunConfig{}) {
					if err != nil {
						errs <- fmt.Errorf("session %d turn %d: %w", s, turn, err)
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	assert.Empty(t, sum.mixed, "a summarizer input mixed sessions")
	assert.Empty(t, sum.overlap, "a session was summarized twice at once")
	assert.GreaterOrEqual(t, sum.maxActive.Load(), int64(2), "summaries of different sessions run in parallel")
	assert.GreaterOrEqual(t, sum.inner.Calls(), sessions, "every session compacted")
	t.Logf("%d summarizer calls, at most %d at once", sum.inner.Calls(), sum.maxActive.Load())

	for s := range sessions {
		name := agents[s%len(agents)]
		resp, err := svc.Get(context.Background(), &session.GetRequest{AppName: "app-" + name, UserID: "u", SessionID: fmt.Sprintf("s%03d", s)})
		require.NoError(t, err)
		v, err := resp.Session.State().Get(keySummary + name)
		require.NoError(t, err, "session %d has a summary", s)
		text, _ := v.(string)
		markers := contextguardtest.MarkerPattern.FindAllString(text, -1)
		assert.NotEmpty(t, markers, "session %d: the summary digests its markers", s)
		for _, mk := range markers {
			assert.Equal(t, s, owner[mk], "session %d: summary holds marker %s of session %d", s, mk, owner[mk])
		}
		for _, other := range agents {
			if other == name {
				continue
			}
			_, err := resp.Session.State().Get(keySummary + other)
			assert.Error(t, err, "session %d: no state of agent %s", s, other)
		}
	}
}
