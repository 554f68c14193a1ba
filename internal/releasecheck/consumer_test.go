package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lastValue returns the value the last entry of key in env sets, as
// os/exec applies it.
func lastValue(env []string, key string) (string, bool) {
	value, found := "", false
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			value, found = v, true
		}
	}
	return value, found
}

func TestConsumerEnv(t *testing.T) {
	tests := []struct {
		name                       string
		env                        goEnv
		wantProxy, wantNoSum, flag string
	}{
		{
			name:      "the file proxy comes first, then the environment's module cache, and its proxy still serves the rest",
			env:       goEnv{GOPROXY: "https://proxy.golang.org,direct", GOMODCACHE: "/home/u/go/pkg/mod"},
			wantProxy: "file:///tmp/p,file:///home/u/go/pkg/mod/cache/download,https://proxy.golang.org,direct",
			wantNoSum: modulePrefix,
			flag:      "-mod=mod -modcacherw",
		},
		{
			name:      "the environment's GONOSUMDB and GOFLAGS are kept",
			env:       goEnv{GOPROXY: "https://goproxy.example", GONOSUMDB: "corp.example", GOFLAGS: "-buildvcs=false", GOMODCACHE: "/c"},
			wantProxy: "file:///tmp/p,file:///c/cache/download,https://goproxy.example",
			wantNoSum: "corp.example," + modulePrefix,
			flag:      "-buildvcs=false -mod=mod -modcacherw",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := []string{"HOME=/home/u", "GOPROXY=off", "GOWORK=/repo/go.work"}
			env := consumerEnv(base, tt.env, "/tmp/p", "/tmp/cache")
			for key, want := range map[string]string{
				"GOPROXY": tt.wantProxy, "GONOSUMDB": tt.wantNoSum, "GOFLAGS": tt.flag, "GOWORK": "off", "HOME": "/home/u",
				"GOMODCACHE": "/tmp/cache",
			} {
				got, ok := lastValue(env, key)
				require.True(t, ok, key)
				assert.Equal(t, want, got, key)
			}
			assert.Equal(t, []string{"HOME=/home/u", "GOPROXY=off", "GOWORK=/repo/go.work"}, base, "the base is not modified")
		})
	}
}

func TestRehearsalSource(t *testing.T) {
	require.True(t, strings.HasPrefix(rehearsalSource, buildIgnore),
		"rehearsal/main.go must start with its build constraint, which the consumer's copy drops")
	copied := strings.TrimPrefix(rehearsalSource, buildIgnore)
	assert.NotContains(t, copied, "go:build", "the consumer's copy builds")
	assert.Contains(t, copied, "\npackage main\n")
}

func TestDirBytes(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]int
		want  int64
	}{
		{name: "an empty cache holds nothing", files: map[string]int{}, want: 0},
		{
			name:  "every regular file counts, at any depth",
			files: map[string]int{"cache/download/m/@v/v1.0.0.zip": 1000, "m@v1.0.0/go.mod": 20, "m@v1.0.0/sub/a.go": 300},
			want:  1320,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for p, n := range tt.files {
				require.NoError(t, writeFile(filepath.Join(dir, filepath.FromSlash(p)), strings.Repeat("x", n)))
			}
			got, err := dirBytes(dir)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestDirBytes_MissingDirectoryIsAnError(t *testing.T) {
	_, err := dirBytes(filepath.Join(t.TempDir(), "absent"))
	require.Error(t, err)
}

func TestADKAppSource(t *testing.T) {
	for _, line := range adkLines {
		src := fmt.Sprintf(adkAppSource, line.adk)
		assert.Contains(t, src, `"`+line.adk+`/runner"`, line.name)
		assert.NotContains(t, src, "contextguard", "the app before the install")
		assert.NotContains(t, src, "%!", "every verb formatted")
	}
}

func TestKitTestSource(t *testing.T) {
	for _, line := range adkLines {
		src := fmt.Sprintf(kitTestSource, line.kit)
		assert.Contains(t, src, `"`+line.kit+`"`, line.name)
		assert.True(t, strings.HasSuffix(line.kit, "/contextguardtest"), "the source names the package contextguardtest: %s", line.kit)
	}
}
