package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	modzip "golang.org/x/mod/zip"
)

// readmeWith returns a README whose install section marks a block for
// every installCheck, with blocks for the names in replace swapped for
// their text.
func readmeWith(replace map[string]string) string {
	var b strings.Builder
	b.WriteString("# Title\n\n## Install\n\nSome prose.\n\n")
	for _, c := range installChecks {
		if r, ok := replace[c.name]; ok {
			b.WriteString(r)
			continue
		}
		b.WriteString("<!-- install-check: " + c.name + " -->\n```sh\ngo work use $CHECKOUT # " + c.name + "\n```\n\n")
	}
	b.WriteString("## Quickstart\n\n```go\npackage main\n```\n")
	return b.String()
}

func TestInstallBlocks(t *testing.T) {
	tests := []struct {
		name    string
		readme  string
		wantErr string
	}{
		{name: "every check marked once, each before a shell block", readme: readmeWith(nil)},
		{
			name:   "a bash or shell fence and surrounding spaces are accepted",
			readme: readmeWith(map[string]string{"v1-replace": "  <!-- install-check: v1-replace -->  \n```bash\ngo work use $CHECKOUT # v1-replace\n```\n"}),
		},
		{name: "a check left unmarked", readme: readmeWith(map[string]string{"v2-replace": ""}), wantErr: "no block marked <!-- install-check: v2-replace -->"},
		{
			name:    "a marker naming no check",
			readme:  readmeWith(nil) + "<!-- install-check: v3-magic -->\n```sh\ntrue\n```\n",
			wantErr: `unknown install check "v3-magic"`,
		},
		{
			name:    "a check marked twice",
			readme:  readmeWith(nil) + "<!-- install-check: v1-workspace -->\n```sh\ntrue\n```\n",
			wantErr: `"v1-workspace" marked twice`,
		},
		{
			name:    "a marker followed by a blank line",
			readme:  readmeWith(map[string]string{"v1-workspace": "<!-- install-check: v1-workspace -->\n\n```sh\ntrue\n```\n"}),
			wantErr: "not followed by a shell block",
		},
		{
			name:    "a marker before a Go block",
			readme:  readmeWith(map[string]string{"v2-workspace": "<!-- install-check: v2-workspace -->\n```go\npackage main\n```\n"}),
			wantErr: "not followed by a shell block",
		},
		{
			name:    "a block left open",
			readme:  "<!-- install-check: v1-workspace -->\n```sh\ngo work use $CHECKOUT\n",
			wantErr: "not closed",
		},
		{
			name:    "an empty block",
			readme:  readmeWith(map[string]string{"v1-replace": "<!-- install-check: v1-replace -->\n```sh\n\n```\n"}),
			wantErr: "is empty",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := installBlocks([]byte(tt.readme))
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			require.Len(t, got, len(installChecks))
			for _, c := range installChecks {
				assert.Equal(t, "go work use $CHECKOUT # "+c.name+"\n", got[c.name], c.name)
			}
		})
	}
}

func TestInstallChecks_CoverEveryLineTwice(t *testing.T) {
	ways := map[string]int{}
	for _, c := range installChecks {
		ways[c.line.name]++
		assert.True(t, strings.HasPrefix(c.name, map[string]string{"ADK v1": "v1-", "ADK v2": "v2-"}[c.line.name]), "%s installs the %s plugin", c.name, c.line.name)
	}
	assert.Equal(t, map[string]int{"ADK v1": 2, "ADK v2": 2}, ways, "a workspace and the replace lines for each line")
}

func TestInstallEnv(t *testing.T) {
	base := []string{"HOME=/home/u", "GOWORK=off", "CHECKOUT=/elsewhere", "GOFLAGS=-buildvcs=false"}
	env := installEnv(base, "/tmp/checkout")
	_, hasWork := lastValue(env, "GOWORK")
	assert.False(t, hasWork, "a block's go.work is found, not switched off")
	got, _ := lastValue(env, checkoutVar)
	assert.Equal(t, "/tmp/checkout", got)
	assert.Contains(t, env, "HOME=/home/u")
	assert.Contains(t, env, "GOFLAGS=-buildvcs=false")
	assert.Equal(t, []string{"HOME=/home/u", "GOWORK=off", "CHECKOUT=/elsewhere", "GOFLAGS=-buildvcs=false"}, base, "the base is not modified")
}

func TestExtractCheckout(t *testing.T) {
	dir := t.TempDir()
	files := []modzip.File{
		memFile{path: "go.mod", data: []byte("module example.com/m\n")},
		memFile{path: "core/internal/tokens/weights.json", data: []byte("{}")},
	}
	require.NoError(t, extractCheckout(files, dir))
	for p, want := range map[string]string{"go.mod": "module example.com/m\n", "core/internal/tokens/weights.json": "{}"} {
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
		require.NoError(t, err)
		assert.Equal(t, want, string(got), p)
	}
}
