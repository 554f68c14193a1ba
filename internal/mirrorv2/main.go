// Command mirrorv2 writes the ADK v2 module's copies of the v1 files that
// differ from them only by what ADK v2 renamed: the import paths
// (google.golang.org/adk/... becomes google.golang.org/adk/v2/..., and this
// repository's packages their adkv2 counterparts), the callback and tool
// context types (v1's agent.CallbackContext and agent.ToolContext are v2's
// agent.Context), session.NewEventWithContext (v2's session.NewEvent) and
// the words "ADK v1". Each copy starts with a "Code generated" line naming
// its source, so a change is made once, in the v1 file, and reaches both
// lines. The files of the v2 module that differ in substance (the adapter,
// the coverage of ADK v2's events, the package doc) are written by hand. Run it from the repository root:
//
//	go run ./internal/mirrorv2          # rewrite the copies
//	go run ./internal/mirrorv2 -check   # list stale copies, exit 1 if any
//
// TestMirror_Current fails when a copy is stale, so make test catches a v1
// change that was not mirrored.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// v2Dir is the ADK v2 module's directory, relative to the repository root.
const v2Dir = "adkv2"

// mirrored lists the v1 files, relative to the repository root, whose ADK v2
// copy is generated; the copy has the same path under v2Dir. Per-file
// replacements, applied after the common ones, follow each file.
var mirrored = []mirror{
	{src: "adapter_adk.go", extra: []string{
		// ADK v2's view of a request carries the coverage of the session's
		// events; its fromADK is in coverage.go.
		"fromADK(req)", "fromADK(req, cctx)",
		"// fromADK is the engine's view of ADK's request.\n" +
			"func fromADK(req *model.LLMRequest) core.Request {\n" +
			"\treturn core.Request{Model: req.Model, Contents: req.Contents, Config: req.Config, Origin: req}\n" +
			"}\n\n", "",
		// ADK v2's recall tool reads the events from its own context, with
		// the isolation scope (coverage.go recallHistory).
		recallHistoryV1, "",
	}},
	{src: "api.go"},
	{src: "api_gen.go"},
	{src: "session_service.go", extra: []string{
		// ADK v2 has no session.ErrNotFound: its services report an unknown
		// session with an error of their own.
		"// An unknown session's error wraps session.ErrNotFound.\n",
		"// An unknown session's error wraps the session service's own: ADK v2 has no\n" +
			"// session.ErrNotFound (its in-memory service says \"session ... not found\").\n",
	}},
	{src: "summarizer_llm.go"},
	{src: "summarizer_llm_test.go"},
	{src: "adapter_adk_api.go", extra: []string{
		"RecallTool(svc session.Service)", "RecallTool()",
		"recallHistory(ctx, svc)", "recallHistory(ctx)",
		" svc is the\n// session service the runner uses: the tool reads the session's events\n// from it, in place,",
		" The tool reads\n// the session's events from its context (Session().Events()), in place,\n//",
		"\tif core.IsNil(svc) {\n\t\treturn nil, errors.New(\"contextguard: RecallTool: the session service is nil\")\n\t}\n", "",
	}},
	{src: "example_test.go"},
	{src: "options_test.go"},
	{src: "between_turns_test.go"},
	{src: "conformance_test.go", extra: []string{`NewConformanceRow("v1"`, `NewConformanceRow("v2"`}},
	{src: "recovery_turn_test.go"},
	{src: "prompt_cache_test.go"},
	{src: "prepared_summary_test.go"},
	{src: "recall_branches_test.go", extra: []string{"g.RecallTool(svc)", "g.RecallTool()"}},
	{src: "recall_matrix_test.go", extra: []string{"g.RecallTool(played.svc)", "g.RecallTool()"}},
	{src: "recall_tool_test.go", extra: []string{
		// ADK v2's RecallTool reads the events from its context.
		"r.g.RecallTool(svc)", "r.g.RecallTool()",
		"g.RecallTool(session.InMemoryService())", "g.RecallTool()",
		"\t_, err = contextguard.New(nil).RecallTool(nil)\n\trequire.Error(t, err)\n", "",
	}},
	{src: "examples/quickstart/main_test.go", extra: []string{
		// The README's "ADK v2" block is an excerpt of the v2 program (what
		// differs from v1's), one directory deeper.
		"## Start here", "## ADK v2",
		"const readmeHoldsWholeProgram = true", "const readmeHoldsWholeProgram = false",
		"'s Start here block", "'s ADK v2 block",
		`"../../README.md"`, `"../../../README.md"`,
		"differs from examples/quickstart/main.go", "differs from adkv2/examples/quickstart/main.go",
	}},
	{src: "contextguardtest/counter.go"},
	{src: "contextguardtest/driver.go"},
	{src: "contextguardtest/model.go"},
	{src: "contextguardtest/reexport.go"},
	{src: "contextguardtest/summarizer.go"},
	{src: "contextguardtest/tools.go"},
	{src: "contextguardtest/doc_test.go"},
	{src: "contextguardtest/driver_test.go"},
	{src: "contextguardtest/example_test.go"},
	{src: "contextguardtest/model_test.go"},
	{src: "contextguardtest/summarizer_test.go"},
	{src: "contextguardtest/tools_test.go"},
	{src: "contextguardtest/o200k/o200k.go"},
	{src: "contextguardtest/o200k/o200k_test.go"},
	{src: "integration/backend_test.go"},
	{src: "integration/gemini_test.go"},
	{src: "integration/groundtruth_test.go"},
	{src: "integration/harness_test.go"},
	{src: "integration/models_test.go"},
	{src: "integration/recall_test.go", extra: []string{"guard2.RecallTool(db2.svc)", "guard2.RecallTool()"}},
	{src: "integration/replicas_test.go"},
	{src: "integration/restart_test.go"},
	{src: "integration/script_test.go"},
	{src: "integration/usage_test.go"},
}

