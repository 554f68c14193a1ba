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
	// kit is the import path of the plugin's test kit, which the
	// consumer's test imports: most users test their agent with it, so
	// its dependencies belong in what an install downloads.
	kit string
}

// adkLines are the lines rehearsed, one per plugin.
var adkLines = []adkLine{
	{name: "ADK v1", plugin: modulePrefix, quickstart: "examples/quickstart/main.go", adk: "google.golang.org/adk",
		kit: modulePrefix + "/contextguardtest"},
	{name: "ADK v2", plugin: modulePrefix + "/adkv2", quickstart: "adkv2/examples/quickstart/main.go", adk: "google.golang.org/adk/v2",
		kit: modulePrefix + "/adkv2/contextguardtest"},
}

// goEnv is what the rehearsal reads of the go command's environment.
type goEnv struct {
	GOPROXY, GONOSUMDB, GOFLAGS, GOMODCACHE string
}

// consumerEnv returns the environment of a consumer's go commands: base,
// with an empty module cache of its own at modcache (so what an install
// downloads can be measured), the file proxy at proxyRoot first, then the
// download directory of the environment's module cache as a second file
// proxy (it is laid out as one, and spares the network what this machine
// already downloaded), then the environment's GOPROXY for the rest; the
// released modules kept out of the checksum database (their test versions
// are nowhere else); -mod=mod added to GOFLAGS so builds may add go.sum
// lines, and -modcacherw so the temporary cache can be removed; and no
// workspace.
func consumerEnv(base []string, env goEnv, proxyRoot, modcache string) []string {
	noSumDB := modulePrefix
	if env.GONOSUMDB != "" {
		noSumDB = env.GONOSUMDB + "," + modulePrefix
	}
	flags := strings.TrimSpace(env.GOFLAGS + " -mod=mod -modcacherw")
	proxies := proxyURL(proxyRoot) + "," + proxyURL(filepath.Join(env.GOMODCACHE, "cache", "download")) + "," + env.GOPROXY
	return append(append([]string(nil), base...),
		"GOPROXY="+proxies,
		"GONOSUMDB="+noSumDB,
		"GOFLAGS="+flags,
		"GOMODCACHE="+modcache,
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

// kitTestSource is the consumer's test of its agent, which imports the
// plugin's test kit (the import path is formatted in): the kit's
// dependencies then count in the consumer's download.
const kitTestSource = `package main

import (
	"testing"

	"%s"
)

func TestKitCounts(t *testing.T) {
	if contextguardtest.SeedCounter(1) == nil {
		t.Fatal("no counter")
	}
}
`

// adkAppSource is an agent of the ADK line whose module path is formatted
// in, without contextguard: the app a user has before installing the
// plugin. The consumer's module cache holds its dependencies first, so
// what the install adds after it is what contextguard costs the user.
const adkAppSource = `package main

import (
	"context"
	"log"

	"%[1]s/agent/llmagent"
	"%[1]s/model/gemini"
	"%[1]s/runner"
	"%[1]s/session"
)

func main() {
	llm, err := gemini.NewModel(context.Background(), "gemini-2.5-flash", nil)
	if err != nil {
		log.Fatal(err)
	}
	a, err := llmagent.New(llmagent.Config{Name: "assistant", Model: llm})
	if err != nil {
		log.Fatal(err)
	}
	if _, err := runner.New(runner.Config{AppName: "app", Agent: a, SessionService: session.InMemoryService()}); err != nil {
		log.Fatal(err)
	}
}
`

// rehearse installs line's plugin at version in a fresh consumer module
// under tmp, with an empty module cache of its own, as a user with an ADK
// app would: the app (adkAppSource, at the ADK version want names) is
// tidied first, then go get of the plugin, the quickstart's main.go and a
// test using the kit are added and the module tidied again. It measures
// what the install added to the cache after the app, checks the versions
// that resolve (want, by module path), and builds and runs the quickstart
// against the local Gemini fake. It returns the bytes the install added.
func rehearse(ctx context.Context, goBin string, base []string, goenv goEnv, proxyRoot, tmp string, line adkLine, version, quickstart string, want map[string]string) (int64, error) {
	dir, err := os.MkdirTemp(tmp, "consumer-*")
	if err != nil {
		return 0, fmt.Errorf("%s consumer: %w", line.name, err)
	}
	modcache, err := os.MkdirTemp(tmp, "modcache-*")
	if err != nil {
		return 0, fmt.Errorf("%s consumer: %w", line.name, err)
	}
	env := consumerEnv(base, goenv, proxyRoot, modcache)
	gocmd := func(args ...string) (string, error) { return runGo(ctx, goBin, dir, env, args...) }
	if _, err := gocmd("mod", "init", consumerPath); err != nil {
		return 0, err
	}
	if err := writeFile(filepath.Join(dir, "app", "main.go"), fmt.Sprintf(adkAppSource, line.adk)); err != nil {
		return 0, fmt.Errorf("%s consumer: %w", line.name, err)
	}
	if _, err := gocmd("get", line.adk+"@"+want[line.adk]); err != nil {
		return 0, err
	}
	if _, err := gocmd("mod", "tidy"); err != nil {
		return 0, err
	}
	before, err := dirBytes(modcache)
	if err != nil {
		return 0, fmt.Errorf("%s consumer's module cache: %w", line.name, err)
	}
	if _, err := gocmd("get", line.plugin+"@"+version); err != nil {
		return 0, err
	}
	for p, src := range map[string]string{
		"quickstart/main.go":     quickstart,
		"quickstart/kit_test.go": fmt.Sprintf(kitTestSource, line.kit),
		"rehearsal/main.go":      strings.TrimPrefix(rehearsalSource, buildIgnore),
	} {
		if err := writeFile(filepath.Join(dir, filepath.FromSlash(p)), src); err != nil {
			return 0, fmt.Errorf("%s consumer: %w", line.name, err)
		}
	}
	if _, err := gocmd("mod", "tidy"); err != nil {
		return 0, err
	}
	after, err := dirBytes(modcache)
	if err != nil {
		return 0, fmt.Errorf("%s consumer's module cache: %w", line.name, err)
	}
	added := after - before
	fmt.Printf("   %s: the ADK app filled an empty module cache with %.1f MB; installing the plugin and its test kit added %d bytes (%.1f MB)\n",
		line.name, float64(before)/1e6, added, float64(added)/1e6)
	mods := []string{line.plugin, modulePrefix + "/core", line.adk, "charm.land/catwalk"}
	out, err := gocmd(append([]string{"list", "-m", "-f", "{{.Path}} {{.Version}}"}, mods...)...)
	if err != nil {
		return added, err
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
			return added, fmt.Errorf("%s consumer resolves %s %s, want %s", line.name, p, got[p], v)
		}
	}
	for _, cmd := range []string{"quickstart", "rehearsal"} {
		if _, err := gocmd("build", "-o", filepath.Join("bin", cmd), "./"+cmd); err != nil {
			return added, err
		}
	}
	runCtx, cancel := context.WithTimeout(ctx, quickstartTimeout+rehearsalSlack)
	defer cancel()
	cmd := exec.CommandContext(runCtx, filepath.Join(dir, "bin", "rehearsal"),
		"-quickstart", filepath.Join(dir, "bin", "quickstart"), "-timeout", quickstartTimeout.String())
	cmd.Dir, cmd.WaitDelay = dir, waitDelay
	report, err := cmd.CombinedOutput()
	if err != nil {
		return added, fmt.Errorf("%s quickstart: %w\n%s", line.name, err, report)
	}
	fmt.Printf("   %s: %s", line.name, report)
	return added, nil
}

// writeFile writes content to p, creating its directory.
func writeFile(p, content string) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(content), 0o644)
}

// dirBytes returns the sum of the sizes of the regular files under dir:
// what a module cache holds on disk, its downloads and their extracted
// copies, less the file system's block rounding.
func dirBytes(dir string) (int64, error) {
	var total int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		total += info.Size()
		return nil
	})
	if err != nil {
		return 0, err
	}
	return total, nil
}
