package contextguard

import (
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// adkAdapterFiles are the root package's files that may import ADK: the
// ADK v1 adapter (ARCHITECTURE.md, Packages and modules). Every other
// non-test file is the engine, which works on its own seams (seams.go) and
// imports no ADK package; the next step of the split moves the engine to
// core/ on that contract. Keep this list short: new ADK glue goes into
// these files.
var adkAdapterFiles = []string{
	"adapter_adk.go",     // the plugin, its callbacks' entry points, conversions, the recovery model's call
	"adapter_adk_api.go", // the public API that takes ADK types (Add, WithRecoveryModel, the in-state forms, CompactTool)
	"session_service.go", // the public API on ADK's session service (Usage, RequestCompaction, DisableSession, ...)
	"summarizer_llm.go",  // LLMSummarizer, which calls an ADK model
}

const adkModule = "google.golang.org/adk"

func isADK(path string) bool { return path == adkModule || strings.HasPrefix(path, adkModule+"/") }

// TestEngine_ImportsNoADK: no engine file imports an ADK package, nor a
// package that depends on one, and every listed adapter file exists.
func TestEngine_ImportsNoADK(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var engine []string
	engineImports := map[string]bool{}
	seen := map[string]bool{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		seen[name] = true
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		adapter := slices.Contains(adkAdapterFiles, name)
		if !adapter {
			engine = append(engine, name)
		}
		for _, imp := range f.Imports {
			path, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case adapter:
			case isADK(path):
				t.Errorf("%s imports %s: the engine imports no ADK package; move the ADK code to an adapter file (adkAdapterFiles)", name, path)
			default:
				engineImports[path] = true
			}
		}
	}
	for _, name := range adkAdapterFiles {
		if !seen[name] {
			t.Errorf("adapter file %s is listed in adkAdapterFiles but does not exist", name)
		}
	}
	t.Logf("engine (%d files): %s", len(engine), strings.Join(engine, " "))
	t.Logf("ADK adapter: %s", strings.Join(adkAdapterFiles, " "))

	// What the engine imports must not bring ADK in either.
	paths := make([]string, 0, len(engineImports))
	for p := range engineImports {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	out, err := exec.Command("go", append([]string{"list", "-deps"}, paths...)...).Output()
	if err != nil {
		t.Logf("not checking the engine's imported packages: go list -deps: %v", err)
		return
	}
	deps := 0
	for dep := range strings.FieldsSeq(string(out)) {
		deps++
		if isADK(dep) {
			t.Errorf("a package the engine imports depends on %s", dep)
		}
	}
	t.Logf("the engine imports %d packages, which depend on %d packages", len(paths), deps)
}
