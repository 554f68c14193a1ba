package contextguard

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// adapterFiles are the root package's files: the ADK v1 adapter over the
// engine, module core (ARCHITECTURE.md, Packages and modules). The engine's
// code goes into core, which imports no ADK package (core's
// TestEngine_ImportsNoADK); ADK v1 glue goes into these files. Keep this
// list short.
var adapterFiles = []string{
	"adapter_adk.go",     // the plugin, its callbacks' entry points, conversions, the recovery model's call
	"adapter_adk_api.go", // the public API that takes ADK types (Add, WithRecoveryModel, the in-state forms, CompactTool)
	"api.go",             // the engine's public API re-exported (aliases, wrappers, constants)
	"doc.go",             // the package doc
	"session_service.go", // the public API on ADK's session service (Usage, RequestCompaction, DisableSession, ...)
	"summarizer_llm.go",  // LLMSummarizer, which calls an ADK model
}

// TestAdapter_OnlyAdapterFiles: the root package holds only the adapter's
// files; the engine lives in module core.
func TestAdapter_OnlyAdapterFiles(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	var got []string
	for _, name := range files {
		if !strings.HasSuffix(name, "_test.go") {
			got = append(got, name)
		}
	}
	want := slices.Sorted(slices.Values(adapterFiles))
	assert.Equal(t, want, got, "the root package is the ADK v1 adapter: engine code goes into core/, ADK glue into the listed files")
}
