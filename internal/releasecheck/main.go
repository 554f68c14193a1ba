// Command releasecheck rehearses a release of contextguard (RELEASING.md):
// it builds the module zips of core, the root (the ADK v1 plugin) and
// adkv2 (the ADK v2 plugin) from one commit at a test version, with the
// go.mod a release commits (each plugin requiring core at that version, no
// replace directive), serves them from a file module proxy, and in a fresh
// consumer module per ADK line, outside the repository and with an empty
// module cache of its own, installs the plugin with go get, adds a test
// that imports the plugin's test kit, runs go mod tidy, measures what that
// added to the module cache, and builds and runs its quickstart against a
// local Gemini API. It fails when core's zip is over maxCoreZipBytes, a
// plugin's over maxZipBytes, a consumer's module cache grew by more than
// maxConsumerCacheBytes, or a tracked file is over maxTrackedBytes without
// a line in .large-files. Last, it runs the README's install blocks (the
// two ways to use each plugin from a checkout, install.go) as written.
//
// Usage, from this directory (make release-check does it):
//
//	go run . [-repo DIR] [-rev REV] [-go GO]
//
// It prints each module zip's size, zipped and unpacked. It uses no network
// but the go command's module proxy (GOPROXY), for ADK and the other
// dependencies.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

// versionPrefix starts the test version of a rehearsal, which ends with
// the commit's abbreviated hash: a prerelease of v0.0.0, which no real
// release can be mistaken for.
const versionPrefix = "v0.0.0-releasecheck.g"

// hashDigits is how many hex digits of the commit's hash the test version
// carries, as git abbreviates them.
const hashDigits = 12

func main() {
	repo := flag.String("repo", "", "the repository's root (default: the git work tree of the current directory)")
	rev := flag.String("rev", "HEAD", "the commit to release")
	goBin := flag.String("go", "go", "the go command")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, *repo, *rev, *goBin)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "release-check FAILED:", err)
		os.Exit(1)
	}
	fmt.Println("release-check passed")
}

func run(ctx context.Context, repo, rev, goBin string) (err error) {
	if repo == "" {
		out, err := git(ctx, ".", "rev-parse", "--show-toplevel")
		if err != nil {
			return err
		}
		repo = strings.TrimSpace(string(out))
	}
	c, err := resolveCommit(ctx, repo, rev)
	if err != nil {
		return err
	}
	version := versionPrefix + c.hash[:hashDigits]
	fmt.Printf("== release rehearsal of %s (%s) at %s\n", rev, c.hash, version)
	if status, err := git(ctx, repo, "status", "--porcelain", "--untracked-files=no"); err == nil && len(status) > 0 {
		fmt.Printf("   (the working tree has uncommitted changes: the rehearsal releases the commit, not them)\n")
	}

	var problems []string
	largeProblems, err := checkLargeFiles(ctx, repo, rev)
	if err != nil {
		return err
	}
	problems = append(problems, largeProblems...)

	z, err := archive(ctx, repo, rev)
	if err != nil {
		return err
	}
	files, err := archiveFiles(z)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "contextguard-releasecheck-")
	if err != nil {
		return fmt.Errorf("temporary directory: %w", err)
	}
	defer func() {
		if rmErr := removeAll(tmp); rmErr != nil && err == nil {
			err = fmt.Errorf("removing %s: %w", tmp, rmErr)
		}
	}()
	if inside(repo, tmp) {
		return fmt.Errorf("the temporary directory %s is inside the repository %s: set TMPDIR elsewhere, so the consumer modules are a user's", tmp, repo)
	}
	proxyRoot := filepath.Join(tmp, "proxy")

	released := make(map[string]bool)
	for _, r := range releases {
		released[r.path] = true
	}
	want := make(map[string]string) // the versions a consumer must resolve
	fmt.Println("== module zips")
	for _, r := range releases {
		m := module.Version{Path: r.path, Version: version}
		goModPath := inRepo(r.dir, "go.mod")
		data, err := readFile(files, goModPath)
		if err != nil {
			return err
		}
		goMod, err := releasedGoMod(goModPath, data, released, version)
		if err != nil {
			return err
		}
		zipData, st, err := moduleZip(files, r.dir, m, goMod)
		if err != nil {
			return err
		}
		fmt.Printf("   %-6s %s: zip %d bytes, unpacked %d bytes in %d files\n", r.name, m, st.zipBytes, st.unpackedBytes, st.files)
		if p := checkZipSize(m.String(), st.zipBytes, r.maxZip); p != "" {
			problems = append(problems, p)
		}
		if err := writeProxyModule(proxyRoot, m, c.time, goMod, zipData); err != nil {
			return err
		}
		want[r.path] = version
		if err := wantADK(goModPath, goMod, want); err != nil {
			return err
		}
	}
	// A zip over its limit does not stop the rehearsal: what the consumers
	// download is measured too, and every problem is reported at the end.
	env, err := readGoEnv(ctx, goBin)
	if err != nil {
		return err
	}
	for _, line := range adkLines {
		fmt.Printf("== %s: go get %s@%s in a fresh module with an empty module cache, then its quickstart\n", line.name, line.plugin, version)
		quickstart, err := readFile(files, line.quickstart)
		if err != nil {
			return err
		}
		lineWant := map[string]string{line.plugin: version, modulePrefix + "/core": version, line.adk: want[line.adk]}
		added, err := rehearse(ctx, goBin, os.Environ(), env, proxyRoot, tmp, line, version, string(quickstart), lineWant)
		if err != nil {
			return err
		}
		if p := checkCacheGrowth(line.name, added, maxConsumerCacheBytes); p != "" {
			problems = append(problems, p)
		}
	}
	if err := checkInstall(ctx, goBin, files, tmp, want); err != nil {
		return err
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "\n"))
	}
	return nil
}

