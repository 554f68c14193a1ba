package coretest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSeedMatrix_Shape(t *testing.T) {
	rows := SeedMatrix()
	require.Len(t, rows, 91)
	count := map[string]int{}
	names := map[string]bool{}
	windows := map[int]bool{Window4k: true, Window8k: true, Window200k: true, Window1M: true}
	for _, sc := range rows {
		count[sc.Prefix]++
		assert.False(t, names[sc.FullName()], "duplicate %s", sc.FullName())
		names[sc.FullName()] = true
		assert.True(t, windows[sc.Window], "%s: window %d", sc.Name, sc.Window)
		assert.Positive(t, sc.Turns, sc.Name)
		assert.Positive(t, sc.TokenRatio, sc.Name)
		assert.NotEmpty(t, sc.Description, sc.Name)
		assert.NotZero(t, sc.Seed, sc.Name)
		_, err := DataToolNames(sc)
		assert.NoError(t, err, sc.Name)
	}
	assert.Equal(t, 42, count["Stress"])
	assert.Equal(t, 49, count["Brutal"])

	for _, name := range []string{
		"Stress_200k_NormalConversation", "Stress_CompactionNoInfiniteLoop", "Stress_200k_LateUsageMetadata",
		"Brutal_8k_NoUsageMetadata_BeyondDefault", "Brutal_200k_MagecProductionScenario_NoUsageMetadata",
		"Brutal_8k_SequentialChain_NoUsageMetadata",
	} {
		assert.True(t, names[name], "missing %s", name)
	}
}

func TestSeedMatrix_Transcription(t *testing.T) {
	rows := map[string]Scenario{}
	for _, sc := range SeedMatrix() {
		rows[sc.FullName()] = sc
	}
	late := rows["Stress_200k_LateUsageMetadata"]
	assert.Equal(t, 25, late.Turns)
	assert.Equal(t, 5, late.UsageFromTurn)
	assert.Equal(t, 2.5, late.LateTokenRatio)

	coding := rows["Brutal_200k_CodingAgent_DeepRefactor"].TurnPlan(0)
	assert.Len(t, coding.Steps, 6, "six sequential steps")

	burst := rows["Brutal_200k_SingleTurnFillsWindow"].TurnPlan(1)
	require.Len(t, burst.Steps, 1)
	assert.Len(t, burst.Steps[0].Calls, 20)

	defs := rows["Brutal_200k_ToolDefinitionsDominateWindow"]
	assert.Equal(t, 50, defs.ToolDefs)
	assert.Equal(t, 4000, defs.ToolDefSchemaSize)

	assert.True(t, rows["Brutal_1M_NoUsageMetadata"].NoUsageMetadata)
	assert.Equal(t, 12_000, rows["Stress_CompactionNoInfiniteLoop"].SystemPromptSize)
	assert.Equal(t, []int{80_000, 60_000, 90_000}, rows["Brutal_200k_MultipleInlinePerTurn"].TurnPlan(3).Images)
	assert.NotEmpty(t, rows["Brutal_8k_NoUsageMetadata_BeyondDefault"].KnownLimitation)

	assert.Zero(t, rows["Stress_200k_NormalConversation"].MinSummarizerCalls)
	assert.Positive(t, rows["Stress_200k_ToolHeavy"].MinSummarizerCalls)
	assert.GreaterOrEqual(t, rows["Stress_200k_RepeatedCompactions"].MinSummarizerCalls, 2)
	assert.Positive(t, rows["Brutal_8k_ToolResponseBiggerThanWindow"].MinSummarizerCalls)
}