// mirror is one generated copy: its v1 source and the replacements, as
// old/new pairs, that only it needs.
// recallHistoryV1 is the v1 adapter's recallHistory and visibleFrom
// (adapter_adk.go, exactly), which ADK v2's adapter replaces by its own
// (coverage.go): ADK v2's tool reads the events from its own context.
const recallHistoryV1 = "\n" +
	"// recallHistory is the session's contents as the tool's agent sees them, for\n" +
	"// the recall tool (ARCHITECTURE.md, Recall): the session's events read from\n" +
	"// svc, in order, those of the call's branch or an ancestor's, each with\n" +
	"// content. This ADK line keeps no isolation scope: the scope is the branch.\n" +
	"func recallHistory(ctx agent.ReadonlyContext, svc session.Service) ([]*genai.Content, core.RecallScope, error) {\n" +
	"\tscope := core.RecallScope{Branch: ctx.Branch()}\n" +
	"\tresp, err := svc.Get(ctx, &session.GetRequest{AppName: ctx.AppName(), UserID: ctx.UserID(), SessionID: ctx.SessionID()})\n" +
	"\tif err != nil {\n" +
	"\t\treturn nil, scope, fmt.Errorf(\"contextguard: recall_context: reading session %q: %w\", ctx.SessionID(), err)\n" +
	"\t}\n" +
	"\tif resp == nil || resp.Session == nil || resp.Session.Events() == nil {\n" +
	"\t\treturn nil, scope, nil\n" +
	"\t}\n" +
	"\tevs := resp.Session.Events()\n" +
	"\thistory := make([]*genai.Content, 0, evs.Len())\n" +
	"\tfor e := range evs.All() {\n" +
	"\t\tif e == nil || e.Content == nil || len(e.Content.Parts) == 0 || !visibleFrom(scope.Branch, e.Branch) {\n" +
	"\t\t\tcontinue\n" +
	"\t\t}\n" +
	"\t\thistory = append(history, asRequested(e.Content))\n" +
	"\t}\n" +
	"\treturn history, scope, nil\n" +
	"}\n" +
	"\n" +
	"// visibleFrom reports whether an event of branch eventBranch is in the\n" +
	"// history of branch: either is empty, they are equal, or the event's is an\n" +
	"// ancestor (ADK's branches are dot-separated agent paths).\n" +
	"func visibleFrom(branch, eventBranch string) bool {\n" +
	"\tn := len(eventBranch)\n" +
	"\treturn branch == \"\" || eventBranch == \"\" || branch == eventBranch ||\n" +
	"\t\t(len(branch) > n && branch[:n] == eventBranch && branch[n] == '.')\n" +
	"}\n" +
	""

