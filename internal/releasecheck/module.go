package main

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

// release is one library module a release tags (RELEASING.md).
type release struct {
	// name is how the rehearsal's output names it.
	name string
	// dir is the module's directory in the repository, "" for the root.
	dir string
	// path is its module path.
	path string
	// maxZip is the largest zip of it a release may ship.
	maxZip int64
}

// modulePrefix is the module path of the repository's root.
const modulePrefix = "github.com/adk-contextguard/contextguard"

// releases are the modules a release tags, in the order RELEASING.md tags
// them: the engine first, then the plugin of each ADK line, which require it.
var releases = []release{
	{name: "core", dir: "core", path: modulePrefix + "/core", maxZip: maxCoreZipBytes},
	{name: "root", dir: "", path: modulePrefix, maxZip: maxZipBytes},
	{name: "adkv2", dir: "adkv2", path: modulePrefix + "/adkv2", maxZip: maxZipBytes},
}

// releasedGoMod returns the go.mod a release commits for a module
// (RELEASING.md, step 2): every requirement of a module released with it
// at the release's version, and the replace directives that point such a
// module at a directory of the repository dropped. A replace of any other
// module by a directory is an error: a user's build ignores it, so the
// released module would not build as it does in the repository.
func releasedGoMod(file string, data []byte, released map[string]bool, version string) ([]byte, error) {
	f, err := modfile.Parse(file, data, nil)
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", file, err)
	}
	for _, r := range f.Replace {
		if !modfile.IsDirectoryPath(r.New.Path) {
			continue
		}
		if !released[r.Old.Path] {
			return nil, fmt.Errorf("%s replaces %s by the directory %s, which a user's build ignores, and it is not released with it", file, r.Old.Path, r.New.Path)
		}
		if err := f.DropReplace(r.Old.Path, r.Old.Version); err != nil {
			return nil, fmt.Errorf("%s: dropping the replace of %s: %w", file, r.Old.Path, err)
		}
	}
	for _, r := range f.Require {
		if released[r.Mod.Path] {
			if err := f.AddRequire(r.Mod.Path, version); err != nil {
				return nil, fmt.Errorf("%s: requiring %s %s: %w", file, r.Mod.Path, version, err)
			}
		}
	}
	f.Cleanup()
	out, err := f.Format()
	if err != nil {
		return nil, fmt.Errorf("formatting %s: %w", file, err)
	}
	return out, nil
}

// zipStats describes a module zip.
type zipStats struct {
	// zipBytes is the zip's size, what a user downloads.
	zipBytes int64
	// unpackedBytes is the sum of its files' sizes, what the module cache
	// holds.
	unpackedBytes int64
	// files is how many files it holds.
	files int
}

// moduleZip builds the module zip of m from a repository's files (paths
// relative to the repository's root), as a module proxy would for a tag:
// the files under dir, less nested modules, vendor directories and
// anything else golang.org/x/mod/zip leaves out, with go.mod's content
// replaced by goMod. A module in a subdirectory without a LICENSE gets the
// root's, as the go command's proxy protocol does.
func moduleZip(files []modzip.File, dir string, m module.Version, goMod []byte) ([]byte, zipStats, error) {
	prefix := ""
	if dir != "" {
		prefix = dir + "/"
	}
	var (
		mine       []modzip.File
		license    modzip.File
		hasLicense bool
	)
	for _, f := range files {
		p := f.Path()
		if p == "LICENSE" {
			license = f
		}
		rel, ok := strings.CutPrefix(p, prefix)
		if !ok || rel == "" {
			continue
		}
		switch rel {
		case "go.mod":
			mine = append(mine, memFile{path: "go.mod", data: goMod})
			continue
		case "LICENSE":
			hasLicense = true
		}
		mine = append(mine, renamed{File: f, path: rel})
	}
	if !hasLicense && license != nil && dir != "" {
		mine = append(mine, renamed{File: license, path: "LICENSE"})
	}
	var buf bytes.Buffer
	if err := modzip.Create(&buf, m, mine); err != nil {
		return nil, zipStats{}, fmt.Errorf("zipping %s: %w", m, err)
	}
	z, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		return nil, zipStats{}, fmt.Errorf("reading the zip of %s: %w", m, err)
	}
	st := zipStats{zipBytes: int64(buf.Len()), files: len(z.File)}
	for _, f := range z.File {
		st.unpackedBytes += int64(f.UncompressedSize64)
	}
	return buf.Bytes(), st, nil
}

// archiveFiles returns the files of a git archive as golang.org/x/mod/zip
// files.
func archiveFiles(z *zip.Reader) ([]modzip.File, error) {
	var files []modzip.File
	for _, f := range z.File {
		if strings.HasSuffix(f.Name, "/") {
			continue
		}
		files = append(files, zipEntry{f: f})
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("the archive holds no file")
	}
	return files, nil
}

// readFile returns the content of the file at p among files.
func readFile(files []modzip.File, p string) ([]byte, error) {
	for _, f := range files {
		if f.Path() != p {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("opening %s: %w", p, err)
		}
		defer rc.Close()
		data, err := io.ReadAll(rc)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", p, err)
		}
		return data, nil
	}
	return nil, fmt.Errorf("%s: %w", p, fs.ErrNotExist)
}

// zipEntry is a file of a git archive.
type zipEntry struct{ f *zip.File }

func (e zipEntry) Path() string                 { return e.f.Name }
func (e zipEntry) Lstat() (fs.FileInfo, error)  { return e.f.FileInfo(), nil }
func (e zipEntry) Open() (io.ReadCloser, error) { return e.f.Open() }

// renamed is a file at another path.
type renamed struct {
	modzip.File
	path string
}

func (r renamed) Path() string { return r.path }

// memFile is a regular file held in memory.
type memFile struct {
	path string
	data []byte
}

func (m memFile) Path() string                 { return m.path }
func (m memFile) Lstat() (fs.FileInfo, error)  { return memInfo{m}, nil }
func (m memFile) Open() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(m.data)), nil }

// memInfo is a memFile's fs.FileInfo.
type memInfo struct{ m memFile }

func (i memInfo) Name() string       { return path.Base(i.m.path) }
func (i memInfo) Size() int64        { return int64(len(i.m.data)) }
func (i memInfo) Mode() fs.FileMode  { return 0o644 }
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return false }
func (i memInfo) Sys() any           { return nil }
