package plugintest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/adk/plugin"
	"google.golang.org/adk/runner"

	. "github.com/adk-contextguard/contextguard"
	"github.com/adk-contextguard/contextguard/contextguardtest"
	"github.com/adk-contextguard/contextguard/contextguardtest/o200k"
	"github.com/adk-contextguard/contextguard/core/coretest"
)

// heavyProviderRatio is how much heavier than o200k the provider of the
// overflow-learning sessions counts: the ratio that, without usage
// metadata, made replayed sessions overflow after every compaction.
const heavyProviderRatio = 1.5

// toolHeavySession is a session of turns that each read a file of about an
// eighth of the window (in o200k tokens), so it crosses the trigger several
// times: every crossing is a chance to overflow again.
func toolHeavySession(window, turns int, style coretest.ErrorStyle) contextguardtest.Scenario {
	return contextguardtest.Scenario{
		Prefix:          "OverflowLearning",
		Name:            fmt.Sprintf("%dk_%s", window/1000, style),
		Window:          window,
		Turns:           turns,
		NoUsageMetadata: true,
		ErrorStyle:      style,
		Seed:            int64(window) + int64(style),
		Plan: func(turn int) contextguardtest.TurnPlan {
			return contextguardtest.TurnPlan{
				UserTextSize: 300,
				Steps:        contextguardtest.Sequential(contextguardtest.Call("read_file", window/2)),
				ResponseSize: 400,
			}
		},
	}
}

// runHeavyProvider plays sc through a real runner with the guard, against a
// provider that counts heavyProviderRatio x o200k and reports no usage, with
// or without a recovery model (a second scripted model playing the same
// scenario against the same ground truth).
func runHeavyProvider(t *testing.T, sc contextguardtest.Scenario, recovery bool) (*contextguardtest.Result, *contextguardtest.ScriptedModel) {
	t.Helper()
	truth := o200k.Counter(heavyProviderRatio)
	sum := contextguardtest.NewSummarizerModel(contextguardtest.SummarizerConfig{SummarySize: sc.Window / 8})
	opts := []AgentOption{WithMaxTokens(sc.Window)}
	var rec *contextguardtest.ScriptedModel
	if recovery {
		rec = contextguardtest.NewScriptedModel(contextguardtest.ScriptConfig{
			Window:     sc.Window,
			Counter:    truth,
			Plan:       sc.TurnPlan,
			NoUsage:    true,
			ErrorStyle: sc.ErrorStyle,
			Seed:       sc.Seed,
		})
		opts = append(opts, WithRecoveryModel(rec))
	}
	g := New(NewCrushRegistry(WithRegistryLogger(quietLogger)), WithLogger(quietLogger))
	g.Add("assistant", sum, opts...)
	p, err := g.Plugin()
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	res, err := contextguardtest.Run(ctx, sc, contextguardtest.RunConfig{
		Counter:    truth,
		Plugins:    runner.PluginConfig{Plugins: []*plugin.Plugin{p}},
		Summarizer: sum,
	})
	require.NoError(t, err)
	return res, rec
}

// TestOverflowLearning_HeavyProviderOverflowsOnce: a provider that counts
// 1.5x the guard's estimate and reports no usage metadata. Its first
// overflow teaches the guard the session's ratio: from the count the error
// states (Gemini, Anthropic, OpenAI), or by a step up when it states none
// (generic). What the session learned survives every later compaction, so
// each session overflows at most once, with or without a recovery model;
// with one, no overflow reaches the caller.
//
// Before overflows taught the guard, every compaction reset the session to
// the uncalibrated estimate and the sessions overflowed again after each
// one (3 to 6 times each).
func TestOverflowLearning_HeavyProviderOverflowsOnce(t *testing.T) {
	t.Parallel()
	styles := []coretest.ErrorStyle{
		coretest.ErrorGemini, coretest.ErrorAnthropic,
		coretest.ErrorOpenAI, coretest.ErrorGeneric,
	}
	for _, window := range []int{8_000, 16_000, 32_000} {
		for _, style := range styles {
			for _, recovery := range []bool{false, true} {
				name := fmt.Sprintf("%dk/%s/recovery=%v", window/1000, style, recovery)
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					sc := toolHeavySession(window, 30, style)
					res, rec := runHeavyProvider(t, sc, recovery)
					t.Logf("%s", res)
					assert.Positive(t, res.SummarizerCalls, "the session crosses the trigger")
					assert.LessOrEqual(t, res.OverflowsRejected, 1, "the session overflows at most once")
					assert.Equal(t, sc.Turns, res.Turns)
					if recovery {
						assert.Zero(t, res.OverflowsSurfaced, "the recovery model answers the overflow")
						assert.Zero(t, rec.Rejected(), "the recovery request fits")
					} else {
						assert.LessOrEqual(t, res.OverflowsSurfaced, 1)
					}
					for _, err := range res.Errors {
						assert.True(t, contextguardtest.IsOverflowError(err), "only the one overflow surfaces: %v", err)
					}
				})
			}
		}
	}
}
