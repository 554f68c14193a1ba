package contextguardtest

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/adk-contextguard/contextguard/core/coretest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sharedTraces is the ADK v1 driver's trace of seed rows played with no
// guard (written by the root module's contextguardtest tests with
// -update-traces). One build cannot hold both ADK lines, so the two drivers
// are compared through this file.
const sharedTraces = "../../core/coretest/testdata/driver_traces.json"

// The v2 driver measures what the v1 driver measures, request for request:
// the same turns and steps, the same ground-truth tokens sent and built,
// the same contents, rejections, reported usage and markers. ADK v2's
// synthetic "Continue processing…" message would add one content to a
// request built from a log ending with a model content; no request of these
// runs is built so (each turn starts with the user's message, each step
// ends with function responses), so nothing differs.
func TestRun_MatchesTheV1DriversTrace(t *testing.T) {
	b, err := os.ReadFile(sharedTraces)
	require.NoError(t, err)
	var want map[string][]coretest.StepTrace
	require.NoError(t, json.Unmarshal(b, &want))
	require.NotEmpty(t, want)
	for name, steps := range want {
		t.Run(name, func(t *testing.T) {
			res, err := Run(context.Background(), matrixRow(t, name), RunConfig{})
			require.NoError(t, err)
			t.Log(res)
			assert.Equal(t, steps, res.Trace())
			rejected := 0
			for _, s := range steps {
				if s.Rejected {
					rejected++
				}
			}
			assert.Equal(t, rejected, res.OverflowsRejected)
			assert.Equal(t, res.OverflowsRejected, res.OverflowsSurfaced, "no guard: every overflow surfaces")
		})
	}
}