// checkInstall runs the README's install blocks (install.go) against a
// checkout of the commit extracted under tmp; want holds the ADK version
// of each line.
func checkInstall(ctx context.Context, goBin string, files []modzip.File, tmp string, want map[string]string) error {
	readme, err := readFile(files, readmeFile)
	if err != nil {
		return err
	}
	blocks, err := installBlocks(readme)
	if err != nil {
		return err
	}
	checkout := filepath.Join(tmp, "checkout")
	if err := extractCheckout(files, checkout); err != nil {
		return fmt.Errorf("extracting the checkout: %w", err)
	}
	fmt.Printf("== the install section of %s, from a checkout at $%s\n", readmeFile, checkoutVar)
	env := installEnv(os.Environ(), checkout)
	for _, c := range installChecks {
		quickstart, err := readFile(files, c.line.quickstart)
		if err != nil {
			return err
		}
		if err := runInstallCheck(ctx, goBin, env, tmp, c, want[c.line.adk], string(quickstart), blocks[c.name]); err != nil {
			return err
		}
	}
	return nil
}

// inside reports whether dir is root or a directory under it.
func inside(root, dir string) bool {
	rel, err := filepath.Rel(root, dir)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// inRepo returns the repository path of file, a path in the module at dir.
func inRepo(dir, file string) string {
	if dir == "" {
		return file
	}
	return dir + "/" + file
}

// wantADK records, in want, the version of each ADK line a released go.mod
// requires: what a consumer installing it alone must resolve.
func wantADK(file string, goMod []byte, want map[string]string) error {
	f, err := modfile.ParseLax(file, goMod, nil)
	if err != nil {
		return fmt.Errorf("parsing %s: %w", file, err)
	}
	for _, r := range f.Require {
		for _, line := range adkLines {
			if r.Mod.Path == line.adk {
				want[line.adk] = r.Mod.Version
			}
		}
	}
	return nil
}

// checkLargeFiles checks the size of every file rev tracks against the
// large-file list rev holds.
func checkLargeFiles(ctx context.Context, repo, rev string) ([]string, error) {
	sizes, err := trackedSizes(ctx, repo, rev)
	if err != nil {
		return nil, err
	}
	var list []byte
	if _, ok := sizes[largeFilesList]; ok {
		if list, err = git(ctx, repo, "show", rev+":"+largeFilesList); err != nil {
			return nil, err
		}
	}
	listed, err := parseLargeFiles(bytes.NewReader(list))
	if err != nil {
		return nil, err
	}
	problems := checkTrackedFiles(sizes, listed, maxTrackedBytes)
	fmt.Printf("== %d tracked files, %d listed in %s, %d over %d bytes without a reason\n",
		len(sizes), len(listed), largeFilesList, len(problems), maxTrackedBytes)
	return problems, nil
}

// readGoEnv reads the go command's environment.
func readGoEnv(ctx context.Context, goBin string) (goEnv, error) {
	out, err := runGo(ctx, goBin, ".", os.Environ(), "env", "-json", "GOPROXY", "GONOSUMDB", "GOFLAGS", "GOMODCACHE")
	if err != nil {
		return goEnv{}, err
	}
	var env goEnv
	if err := json.Unmarshal([]byte(out), &env); err != nil {
		return goEnv{}, fmt.Errorf("go env: %w", err)
	}
	if env.GOMODCACHE == "" || env.GOPROXY == "" {
		return goEnv{}, fmt.Errorf("go env: GOMODCACHE %q, GOPROXY %q", env.GOMODCACHE, env.GOPROXY)
	}
	return env, nil
}

// removeAll removes dir, the rehearsal's temporary directory (the file
// proxy, the consumer modules and their module caches).
func removeAll(dir string) error {
	err := os.RemoveAll(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}
