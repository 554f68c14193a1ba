package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	modzip "golang.org/x/mod/zip"
)

// The README's install section shows, for each ADK line, the two ways to use
// the plugin from a checkout before the first tag: a workspace (go work use)
// and the two replace directives. Each way is a shell block marked by an
// HTML comment on the line before it, and the rehearsal runs every block as
// written, so the section cannot rot.

// readmeFile is the README the install blocks are read from.
const readmeFile = "README.md"

// checkoutVar is the shell variable a block names the checkout's path by.
const checkoutVar = "CHECKOUT"

// installMarker is the comment line that marks the next fenced block as an
// install check, with its name.
var installMarker = regexp.MustCompile(`^<!-- install-check: ([a-z0-9-]+) -->$`)

// installCheck is one way of installing a plugin from a checkout.
type installCheck struct {
	// name is the block's name in its marker.
	name string
	// line is the ADK line whose plugin it installs.
	line adkLine
}

// installChecks are the blocks the README must hold, each exactly once.
var installChecks = []installCheck{
	{name: "v1-workspace", line: adkLines[0]},
	{name: "v1-replace", line: adkLines[0]},
	{name: "v2-workspace", line: adkLines[1]},
	{name: "v2-replace", line: adkLines[1]},
}

// shellFences are the info strings of a fenced block a marker may precede.
var shellFences = map[string]bool{"```sh": true, "```shell": true, "```bash": true}

// installBlocks returns the script of every marked block of readme, by
// name. A marker not followed at once by a shell block, a block left open,
// a name that is no installCheck, a name marked twice or a check left
// unmarked is an error.
func installBlocks(readme []byte) (map[string]string, error) {
	known := make(map[string]bool)
	for _, c := range installChecks {
		known[c.name] = true
	}
	blocks := make(map[string]string)
	sc := bufio.NewScanner(bytes.NewReader(readme))
	sc.Buffer(nil, len(readme)+1)
	for n := 1; sc.Scan(); n++ {
		m := installMarker.FindStringSubmatch(strings.TrimSpace(sc.Text()))
		if m == nil {
			continue
		}
		name := m[1]
		switch {
		case !known[name]:
			return nil, fmt.Errorf("%s:%d: unknown install check %q", readmeFile, n, name)
		case blocks[name] != "":
			return nil, fmt.Errorf("%s:%d: install check %q marked twice", readmeFile, n, name)
		}
		if !sc.Scan() || !shellFences[strings.TrimSpace(sc.Text())] {
			return nil, fmt.Errorf("%s:%d: install check %q is not followed by a shell block (```sh)", readmeFile, n, name)
		}
		n++
		var script strings.Builder
		closed := false
		for sc.Scan() {
			n++
			if strings.TrimSpace(sc.Text()) == "```" {
				closed = true
				break
			}
			script.WriteString(sc.Text() + "\n")
		}
		if !closed {
			return nil, fmt.Errorf("%s: the block of install check %q is not closed", readmeFile, name)
		}
		if strings.TrimSpace(script.String()) == "" {
			return nil, fmt.Errorf("%s: the block of install check %q is empty", readmeFile, name)
		}
		blocks[name] = script.String()
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", readmeFile, err)
	}
	for _, c := range installChecks {
		if blocks[c.name] == "" {
			return nil, fmt.Errorf("%s has no block marked <!-- install-check: %s -->", readmeFile, c.name)
		}
	}
	return blocks, nil
}

// extractCheckout writes files, a commit's tree, under dir: the checkout the
// install blocks name.
func extractCheckout(files []modzip.File, dir string) error {
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.Path()))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		rc, err := f.Open()
		if err != nil {
			return fmt.Errorf("opening %s: %w", f.Path(), err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return fmt.Errorf("reading %s: %w", f.Path(), err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// installEnv returns the environment of an install check: base without
// GOWORK (a block may create a go.work, which the go command must find),
// with the checkout's path in checkoutVar.
func installEnv(base []string, checkout string) []string {
	var env []string
	for _, kv := range base {
		if k, _, _ := strings.Cut(kv, "="); k == "GOWORK" || k == checkoutVar {
			continue
		}
		env = append(env, kv)
	}
	return append(env, checkoutVar+"="+checkout)
}

// runInstallCheck runs one README block as a user with an ADK app would: in
// a fresh module under tmp that requires the line's ADK at adkVersion and
// holds the line's quickstart (which imports the plugin), it runs script
// with sh -eu, then builds the module.
func runInstallCheck(ctx context.Context, goBin string, env []string, tmp string, c installCheck, adkVersion, quickstart, script string) error {
	dir, err := os.MkdirTemp(tmp, "install-"+c.name+"-*")
	if err != nil {
		return fmt.Errorf("install check %s: %w", c.name, err)
	}
	gocmd := func(args ...string) error {
		_, err := runGo(ctx, goBin, dir, env, args...)
		if err != nil {
			return fmt.Errorf("install check %s: %w", c.name, err)
		}
		return nil
	}
	if err := gocmd("mod", "init", consumerPath); err != nil {
		return err
	}
	if err := gocmd("get", c.line.adk+"@"+adkVersion); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dir, "main.go"), quickstart); err != nil {
		return fmt.Errorf("install check %s: %w", c.name, err)
	}
	shCtx, cancel := context.WithTimeout(ctx, goTimeout)
	defer cancel()
	cmd := exec.CommandContext(shCtx, "sh", "-eu", "-c", script)
	cmd.Dir, cmd.Env, cmd.WaitDelay = dir, env, waitDelay
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("install check %s: README's block failed: %w\n%s", c.name, err, out)
	}
	if err := gocmd("build", "-o", os.DevNull, "."); err != nil {
		return err
	}
	fmt.Printf("   %s: README's block ran as written and the %s quickstart built\n", c.name, c.line.name)
	return nil
}
