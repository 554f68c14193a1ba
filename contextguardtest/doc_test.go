package contextguardtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// surfaceLimit is the most exported names the kit may have: it holds what a
// test of a user's own agent needs (README.md, "Testing your own agent"),
// and everything else stays in core/coretest.
const surfaceLimit = 30

// wantSurface is the kit's exported surface (methods excluded): a name added
// here is a decision about the public API, and goes to CHANGELOG.md.
var wantSurface = []string{
	"Call", "CallWith", "CheckPairs", "CoreCounter", "CountContents", "Counter", "DataTool",
	"ErrStepLimit", "FakeClock", "FlattenText", "IsOverflowError", "Marker",
	"MarkerPattern", "NewFakeClock", "NewScriptedModel", "NewSummarizerModel",
	"Parallel", "Result", "Run", "RunConfig", "Scenario", "ScriptConfig",
	"ScriptedModel", "SeedCounter", "Sequential", "SummarizerConfig",
	"SummarizerModel", "ToolCall", "Tools", "TurnPlan",
}

// TestSurface: the package exports exactly wantSurface (every exported
// type, function, constant and variable of its non-test files), within
// surfaceLimit, and every exported name has a doc comment.
func TestSurface(t *testing.T) {
	fset := token.NewFileSet()
	notTest := func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }
	pkgs, err := parser.ParseDir(fset, ".", notTest, parser.ParseComments)
	require.NoError(t, err)
	var got, undocumented []string
	note := func(name *ast.Ident, docs ...*ast.CommentGroup) {
		if !name.IsExported() {
			return
		}
		got = append(got, name.Name)
		if !slices.ContainsFunc(docs, func(d *ast.CommentGroup) bool { return d != nil }) {
			undocumented = append(undocumented, name.Name)
		}
	}
	for _, pkg := range pkgs {
		for _, f := range pkg.Files {
			for _, decl := range f.Decls {
				switch d := decl.(type) {
				case *ast.FuncDecl:
					if d.Recv == nil {
						note(d.Name, d.Doc)
					}
				case *ast.GenDecl:
					for _, spec := range d.Specs {
						switch s := spec.(type) {
						case *ast.TypeSpec:
							note(s.Name, s.Doc, d.Doc)
						case *ast.ValueSpec:
							for _, n := range s.Names {
								note(n, s.Doc, d.Doc)
							}
						}
					}
				}
			}
		}
	}
	slices.Sort(got)
	require.Equal(t, wantSurface, got)
	require.LessOrEqual(t, len(got), surfaceLimit)
	require.Empty(t, undocumented, "exported names without a doc comment")
}
