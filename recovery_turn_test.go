package contextguard_test

import (
	"fmt"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard"
	"github.com/adk-contextguard/contextguard/contextguardtest"
	"github.com/adk-contextguard/contextguard/core/coretest"
)

// Recovery from a provider's overflow inside a turn, and what a session
// learned from one across eviction and restart, through ADK v1's real
// runner (ARCHITECTURE.md, Recovery). The other ADK line's module plays the
// same tests through its own runner (adkv2's copy of this file is generated
// by internal/mirrorv2).

const (
	// rigWindow is the provider's window, the guard's too.
	rigWindow = 8_000
	// rigRatio is how much more than the seeds' bytes/4 the provider
	// counts, with no usage reported: the guard underestimates every
	// request until the provider rejects one.
	rigRatio = 3.0
	// rigSteps and rigStepSize make a turn of read_file steps that
	// outgrows the window on its own: a first turn, or a turn of an agent
	// with IncludeContents "none", overflows with nothing before the
	// user's request.
	rigSteps    = 6
	rigStepSize = 2_000
)

// rig is one agent of a session played through a real runner, turn by
// turn, against a scripted provider that counts rigRatio times the seeds'
// estimate and rejects what exceeds its window.
type rig struct {
	t *testing.T
	// svc outlives the guards: a new guard on it is a restart.
	svc      session.Service
	provider *contextguardtest.ScriptedModel
	sum      *contextguardtest.SummarizerModel
	include  llmagent.IncludeContents
	recovery bool
	plan     func(turn int) contextguardtest.TurnPlan
}

func newRig(t *testing.T, include llmagent.IncludeContents, recovery bool, plan func(int) contextguardtest.TurnPlan) *rig {
	return &rig{
		t: t, svc: session.InMemoryService(), include: include, recovery: recovery, plan: plan,
		provider: contextguardtest.NewScriptedModel(contextguardtest.ScriptConfig{
			Name: "gemini-2.5-flash", Window: rigWindow, Counter: contextguardtest.SeedCounter(rigRatio), NoUsage: true, Plan: plan,
		}),
		sum: contextguardtest.NewSummarizerModel(contextguardtest.SummarizerConfig{SummarySize: 800}),
	}
}

// stepsPlan is a turn of rigSteps read_file steps of rigStepSize bytes.
func stepsPlan(int) contextguardtest.TurnPlan {
	calls := make([]contextguardtest.ToolCall, rigSteps)
	for i := range calls {
		calls[i] = contextguardtest.Call("read_file", rigStepSize)
	}
	return contextguardtest.TurnPlan{UserTextSize: 300, ResponseSize: 200, Steps: contextguardtest.Sequential(calls...)}
}

// guard starts a guard (a process) with opts and returns its runner over
// the rig's session service.
func (r *rig) guard(opts ...contextguard.Option) *runner.Runner {
	r.t.Helper()
	g := contextguard.New(nil, append([]contextguard.Option{contextguard.WithLogger(slog.New(slog.DiscardHandler))}, opts...)...)
	agentOpts := []contextguard.AgentOption{contextguard.WithMaxTokens(rigWindow)}
	if r.recovery {
		agentOpts = append(agentOpts, contextguard.WithRecoveryModel(contextguardtest.NewScriptedModel(contextguardtest.ScriptConfig{
			Name: "gemini-2.5-flash", Window: rigWindow, Counter: contextguardtest.SeedCounter(rigRatio), NoUsage: true, Plan: r.plan,
		})))
	}
	g.Add("assistant", r.sum, agentOpts...)
	tools, err := contextguardtest.Tools("read_file")
	require.NoError(r.t, err)
	a, err := llmagent.New(llmagent.Config{
		Name: "assistant", Model: r.provider, Instruction: "You are a coding agent.", Tools: tools, IncludeContents: r.include,
	})
	require.NoError(r.t, err)
	run, err := runner.New(runner.Config{AppName: "app", Agent: a, SessionService: r.svc, AutoCreateSession: true, PluginConfig: g.PluginConfig()})
	require.NoError(r.t, err)
	return run
}

// play sends user turn turn of session sessionID and returns the errors the
// runner surfaced and how many of the requests the provider received for it
// it rejected.
func (r *rig) play(run *runner.Runner, sessionID string, turn int) (errs []error, rejected int) {
	r.t.Helper()
	before := len(r.provider.Requests())
	text := coretest.UserMessage(turn, contextguardtest.Marker(int64(100+turn)),
		coretest.Generate(coretest.KindProseEnglish, 300, int64(turn)))
	steps := 0
	for _, err := range run.Run(r.t.Context(), "u", sessionID, genai.NewContentFromText(text, genai.RoleUser), agent.RunConfig{}) {
		if err != nil {
			errs = append(errs, err)
		}
		if steps++; steps > 8*rigSteps {
			r.t.Fatalf("turn %d of %s: the run does not end", turn, sessionID)
		}
	}
	for _, rec := range r.provider.Requests()[before:] {
		assert.NoError(r.t, rec.PairError, "turn %d: call/response pairs", turn)
		if rec.Rejected {
			rejected++
		}
	}
	return errs, rejected
}

