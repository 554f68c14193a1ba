package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/mod/module"
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
			name:      "the file proxy comes first and the environment's proxy still serves the rest",
			env:       goEnv{GOPROXY: "https://proxy.golang.org,direct"},
			wantProxy: "file:///tmp/p,https://proxy.golang.org,direct",
			wantNoSum: modulePrefix,
			flag:      "-mod=mod",
		},
		{
			name:      "the environment's GONOSUMDB and GOFLAGS are kept",
			env:       goEnv{GOPROXY: "https://goproxy.example", GONOSUMDB: "corp.example", GOFLAGS: "-buildvcs=false"},
			wantProxy: "file:///tmp/p,https://goproxy.example",
			wantNoSum: "corp.example," + modulePrefix,
			flag:      "-buildvcs=false -mod=mod",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := []string{"HOME=/home/u", "GOPROXY=off", "GOWORK=/repo/go.work"}
			env := consumerEnv(base, tt.env, "/tmp/p")
			for key, want := range map[string]string{
				"GOPROXY": tt.wantProxy, "GONOSUMDB": tt.wantNoSum, "GOFLAGS": tt.flag, "GOWORK": "off", "HOME": "/home/u",
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

func TestForgetCached(t *testing.T) {
	const other = "v0.0.0-releasecheck.g000000000000"
	tests := []struct {
		name string
		// keepOther caches another version of the module besides the one
		// forgotten.
		keepOther bool
	}{
		{name: "the only version: its files, list and directories go"},
		{name: "another version stays cached and listed", keepOther: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			modcache := t.TempDir()
			m := module.Version{Path: "github.com/Org/mod", Version: testVersion}
			download := filepath.Join(modcache, "cache", "download", "github.com", "!org", "mod", "@v")
			require.NoError(t, os.MkdirAll(download, 0o755))
			list := testVersion + "\n"
			if tt.keepOther {
				list = other + "\n" + list
				require.NoError(t, os.WriteFile(filepath.Join(download, other+".zip"), nil, 0o644))
			}
			require.NoError(t, os.WriteFile(filepath.Join(download, "list"), []byte(list), 0o644))
			for _, ext := range []string{".info", ".mod", ".zip", ".ziphash"} {
				require.NoError(t, os.WriteFile(filepath.Join(download, testVersion+ext), nil, 0o644))
			}
			extracted := filepath.Join(modcache, "github.com", "!org", "mod@"+testVersion)
			require.NoError(t, os.MkdirAll(filepath.Join(extracted, "sub"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(extracted, "sub", "a.go"), nil, 0o444))
			require.NoError(t, os.Chmod(filepath.Join(extracted, "sub"), 0o555)) // as the go command leaves it
			require.NoError(t, os.Chmod(extracted, 0o555))

			require.NoError(t, forgetCached(modcache, m))

			assert.NoDirExists(t, extracted)
			assert.NoDirExists(t, filepath.Join(modcache, "github.com"), "the directories left empty go")
			if tt.keepOther {
				got, err := os.ReadFile(filepath.Join(download, "list"))
				require.NoError(t, err)
				assert.Equal(t, other+"\n", string(got))
				assert.FileExists(t, filepath.Join(download, other+".zip"))
				assert.NoFileExists(t, filepath.Join(download, testVersion+".zip"))
			} else {
				assert.NoDirExists(t, filepath.Join(modcache, "cache", "download", "github.com"))
				assert.DirExists(t, filepath.Join(modcache, "cache", "download"), "the cache's own directory stays")
			}
			require.NoError(t, forgetCached(modcache, m), "forgetting twice is no error")
		})
	}
}
