package core

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// adkModule is the module path of ADK-Go v1; ADK v2's module paths start
// with it too (google.golang.org/adk/v2).
const adkModule = "google.golang.org/adk"

func isADK(path string) bool { return path == adkModule || strings.HasPrefix(path, adkModule+"/") }

// TestEngine_ImportsNoADK: no package of the core module, nor its tests,
// imports an ADK package or a package that depends on one (ARCHITECTURE.md,
// The engine and the ADK adapter): the engine serves both ADK lines through
// its seams, and its module requires no ADK version.
func TestEngine_ImportsNoADK(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-test", "./...").Output()
	require.NoError(t, err, "go list -deps -test ./... in the core module")
	deps := strings.Fields(string(out))
	require.NotEmpty(t, deps)
	for _, dep := range deps {
		if isADK(dep) {
			t.Errorf("the core module depends on %s: move the ADK code to an adapter (the root module for ADK v1, adkv2 for ADK v2)", dep)
		}
	}
	require.Contains(t, deps, "github.com/adk-contextguard/contextguard/core", "go list ran in the core module")
	t.Logf("the core module's packages depend on %d packages, none of ADK", len(deps))
}
