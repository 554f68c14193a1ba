package core

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bottomFiles are the files at the bottom of the package: the seams, the
// state, the clock, the registry, the estimators, the limits, telemetry and
// the compaction event. Every other file may use them; they use only each
// other, so a change above them cannot reach them and they stay out of the
// package's knot of mutually dependent files.
var bottomFiles = map[string]bool{
	"call_bounded.go": true, "compaction_request.go": true, "errors.go": true,
	"estimator.go": true, "nil_value.go": true,
	"registry.go": true, "seams.go": true, "session_switch.go": true, "state.go": true,
	"telemetry.go": true, "token_counter.go": true,
}

// bottomExceptions are the names from above that a bottom file still uses,
// by file: CompactionEvent.SummaryForm's type is declared with the cached
// summary form (summarizer_cached.go).
var bottomExceptions = map[string]map[string]bool{
	"seams.go": {"SummaryForm": true},
}

// TestBottomFiles_PointDown: a bottom file names no package-level type,
// function, constant or variable declared in a file above it. The check is
// syntactic (a file's unresolved identifiers), so it does not see methods
// and fields, which a bottom file reaches only through its own types.
func TestBottomFiles_PointDown(t *testing.T) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	require.NoError(t, err)
	declaredIn := map[string]string{}
	files := map[string]*ast.File{}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		files[name] = f
		for _, d := range f.Decls {
			for _, id := range declaredNames(d) {
				declaredIn[id] = name
			}
		}
	}
	for name := range bottomFiles {
		require.Contains(t, files, name, "a bottom file that no longer exists")
	}
	for name, f := range files {
		if !bottomFiles[name] {
			continue
		}
		var above []string
		for _, id := range f.Unresolved {
			if from, ok := declaredIn[id.Name]; ok && !bottomFiles[from] && !bottomExceptions[name][id.Name] {
				above = append(above, id.Name+" ("+from+")")
			}
		}
		sort.Strings(above)
		assert.Empty(t, above, "%s is a bottom file: move what it uses down, or the code that uses it up", name)
	}
}

// declaredNames are the package-level names d declares (not methods).
func declaredNames(d ast.Decl) []string {
	var names []string
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv == nil {
			names = append(names, d.Name.Name)
		}
	case *ast.GenDecl:
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				names = append(names, s.Name.Name)
			case *ast.ValueSpec:
				for _, n := range s.Names {
					names = append(names, n.Name)
				}
			}
		}
	}
	return names
}
