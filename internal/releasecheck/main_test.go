package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInside(t *testing.T) {
	tests := []struct {
		name, root, dir string
		want            bool
	}{
		{name: "the root itself", root: "/repo", dir: "/repo", want: true},
		{name: "a directory under it", root: "/repo", dir: "/repo/tmp/x", want: true},
		{name: "a sibling whose name starts with the root's", root: "/repo", dir: "/repo2/x", want: false},
		{name: "the system's temporary directory", root: "/home/dev/repo", dir: "/tmp/contextguard-releasecheck-1", want: false},
		{name: "a directory named ..x under the root", root: "/repo", dir: "/repo/..x", want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, inside(tt.root, tt.dir))
		})
	}
}

func TestInRepo(t *testing.T) {
	assert.Equal(t, "go.mod", inRepo("", "go.mod"))
	assert.Equal(t, "adkv2/go.mod", inRepo("adkv2", "go.mod"))
}

func TestWantADK(t *testing.T) {
	tests := []struct {
		name  string
		goMod string
		want  map[string]string
	}{
		{
			name:  "the v1 plugin requires ADK v1",
			goMod: "module " + modulePrefix + "\n\nrequire (\n\tgoogle.golang.org/adk v1.7.0\n\tgoogle.golang.org/genai v1.57.0\n)\n",
			want:  map[string]string{"google.golang.org/adk": "v1.7.0"},
		},
		{
			name:  "the v2 plugin requires ADK v2",
			goMod: "module " + modulePrefix + "/adkv2\n\nrequire google.golang.org/adk/v2 v2.2.0\n",
			want:  map[string]string{"google.golang.org/adk/v2": "v2.2.0"},
		},
		{name: "core requires no ADK", goMod: "module " + modulePrefix + "/core\n\nrequire charm.land/catwalk v0.52.1\n", want: map[string]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := map[string]string{}
			require.NoError(t, wantADK("go.mod", []byte(tt.goMod), got))
			assert.Equal(t, tt.want, got)
		})
	}
}
