package main

import (
	"archive/zip"
	"bytes"
	"io"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

const testVersion = "v0.0.0-releasecheck.gabcdef012345"

func TestReleasedGoMod(t *testing.T) {
	released := map[string]bool{modulePrefix + "/core": true, modulePrefix + "/adkv2": true, modulePrefix: true}
	tests := []struct {
		name         string
		goMod        string
		wantRequire  map[string]string // module path to version
		wantReplaces []string          // the old paths still replaced
		wantErr      string
	}{
		{
			name: "the root drops core's replace and requires core at the version",
			goMod: "module " + modulePrefix + "\n\ngo 1.26.6\n\nrequire (\n\t" + modulePrefix + "/core v0.0.0\n\tgoogle.golang.org/adk v1.7.0\n)\n\n" +
				"replace " + modulePrefix + "/core => ./core\n",
			wantRequire: map[string]string{modulePrefix + "/core": testVersion, "google.golang.org/adk": "v1.7.0"},
		},
		{
			name: "adkv2's replace of ../core is dropped too",
			goMod: "module " + modulePrefix + "/adkv2\n\ngo 1.26.6\n\nrequire " + modulePrefix + "/core v0.0.0\n\nrequire google.golang.org/adk/v2 v2.2.0\n\n" +
				"replace " + modulePrefix + "/core => ../core\n",
			wantRequire: map[string]string{modulePrefix + "/core": testVersion, "google.golang.org/adk/v2": "v2.2.0"},
		},
		{
			name: "a replace block of released modules is dropped whole",
			goMod: "module example.com/x\n\ngo 1.26.6\n\nrequire (\n\t" + modulePrefix + " v0.0.0\n\t" + modulePrefix + "/core v0.0.0\n)\n\n" +
				"replace (\n\t" + modulePrefix + " => ../\n\t" + modulePrefix + "/core => ../core\n)\n",
			wantRequire: map[string]string{modulePrefix: testVersion, modulePrefix + "/core": testVersion},
		},
		{
			name:        "core, which replaces nothing, keeps its requirements",
			goMod:       "module " + modulePrefix + "/core\n\ngo 1.26.6\n\nrequire charm.land/catwalk v0.52.1\n",
			wantRequire: map[string]string{"charm.land/catwalk": "v0.52.1"},
		},
		{
			name: "a replace by another module version is kept: a user's build ignores it, but it points nowhere local",
			goMod: "module " + modulePrefix + "\n\ngo 1.26.6\n\nrequire example.com/dep v1.0.0\n\n" +
				"replace example.com/dep => example.com/fork v1.0.1\n",
			wantRequire:  map[string]string{"example.com/dep": "v1.0.0"},
			wantReplaces: []string{"example.com/dep"},
		},
		{
			name: "a directory replace of a module not released is an error",
			goMod: "module " + modulePrefix + "\n\ngo 1.26.6\n\nrequire example.com/dep v0.0.0\n\n" +
				"replace example.com/dep => ../dep\n",
			wantErr: "replaces example.com/dep by the directory ../dep",
		},
		{name: "a go.mod that does not parse is an error", goMod: "module\n", wantErr: "parsing go.mod"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := releasedGoMod("go.mod", []byte(tt.goMod), released, testVersion)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			f, err := modfile.Parse("go.mod", out, nil)
			require.NoError(t, err, "the released go.mod parses:\n%s", out)
			got := make(map[string]string)
			for _, r := range f.Require {
				got[r.Mod.Path] = r.Mod.Version
			}
			assert.Equal(t, tt.wantRequire, got)
			var replaced []string
			for _, r := range f.Replace {
				replaced = append(replaced, r.Old.Path)
			}
			assert.Equal(t, tt.wantReplaces, replaced)
		})
	}
}

