package main

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/module"
)

const (
	// goTimeout bounds one go command of a consumer: on a cold module
	// cache, `go get` and `go mod tidy` download ADK's dependencies.
	goTimeout = 10 * time.Minute
	// quickstartTimeout bounds a quickstart's run: one model call to a
	// local server, a second or two even on a busy machine.
	quickstartTimeout = 2 * time.Minute
	// rehearsalSlack is how much longer than quickstartTimeout the
	// rehearsal binary may take, to start the fake and report.
	rehearsalSlack = time.Minute
	// consumerPath is the module path of a consumer module.
	consumerPath = "example.com/contextguard-consumer"
	// waitDelay is how long a command killed at its timeout may keep its
	// output open (the go command's compiler and linker inherit it) before
	// the rehearsal stops waiting for it.
	waitDelay = 10 * time.Second
)

// rehearsalSource is the program that runs a quickstart against the local
// Gemini fake and checks it (rehearsal/main.go); buildIgnore is its first
// line, which keeps it out of this module's build and which the consumer's
// copy drops.
//
//go:embed rehearsal/main.go
var rehearsalSource string

// buildIgnore is rehearsalSource's build constraint.
const buildIgnore = "//go:build ignore\n\n"

// adkLine is one ADK line a user installs a plugin for: one consumer
// module each, since one build list cannot hold both ADK lines.
type adkLine struct {
	// name is how the rehearsal's output names it.
	name string
	// plugin is the plugin's module path.
	plugin string
	// quickstart is the quickstart's main.go in the repository, the
	// program the README's quickstart of the line shows.
	quickstart string
	// adk is the ADK module of the line.
	adk string
}

// adkLines are the lines rehearsed, one per plugin.
var adkLines = []adkLine{
	{name: "ADK v1", plugin: modulePrefix, quickstart: "examples/quickstart/main.go", adk: "google.golang.org/adk"},
	{name: "ADK v2", plugin: modulePrefix + "/adkv2", quickstart: "adkv2/examples/quickstart/main.go", adk: "google.golang.org/adk/v2"},
}

// goEnv is what the rehearsal reads of the go command's environment.
type goEnv struct {
	GOPROXY, GONOSUMDB, GOFLAGS, GOMODCACHE string
}

// consumerEnv returns the environment of a consumer's go commands: base,
// with the file proxy at proxyRoot before the environment's GOPROXY (which
// still serves ADK and every other dependency), the released modules kept
// out of the checksum database (their test versions are nowhere else),
// -mod=mod added to GOFLAGS so builds may add go.sum lines, and no
// workspace.
func consumerEnv(base []string, env goEnv, proxyRoot string) []string {
	noSumDB := modulePrefix
	if env.GONOSUMDB != "" {
		noSumDB = env.GONOSUMDB + "," + modulePrefix
	}
	flags := strings.TrimSpace(env.GOFLAGS + " -mod=mod")
	return append(append([]string(nil), base...),
		"GOPROXY="+proxyURL(proxyRoot)+","+env.GOPROXY,
		"GONOSUMDB="+noSumDB,
		"GOFLAGS="+flags,
		"GOWORK=off",
	)
}