type mirror struct {
	src   string
	extra []string
}

// generatedHeader matches the line that marks a generated Go file
// (go help generate).
var generatedHeader = regexp.MustCompile(`^// Code generated .* DO NOT EDIT\.$`)

// common are the replacements every copy gets, in order: old, new.
var common = []string{
	`"google.golang.org/adk/`, `"google.golang.org/adk/v2/`,
	`"github.com/adk-contextguard/contextguard/contextguardtest"`, `"github.com/adk-contextguard/contextguard/adkv2/contextguardtest"`,
	`"github.com/adk-contextguard/contextguard/contextguardtest/`, `"github.com/adk-contextguard/contextguard/adkv2/contextguardtest/`,
	// The root package is imported under its name, contextguard; the v2
	// package has the same name in a directory named adkv2.
	"\t\"github.com/adk-contextguard/contextguard\"\n", "\tcontextguard \"github.com/adk-contextguard/contextguard/adkv2\"\n",
	`contextguard "github.com/adk-contextguard/contextguard"`, `contextguard "github.com/adk-contextguard/contextguard/adkv2"`,
	"agent.CallbackContext", "agent.Context",
	"agent.ToolContext", "agent.Context",
	"session.NewEventWithContext(", "session.NewEvent(",
	"ADK v1", "ADK v2",
}

func main() {
	check := flag.Bool("check", false, "list the stale copies and exit 1 if any, writing nothing")
	flag.Parse()
	stale, err := run(".", !*check)
	if err != nil {
		log.Fatal(err)
	}
	if *check && len(stale) > 0 {
		fmt.Fprintf(os.Stderr, "stale ADK v2 copies (run go run ./internal/mirrorv2): %s\n", strings.Join(stale, ", "))
		os.Exit(1)
	}
}

// run generates every copy under root and returns the copies whose file
// differs from what it generates; with write, it rewrites them.
func run(root string, write bool) ([]string, error) {
	var stale []string
	for _, m := range mirrored {
		src, err := os.ReadFile(filepath.Join(root, m.src))
		if err != nil {
			return nil, fmt.Errorf("mirrorv2: %w", err)
		}
		out, err := generate(m, src)
		if err != nil {
			return nil, err
		}
		dst := filepath.Join(root, v2Dir, m.src)
		if old, err := os.ReadFile(dst); err == nil && bytes.Equal(old, out) {
			continue
		}
		stale = append(stale, dst)
		if write {
			if err := os.WriteFile(dst, out, 0o644); err != nil {
				return nil, fmt.Errorf("mirrorv2: %w", err)
			}
		}
	}
	return stale, nil
}

// generate returns the ADK v2 copy of the v1 file src: the header, then src
// with the common and the file's replacements, gofmt-ed.
func generate(m mirror, src []byte) ([]byte, error) {
	if len(m.extra)%2 != 0 {
		return nil, fmt.Errorf("mirrorv2: %s: odd number of replacement strings", m.src)
	}
	// A source that is itself generated (api_gen.go, by internal/apidoc)
	// loses its own header: the copy names the file it was made from.
	s := string(src)
	if first, rest, ok := strings.Cut(s, "\n"); ok && generatedHeader.MatchString(first) {
		s = strings.TrimLeft(rest, "\n")
	}
	for _, pairs := range [][]string{common, m.extra} {
		for i := 0; i < len(pairs); i += 2 {
			s = strings.ReplaceAll(s, pairs[i], pairs[i+1])
		}
	}
	for i := 0; i < len(m.extra); i += 2 {
		if !strings.Contains(string(src), m.extra[i]) {
			return nil, fmt.Errorf("mirrorv2: %s no longer contains %q", m.src, m.extra[i])
		}
	}
	header := fmt.Sprintf("// Code generated by go run ./internal/mirrorv2 from %s; DO NOT EDIT.\n\n", m.src)
	out, err := format.Source([]byte(header + s))
	if err != nil {
		return nil, fmt.Errorf("mirrorv2: %s: %w", m.src, err)
	}
	return out, nil
}