// TestRecovery_InsideATurn: the provider rejects a request made of the
// user's request and the turn's own tool steps, in a session's first turn
// and in every turn of an agent with IncludeContents "none". Nothing
// reports ErrIrreducible: with a recovery model the turn's steps are
// compacted and the turn is answered; without one the provider's error is
// returned once and the session, having learned the provider's ratio, does
// not overflow in its next turns.
func TestRecovery_InsideATurn(t *testing.T) {
	const turns = 4
	for _, include := range []llmagent.IncludeContents{llmagent.IncludeContentsDefault, llmagent.IncludeContentsNone} {
		for _, recovery := range []bool{true, false} {
			t.Run(fmt.Sprintf("include %s, recovery model %v", include, recovery), func(t *testing.T) {
				r := newRig(t, include, recovery, stepsPlan)
				run := r.guard()
				errs, rejected := r.play(run, "s", 0)
				require.Positive(t, rejected, "the first turn outgrows the provider's window")
				for _, err := range errs {
					assert.NotErrorIs(t, err, contextguard.ErrIrreducible, "the turn's steps can be compacted")
				}
				if recovery {
					assert.Empty(t, errs, "the overflow is recovered inside the turn")
				} else {
					require.Len(t, errs, 1, "the provider's error, once")
					assert.True(t, contextguardtest.IsOverflowError(errs[0]), "the provider's error, untouched: %v", errs[0])
				}
				for turn := 1; turn < turns; turn++ {
					errs, rejected := r.play(run, "s", turn)
					assert.Empty(t, errs, "turn %d", turn)
					assert.Zero(t, rejected, "turn %d: the session learned the provider's ratio", turn)
				}
				assert.Positive(t, r.sum.Calls(), "the turn's steps were summarized")
			})
		}
	}
}

// growingPlan is a turn of three read_file steps whose history outgrows
// the window after a few turns (never inside the first).
func growingPlan(int) contextguardtest.TurnPlan {
	return contextguardtest.TurnPlan{UserTextSize: 300, ResponseSize: 200,
		Steps: contextguardtest.Sequential(contextguardtest.Call("read_file", 1_200), contextguardtest.Call("read_file", 1_200), contextguardtest.Call("read_file", 1_200))}
}

// TestRecovery_LearnedSurvivesEviction: a session's overflow, returned
// without a recovery model, is acted on by its next call even when the
// session was evicted from the guard's table in between (a guard holding
// one session, another session played after every turn): the next call
// compacts first, the ratio is learned, and no later turn overflows, as
// without eviction.
func TestRecovery_LearnedSurvivesEviction(t *testing.T) {
	const turns = 9
	for _, evict := range []bool{false, true} {
		t.Run(fmt.Sprintf("evicted %v", evict), func(t *testing.T) {
			r := newRig(t, llmagent.IncludeContentsDefault, false, growingPlan)
			run := r.guard(contextguard.WithMaxSessions(1))
			overflows, surfaced := 0, 0
			for turn := range turns {
				errs, rejected := r.play(run, "s", turn)
				overflows += rejected
				surfaced += len(errs)
				if evict {
					// Another session takes the guard's only entry.
					_, _ = r.play(run, fmt.Sprintf("other-%d", turn), 0)
				}
			}
			assert.Equal(t, 1, overflows, "the provider rejects one request; the session learns from it")
			assert.Equal(t, 1, surfaced)
		})
	}
}

// TestRecovery_LearnedSurvivesRestart: what a session learned from an
// overflow inside its first turn is in the session state once a model call
// could write it, and a new guard (a restart) on the same session service
// does not let the provider reject the session's later turns. With a
// recovery model the recovery's response carries it; without one the
// provider's error is returned and ADK drops the failed call's state
// delta, so the session's next call, which acts on the overflow, is the
// first that writes it (ARCHITECTURE.md, Recovery).
func TestRecovery_LearnedSurvivesRestart(t *testing.T) {
	for _, include := range []llmagent.IncludeContents{llmagent.IncludeContentsDefault, llmagent.IncludeContentsNone} {
		for _, recovery := range []bool{true, false} {
			t.Run(fmt.Sprintf("include %s, recovery model %v", include, recovery), func(t *testing.T) {
				r := newRig(t, include, recovery, stepsPlan)
				first := r.guard()
				_, rejected := r.play(first, "s", 0)
				require.Positive(t, rejected)
				next := 1
				if !recovery {
					errs, rejected := r.play(first, "s", next)
					require.Empty(t, errs)
					require.Zero(t, rejected)
					next++
				}
				for turn := next; turn < next+3; turn++ {
					errs, rejected := r.play(r.guard(), "s", turn)
					assert.Empty(t, errs, "turn %d", turn)
					assert.Zero(t, rejected, "turn %d, a new guard: the ratio learned is in the session state", turn)
				}
			})
		}
	}
}
