package contextguardtest

import (
	"encoding/json"
	"testing"

	"github.com/adk-contextguard/contextguard/core/coretest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMCPTools(t *testing.T) {
	tools := mcpTools(4, 3000, 1)
	require.Len(t, tools, 4)
	for i, tl := range tools {
		st := tl.(*schemaTool)
		assert.Equal(t, coretest.MCPToolName(i), st.Name())
		schema, err := json.Marshal(st.Declaration().ParametersJsonSchema)
		require.NoError(t, err)
		assert.InEpsilon(t, 3000, len(schema), 0.1, "schema of %s is %d bytes", st.Name(), len(schema))
		out, err := st.Run(nil, map[string]any{"size": 100, "kind": "yaml", "seed": 3, "tag": "t0.s0.c0", "marker": "MARK-1"})
		require.NoError(t, err)
		assert.Equal(t, coretest.Generate(coretest.KindYAML, 100, 3), out["output"])
		assert.Equal(t, "t0.s0.c0", out["tag"])
	}
	_, err := tools[0].(*schemaTool).Run(nil, "bad")
	assert.Error(t, err)
}
