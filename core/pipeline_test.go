package core

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pipelineFiles are the files of the call's pipeline (ARCHITECTURE.md, One
// model call): the only ones that write a call's state.
var pipelineFiles = map[string]bool{"guard.go": true, "compaction.go": true}

// coreSource is the syntax of core's non-test files, by file name.
func coreSource(t *testing.T) map[string]*ast.File {
	t.Helper()
	names, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	files := map[string]*ast.File{}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		require.NoError(t, err)
		f, err := parser.ParseFile(fset, name, src, 0)
		require.NoError(t, err)
		files[name] = f
	}
	require.Contains(t, files, "guard.go", "the test runs in core's directory")
	return files
}

// structFields are the field names of the struct type named name.
func structFields(files map[string]*ast.File, name string) map[string]bool {
	fields := map[string]bool{}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok || ts.Name.Name != name {
				return true
			}
			for _, fl := range ts.Type.(*ast.StructType).Fields.List {
				for _, id := range fl.Names {
					fields[id.Name] = true
				}
			}
			return false
		})
	}
	return fields
}

// exprTypeName is the name of a type expression: T, *T.
func exprTypeName(e ast.Expr) string {
	if s, ok := e.(*ast.StarExpr); ok {
		e = s.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// varsOfType are the names fn declares with type typ (or *typ): its
// receiver, its parameters, and the variables it assigns from a composite
// literal of typ or from a call of one of ctors.
func varsOfType(fn *ast.FuncDecl, typ string, ctors ...string) map[string]bool {
	vars := map[string]bool{}
	var lists []*ast.FieldList
	if fn.Recv != nil {
		lists = append(lists, fn.Recv)
	}
	lists = append(lists, fn.Type.Params)
	for _, l := range lists {
		for _, fl := range l.List {
			if exprTypeName(fl.Type) == typ {
				for _, id := range fl.Names {
					vars[id.Name] = true
				}
			}
		}
	}
	ast.Inspect(fn, func(n ast.Node) bool {
		as, ok := n.(*ast.AssignStmt)
		if !ok || len(as.Rhs) == 0 {
			return true
		}
		rhs := as.Rhs[0]
		if u, ok := rhs.(*ast.UnaryExpr); ok {
			rhs = u.X
		}
		made := false
		switch r := rhs.(type) {
		case *ast.CompositeLit:
			made = exprTypeName(r.Type) == typ
		case *ast.CallExpr:
			name := ""
			switch f := r.Fun.(type) {
			case *ast.Ident:
				name = f.Name
			case *ast.SelectorExpr:
				name = f.Sel.Name
			}
			for _, c := range ctors {
				made = made || name == c
			}
		}
		if id, ok := as.Lhs[0].(*ast.Ident); ok && made {
			vars[id.Name] = true
		}
		return true
	})
	return vars
}

// fieldWrite returns the field of one of vars that e writes (v.field or
// v.field.sub...; with direct, v.field only: an address taken of a field
// behind one of its pointers is not the state's), "" when e writes none.
func fieldWrite(e ast.Expr, vars, fields map[string]bool, direct bool) string {
	var first string
	selectors := 0
	for {
		switch x := e.(type) {
		case *ast.SelectorExpr:
			if selectors++; direct && selectors > 1 {
				return ""
			}
			first = x.Sel.Name
			e = x.X
			continue
		case *ast.IndexExpr:
			e = x.X
			continue
		case *ast.ParenExpr:
			e = x.X
			continue
		case *ast.StarExpr:
			e = x.X
			continue
		case *ast.Ident:
			if vars[x.Name] && fields[first] {
				return first
			}
		}
		return ""
	}
}

// writes lists, as "file: func: what", every place in files where fn's
// variables of type typ have a field assigned, incremented or its address
// taken.
func writes(files map[string]*ast.File, typ string, ctors ...string) []string {
	fields := structFields(files, typ)
	var out []string
	for name, f := range files {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			vars := varsOfType(fn, typ, ctors...)
			if len(vars) == 0 {
				continue
			}
			note := func(e ast.Expr, direct bool) {
				if field := fieldWrite(e, vars, fields, direct); field != "" {
					out = append(out, name+": "+fn.Name.Name+": "+field)
				}
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				switch s := n.(type) {
				case *ast.AssignStmt:
					if s.Tok != token.DEFINE {
						for _, l := range s.Lhs {
							note(l, false)
						}
					}
				case *ast.IncDecStmt:
					note(s.X, false)
				case *ast.UnaryExpr:
					if s.Op == token.AND {
						note(s.X, true)
					}
				}
				return true
			})
		}
	}
	sort.Strings(out)
	return out
}

// TestPipeline_OneConstructorOneWriter holds the pipeline's shape
// (ARCHITECTURE.md, One model call): a call's state (turn) is built by one
// constructor, for the guarded call and for recovery alike, and only the
// pipeline's own files write its fields; every other step takes values and
// returns what it decides.
func TestPipeline_OneConstructorOneWriter(t *testing.T) {
	files := coreSource(t)

	var literals []string
	for name, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			if fn, ok := n.(*ast.FuncDecl); ok {
				ast.Inspect(fn, func(n ast.Node) bool {
					if cl, ok := n.(*ast.CompositeLit); ok && exprTypeName(cl.Type) == "turn" {
						literals = append(literals, name+": "+fn.Name.Name)
					}
					return true
				})
				return false
			}
			return true
		})
	}
	assert.Equal(t, []string{"guard.go: newTurn"}, literals, "one composite literal of turn, in its constructor")

	var outside []string
	for _, w := range writes(files, "turn", "newTurn") {
		if !pipelineFiles[strings.SplitN(w, ":", 2)[0]] {
			outside = append(outside, w)
		}
	}
	assert.Empty(t, outside, "fields of a call's state written outside the pipeline's files %v", pipelineFiles)
}

// TestPipeline_OneRequestWriter: one place sets the contents of a request
// the engine guards (withContents); every other step decides contents as
// values. A SummaryRequest's contents are the summarizer's input, not the
// request's.
func TestPipeline_OneRequestWriter(t *testing.T) {
	files := coreSource(t)
	var places []string
	for name, f := range files {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			other := varsOfType(fn, "SummaryRequest")
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				switch s := n.(type) {
				case *ast.AssignStmt:
					for _, l := range s.Lhs {
						sel, ok := l.(*ast.SelectorExpr)
						if !ok || sel.Sel.Name != "Contents" {
							continue
						}
						if id, ok := sel.X.(*ast.Ident); ok && other[id.Name] {
							continue
						}
						places = append(places, name+": "+fn.Name.Name)
					}
				case *ast.CompositeLit:
					if exprTypeName(s.Type) != "Request" {
						return true
					}
					for _, el := range s.Elts {
						if kv, ok := el.(*ast.KeyValueExpr); ok && exprTypeName(kv.Key) == "Contents" {
							places = append(places, name+": "+fn.Name.Name)
						}
					}
				}
				return true
			})
		}
	}
	assert.Equal(t, []string{"guard.go: withContents"}, places, "one place sets a request's contents")
}
