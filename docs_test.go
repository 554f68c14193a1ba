package contextguard

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The repository's documents against the code: links that resolve, the
// supported ADK ranges as the modules require them, the install lines, and
// the package doc's runner example.

// documents are the repository's Markdown files whose relative links must
// resolve.
var documents = []string{"README.md", "ARCHITECTURE.md", "RELEASING.md", "examples/README.md", "integration/README.md"}

// markdownLink matches a Markdown link's target: [text](target).
var markdownLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

func TestDocs_RelativeLinksResolve(t *testing.T) {
	for _, doc := range documents {
		t.Run(doc, func(t *testing.T) {
			b, err := os.ReadFile(doc)
			require.NoError(t, err)
			for _, m := range markdownLink.FindAllStringSubmatch(string(b), -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				target, _, _ = strings.Cut(target, "#")
				_, err := os.Stat(filepath.Join(filepath.Dir(doc), target))
				assert.NoError(t, err, "%s links to %s, which does not exist", doc, m[1])
			}
		})
	}
}

// requiredVersion is the version of module path that the go.mod at gomod
// requires.
func requiredVersion(t *testing.T, gomod, path string) string {
	t.Helper()
	b, err := os.ReadFile(gomod)
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(path) + `\s+(v\S+)`).FindStringSubmatch(string(b))
	require.NotNil(t, m, "%s requires no %s", gomod, path)
	return m[1]
}

// TestDocs_SupportedRangesAndInstall: the README's table of ADK lines names
// the minor version each plugin's go.mod requires, and its Install section
// has the go get line of each plugin.
func TestDocs_SupportedRangesAndInstall(t *testing.T) {
	b, err := os.ReadFile("README.md")
	require.NoError(t, err)
	readme := string(b)
	tests := []struct {
		gomod, adk, module string
	}{
		{"go.mod", "google.golang.org/adk", "github.com/adk-contextguard/contextguard"},
		{"adkv2/go.mod", "google.golang.org/adk/v2", "github.com/adk-contextguard/contextguard/adkv2"},
	}
	for _, tt := range tests {
		t.Run(tt.module, func(t *testing.T) {
			v := requiredVersion(t, tt.gomod, tt.adk)
			minor := v[:strings.LastIndex(v, ".")]
			assert.Contains(t, readme, "| `"+tt.adk+"` "+minor+".x |", "the table of ADK lines names %s %s.x, as %s requires %s", tt.adk, minor, tt.gomod, v)
			assert.Contains(t, readme, "go get "+tt.module+"@latest", "the Install section's go get line")
		})
	}
	assert.Contains(t, readme, "## Install")
	assert.Contains(t, readme, "EventsCompactionConfig", "the README says what to do about ADK v2.3's own compaction")
}

// TestDocs_PackageDocRunnerCreatesTheSession: the package doc's runner
// example of each line sets AutoCreateSession, without which its first Run
// fails with "session not found".
func TestDocs_PackageDocRunnerCreatesTheSession(t *testing.T) {
	for _, f := range []string{"doc.go", "adkv2/doc.go"} {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		assert.Contains(t, string(b), "AutoCreateSession: true", f)
	}
}
