package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/mod/module"
)

func TestWriteProxyModule(t *testing.T) {
	at := time.Date(2026, 11, 27, 21, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		versions []module.Version
		wantDir  string // the module's @v directory, from the proxy's root
		wantList string
		wantBase string // the escaped version, the files' base name
	}{
		{
			name:     "one version of a module",
			versions: []module.Version{{Path: "github.com/adk-contextguard/contextguard/core", Version: testVersion}},
			wantDir:  "github.com/adk-contextguard/contextguard/core/@v",
			wantList: testVersion + "\n",
			wantBase: testVersion,
		},
		{
			name: "two versions share the list",
			versions: []module.Version{
				{Path: "example.com/m", Version: "v1.0.0"},
				{Path: "example.com/m", Version: "v1.1.0-rc.1"},
			},
			wantDir:  "example.com/m/@v",
			wantList: "v1.0.0\nv1.1.0-rc.1\n",
			wantBase: "v1.1.0-rc.1",
		},
		{
			name:     "upper-case letters are escaped in path and version",
			versions: []module.Version{{Path: "github.com/Org/Mod", Version: "v1.0.0-RC"}},
			wantDir:  "github.com/!org/!mod/@v",
			wantList: "v1.0.0-RC\n",
			wantBase: "v1.0.0-!r!c",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			var last module.Version
			for _, m := range tt.versions {
				require.NoError(t, writeProxyModule(root, m, at, []byte("module "+m.Path+"\n"), []byte("zip of "+m.Version)))
				last = m
			}
			dir := filepath.Join(root, filepath.FromSlash(tt.wantDir))
			list, err := os.ReadFile(filepath.Join(dir, "list"))
			require.NoError(t, err)
			assert.Equal(t, tt.wantList, string(list))

			info, err := os.ReadFile(filepath.Join(dir, tt.wantBase+".info"))
			require.NoError(t, err)
			var got proxyInfo
			require.NoError(t, json.Unmarshal(info, &got))
			assert.Equal(t, proxyInfo{Version: last.Version, Time: at}, got)

			mod, err := os.ReadFile(filepath.Join(dir, tt.wantBase+".mod"))
			require.NoError(t, err)
			assert.Equal(t, "module "+last.Path+"\n", string(mod))
			zipData, err := os.ReadFile(filepath.Join(dir, tt.wantBase+".zip"))
			require.NoError(t, err)
			assert.Equal(t, "zip of "+last.Version, string(zipData))
		})
	}
}

func TestWriteProxyModule_InvalidPathIsAnError(t *testing.T) {
	err := writeProxyModule(t.TempDir(), module.Version{Path: "Bad Path", Version: "v1.0.0"}, time.Time{}, nil, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "proxy path of Bad Path")
}

func TestProxyURL(t *testing.T) {
	assert.Equal(t, "file:///tmp/proxy", proxyURL("/tmp/proxy"))
}