// runGo runs the go command goBin with args in dir under goTimeout and
// returns its standard output.
func runGo(ctx context.Context, goBin, dir string, env []string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, goTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, goBin, args...)
	cmd.Dir, cmd.Env, cmd.WaitDelay = dir, env, waitDelay
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// rehearse installs line's plugin at version in a fresh consumer module
// under tmp, as a user would (go get, then the quickstart's main.go, then
// go mod tidy), checks the versions that resolve (want, by module path),
// and builds and runs the quickstart against the local Gemini fake.
func rehearse(ctx context.Context, goBin string, env []string, tmp string, line adkLine, version, quickstart string, want map[string]string) error {
	dir, err := os.MkdirTemp(tmp, "consumer-*")
	if err != nil {
		return fmt.Errorf("%s consumer: %w", line.name, err)
	}
	gocmd := func(args ...string) (string, error) { return runGo(ctx, goBin, dir, env, args...) }
	if _, err := gocmd("mod", "init", consumerPath); err != nil {
		return err
	}
	if _, err := gocmd("get", line.plugin+"@"+version); err != nil {
		return err
	}
	for p, src := range map[string]string{
		"quickstart/main.go": quickstart,
		"rehearsal/main.go":  strings.TrimPrefix(rehearsalSource, buildIgnore),
	} {
		if err := writeFile(filepath.Join(dir, filepath.FromSlash(p)), src); err != nil {
			return fmt.Errorf("%s consumer: %w", line.name, err)
		}
	}
	if _, err := gocmd("mod", "tidy"); err != nil {
		return err
	}
	mods := []string{line.plugin, modulePrefix + "/core", line.adk, "charm.land/catwalk"}
	out, err := gocmd(append([]string{"list", "-m", "-f", "{{.Path}} {{.Version}}"}, mods...)...)
	if err != nil {
		return err
	}
	got := make(map[string]string)
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if p, v, ok := strings.Cut(l, " "); ok {
			got[p] = v
		}
	}
	for _, p := range mods {
		fmt.Printf("   %s resolves %s %s\n", line.name, p, got[p])
	}
	for p, v := range want {
		if got[p] != v {
			return fmt.Errorf("%s consumer resolves %s %s, want %s", line.name, p, got[p], v)
		}
	}
	for _, cmd := range []string{"quickstart", "rehearsal"} {
		if _, err := gocmd("build", "-o", filepath.Join("bin", cmd), "./"+cmd); err != nil {
			return err
		}
	}
	runCtx, cancel := context.WithTimeout(ctx, quickstartTimeout+rehearsalSlack)
	defer cancel()
	cmd := exec.CommandContext(runCtx, filepath.Join(dir, "bin", "rehearsal"),
		"-quickstart", filepath.Join(dir, "bin", "quickstart"), "-timeout", quickstartTimeout.String())
	cmd.Dir, cmd.WaitDelay = dir, waitDelay
	report, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s quickstart: %w\n%s", line.name, err, report)
	}
	fmt.Printf("   %s: %s", line.name, report)
	return nil
}

// writeFile writes content to p, creating its directory.
func writeFile(p, content string) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(content), 0o644)
}

// forgetCached removes version m from the module cache at modcache: its
// download (.info, .mod, .zip, ...), its line in the download's version
// list, and its extracted directory, which the go command makes read-only;
// then the directories this leaves empty. A rehearsal's test version then
// never outlives it, and a rerun of the same commit zips afresh.
func forgetCached(modcache string, m module.Version) error {
	escPath, err := module.EscapePath(m.Path)
	if err != nil {
		return err
	}
	escVersion, err := module.EscapeVersion(m.Version)
	if err != nil {
		return err
	}
	downloads := filepath.Join(modcache, "cache", "download")
	download := filepath.Join(downloads, filepath.FromSlash(escPath), "@v")
	for _, ext := range []string{".info", ".mod", ".zip", ".ziphash", ".lock", ".partial"} {
		if err := os.Remove(filepath.Join(download, escVersion+ext)); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	if err := unlist(filepath.Join(download, "list"), m.Version); err != nil {
		return err
	}
	pruneEmpty(download, downloads)
	extracted := filepath.Join(modcache, filepath.FromSlash(escPath)+"@"+escVersion)
	if _, err := os.Lstat(extracted); err == nil {
		if err := filepath.WalkDir(extracted, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				return os.Chmod(p, 0o755)
			}
			return nil
		}); err != nil {
			return err
		}
		if err := os.RemoveAll(extracted); err != nil {
			return err
		}
	}
	pruneEmpty(filepath.Dir(extracted), modcache)
	return nil
}

// unlist removes version's line from the version list at p, and the list
// when no line is left.
func unlist(p, version string) error {
	data, err := os.ReadFile(p)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	var keep []string
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if l != "" && l != version {
			keep = append(keep, l)
		}
	}
	if len(keep) == 0 {
		return os.Remove(p)
	}
	return os.WriteFile(p, []byte(strings.Join(keep, "\n")+"\n"), 0o644)
}

// pruneEmpty removes dir and its parents while they are empty, up to but
// not including stop.
func pruneEmpty(dir, stop string) {
	for dir != stop && strings.HasPrefix(dir, stop+string(filepath.Separator)) {
		if os.Remove(dir) != nil { // not empty, or gone
			return
		}
		dir = filepath.Dir(dir)
	}
}