// zipContents returns each file's content in a module zip, by its path in
// the module.
func zipContents(t *testing.T, m module.Version, data []byte) map[string]string {
	t.Helper()
	z, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	require.NoError(t, err)
	got := make(map[string]string)
	prefix := m.String() + "/"
	for _, f := range z.File {
		require.Truef(t, len(f.Name) > len(prefix) && f.Name[:len(prefix)] == prefix, "%s is under %s", f.Name, prefix)
		rc, err := f.Open()
		require.NoError(t, err)
		b, err := io.ReadAll(rc)
		require.NoError(t, err)
		require.NoError(t, rc.Close())
		got[f.Name[len(prefix):]] = string(b)
	}
	return got
}

func TestModuleZip(t *testing.T) {
	repo := []modzip.File{
		memFile{path: "LICENSE", data: []byte("license")},
		memFile{path: "go.mod", data: []byte("module root // as in the repository\n")},
		memFile{path: "plugin.go", data: []byte("package root\n")},
		memFile{path: "core/go.mod", data: []byte("module root/core\n")},
		memFile{path: "core/engine.go", data: []byte("package core\n")},
		memFile{path: "core/tool/main.go", data: []byte("package main\n")},
		memFile{path: "core/nested/go.mod", data: []byte("module root/core/nested\n")},
		memFile{path: "core/nested/n.go", data: []byte("package nested\n")},
		memFile{path: "plugin/go.mod", data: []byte("module root/plugin\n")},
		memFile{path: "plugin/LICENSE", data: []byte("the plugin's own license")},
		memFile{path: "plugin/p.go", data: []byte("package plugin\n")},
	}
	tests := []struct {
		name string
		dir  string
		path string
		want map[string]string
	}{
		{
			name: "the root leaves out every nested module",
			dir:  "", path: "example.com/root",
			want: map[string]string{"LICENSE": "license", "go.mod": "released go.mod\n", "plugin.go": "package root\n"},
		},
		{
			name: "a module in a subdirectory gets the root's LICENSE and leaves out its nested module",
			dir:  "core", path: "example.com/root/core",
			want: map[string]string{
				"LICENSE": "license", "go.mod": "released go.mod\n",
				"engine.go": "package core\n", "tool/main.go": "package main\n",
			},
		},
		{
			name: "a module with its own LICENSE keeps it",
			dir:  "plugin", path: "example.com/root/plugin",
			want: map[string]string{"LICENSE": "the plugin's own license", "go.mod": "released go.mod\n", "p.go": "package plugin\n"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := module.Version{Path: tt.path, Version: testVersion}
			data, st, err := moduleZip(repo, tt.dir, m, []byte("released go.mod\n"))
			require.NoError(t, err)
			got := zipContents(t, m, data)
			assert.Equal(t, tt.want, got)

			var unpacked int64
			for _, c := range got {
				unpacked += int64(len(c))
			}
			assert.Equal(t, zipStats{zipBytes: int64(len(data)), unpackedBytes: unpacked, files: len(tt.want)}, st)
		})
	}
}

func TestModuleZip_BadVersionIsAnError(t *testing.T) {
	files := []modzip.File{memFile{path: "go.mod", data: []byte("module example.com/m\n")}}
	_, _, err := moduleZip(files, "", module.Version{Path: "example.com/m", Version: "v1"}, []byte("module example.com/m\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not canonical")
}

func TestArchiveFiles(t *testing.T) {
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for _, name := range []string{"dir/", "dir/a.go", "go.mod"} {
		f, err := w.Create(name)
		require.NoError(t, err)
		if !strings.HasSuffix(name, "/") {
			_, err = f.Write([]byte("content of " + name))
			require.NoError(t, err)
		}
	}
	require.NoError(t, w.Close())
	z, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	require.NoError(t, err)

	files, err := archiveFiles(z)
	require.NoError(t, err)
	var paths []string
	for _, f := range files {
		paths = append(paths, f.Path())
	}
	sort.Strings(paths)
	assert.Equal(t, []string{"dir/a.go", "go.mod"}, paths, "directories are no files")

	data, err := readFile(files, "dir/a.go")
	require.NoError(t, err)
	assert.Equal(t, "content of dir/a.go", string(data))
	_, err = readFile(files, "missing.go")
	require.ErrorContains(t, err, "missing.go")
}
