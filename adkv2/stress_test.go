package contextguard_test

import (
	"errors"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"google.golang.org/adk/v2/agent"
	"google.golang.org/adk/v2/model"
	"google.golang.org/adk/v2/plugin"
	"google.golang.org/adk/v2/runner"

	contextguard "github.com/adk-contextguard/contextguard/adkv2"
	"github.com/adk-contextguard/contextguard/adkv2/contextguardtest"
	"github.com/adk-contextguard/contextguard/core/coretest"
)

// The hardest rows of the stress matrix through ADK v2's runner. The whole
// matrix runs through ADK v1's runner in the root module; these rows are
// the 24 whose requests came closest to the provider's window or past it
// (the largest "max real/window" of the v1 matrix's table, `make stress`,
// in seed or tokenizer mode): a request past the window is one the
// provider rejected, which the guard must recover. Each is played in both
// ground truths, with the assertions of the v1 matrix
// (coretest.MatrixRun).
var hardestRows = []string{
	"Brutal_200k_LargeInlineDocuments",
	"Brutal_200k_MultipleInlinePerTurn",
	"Brutal_200k_MagecProductionScenario_NoUsageMetadata",
	"Stress_200k_InlineImages",
	"Brutal_200k_ToolDefsAndInlineImages",
	"Brutal_200k_ToolDefsAndInlineNoUsageMetadata",
	"Brutal_8k_CodingAgent_NoUsageMetadata",
	"Brutal_8k_ToolDefsAndInlineCombined",
	"Brutal_8k_NoUsageMetadata_BeyondDefault",
	"Brutal_200k_MagecProductionScenario",
	"Brutal_8k_SequentialChain_NoUsageMetadata",
	"Stress_8k_NoUsageMetadata",
	"Brutal_8k_NoUsageMetadata_HighRatio",
	"Brutal_8k_ToolDefinitionsNoUsageMetadata",
	"Brutal_200k_NoUsageMetadata_LongSession",
	"Brutal_1M_NoUsageMetadata",
	"Brutal_1M_KubeAgent_ExtremeLongevity",
	"Stress_8k_InlineSmallImages",
	"Stress_CompactionNoInfiniteLoop",
	"Stress_1M_HeavyTools",
	"Brutal_8k_SystemPromptLargerThanWindow",
	"Brutal_1M_PureToolStorm_MonsterResponses",
	"Stress_200k_100Turns_MixedWorkload",
	"Stress_200k_KubeAgent",
}

// groundTruths are the matrix's two ground truths: the seeds' serialized
// bytes/4 times the row's ratio (nil: the kit's default), and exact o200k
// times 1.2 (a Claude-like provider factor).
var groundTruths = []struct {
	name    string
	counter func(sc contextguardtest.Scenario) contextguardtest.Counter
}{
	{"seed", nil},
	{"tokenizer", func(contextguardtest.Scenario) contextguardtest.Counter {
		return contextguardtest.TokenizerCounter(1.2)
	}},
}

// TestStressV2_HardestRows plays each of hardestRows in both ground truths
// through ADK v2's runner, with the guard as the README recommends (a
// recovery model set). Like the v1 matrix's rows it runs without the race
// detector (`make adkv2-test` runs it apart); TestConformance covers the
// plugin under -race.
func TestStressV2_HardestRows(t *testing.T) {
	require.GreaterOrEqual(t, len(hardestRows), 20)
	for _, name := range hardestRows {
		sc := seedRow(t, name)
		for _, gt := range groundTruths {
			t.Run(name+"/"+gt.name, func(t *testing.T) {
				t.Parallel()
				playHardestRow(t, sc, gt.counter)
			})
		}
	}
}

// playHardestRow plays sc against the ground truth of counterFor (nil: the
// seeds') and asserts the v1 matrix's properties.
func playHardestRow(t *testing.T, sc contextguardtest.Scenario, counterFor func(contextguardtest.Scenario) contextguardtest.Counter) {
	truth := contextguardtest.SeedCounter(max(sc.TokenRatio, sc.LateTokenRatio))
	var cfg contextguardtest.RunConfig
	if counterFor != nil {
		truth = counterFor(sc)
		cfg.Counter = truth
	}
	probe := coretest.NewProbe(func(contents []*genai.Content, config *genai.GenerateContentConfig) int {
		return truth.CountRequest(&model.LLMRequest{Contents: contents, Config: config})
	})
	pp, err := plugin.New(plugin.Config{Name: "matrix-probe", BeforeModelCallback: func(_ agent.Context, req *model.LLMRequest) (*model.LLMResponse, error) {
		if req != nil {
			probe.Observe(req.Contents, req.Config)
		}
		return nil, nil
	}})
	require.NoError(t, err)

	sum := contextguardtest.NewSummarizerModel(contextguardtest.SummarizerConfig{})
	recovery := contextguardtest.NewScriptedModel(contextguardtest.ScriptConfig{
		Window: sc.Window, Counter: truth, Plan: sc.TurnPlan, NoUsage: sc.NoUsageMetadata, UsageFromTurn: sc.UsageFromTurn,
		ErrorStyle: sc.ErrorStyle, ProviderCallIDs: sc.ProviderCallIDs, Seed: sc.Seed,
	})
	quiet := slog.New(slog.DiscardHandler)
	g := contextguard.New(contextguard.NewCrushRegistry(contextguard.WithRegistryLogger(quiet)), contextguard.WithLogger(quiet))
	g.Add("assistant", sum, contextguard.WithMaxTokens(sc.Window), contextguard.WithRecoveryModel(recovery))
	cfg.Summarizer = sum
	cfg.Plugins = runner.PluginConfig{Plugins: append([]*plugin.Plugin{pp}, g.PluginConfig().Plugins...)}

	res, err := contextguardtest.Run(t.Context(), sc, cfg)
	require.NoError(t, err)
	t.Log(res.String())
	minCalls := 0
	if counterFor == nil {
		minCalls = sc.MinSummarizerCalls
	}
	assert.Empty(t, coretest.MatrixRun{
		Result: res, Probe: probe, SummarizerCalls: sum.Calls(), MinSummarizerCalls: minCalls,
		Irreducible: func(err error) bool { return errors.Is(err, contextguard.ErrIrreducible) },
	}.Violations(), res.String())
	// A recovered request over the window is allowed only for a turn that
	// ended in ErrIrreducible, which Violations has judged against the
	// ground truth.
	irreducible, over := 0, 0
	for _, err := range res.Errors {
		if errors.Is(err, contextguard.ErrIrreducible) {
			irreducible++
		}
	}
	for _, rec := range recovery.Requests() {
		if rec.Tokens > sc.Window {
			over++
		}
		assert.NoError(t, rec.PairError, "recovered request %d", rec.Index)
	}
	assert.LessOrEqual(t, over, irreducible, "recovered requests over the window")
}
