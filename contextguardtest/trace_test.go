package contextguardtest

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"testing"

	"github.com/adk-contextguard/contextguard/core/coretest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sharedTraces is the trace of the seed rows below played with no guard,
// shared with the ADK v2 driver's tests (adkv2/contextguardtest), which
// must measure the same requests: the two drivers are compared through it.
const sharedTraces = "../core/coretest/testdata/driver_traces.json"

var updateTraces = flag.Bool("update-traces", false, "rewrite "+sharedTraces+" from this driver's runs")

// tracedRows are seed rows covering parallel and sequential calls, MCP
// tool declarations, inline images, a late switch of the ground truth, and
// runs without usage metadata.
var tracedRows = []string{
	"Stress_8k_NormalConversation",
	"Stress_8k_KubeAgent",
	"Brutal_4k_CodingAgent",
	"Stress_8k_InlineSmallImages",
	"Brutal_8k_SequentialChain_NoUsageMetadata",
	"Brutal_8k_ToolDefsAndInlineCombined",
	"Stress_200k_LateUsageMetadata",
}

func TestRun_MatchesTheSharedTrace(t *testing.T) {
	got := map[string][]coretest.StepTrace{}
	for _, name := range tracedRows {
		res, err := Run(context.Background(), matrixRow(t, name), RunConfig{})
		require.NoError(t, err, name)
		require.NotEmpty(t, res.Requests, name)
		got[name] = res.Trace()
	}
	if *updateTraces {
		b, err := json.MarshalIndent(got, "", " ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(sharedTraces, append(b, '\n'), 0o644))
	}
	b, err := os.ReadFile(sharedTraces)
	require.NoError(t, err, "run with -update-traces to create it")
	var want map[string][]coretest.StepTrace
	require.NoError(t, json.Unmarshal(b, &want))
	for _, name := range tracedRows {
		assert.Equal(t, want[name], got[name], name)
	}
}
