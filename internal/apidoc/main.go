// Command apidoc writes api_gen.go, the plugin package's re-exports of the
// engine's public API (module core), from core's source: a type alias, a
// wrapper function, or a constant or variable declared from core's, each
// with core's doc comment. A type's comment is followed by its exported
// fields and methods as core declares them, which `go doc` would otherwise
// not show for an alias. names.go lists what is re-exported and the few
// changes a plugin's comment makes to core's. Run it from the repository
// root, then regenerate ADK v2's copy:
//
//	go run ./internal/apidoc     # rewrite api_gen.go
//	go run ./internal/mirrorv2   # and adkv2/api_gen.go
//
// or `go generate .` for both. TestAPIDoc_Current fails when api_gen.go
// differs from what core's source gives.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/doc"
	"go/format"
	"go/parser"
	"go/printer"
	"go/token"
	"go/types"
	"log"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

const (
	// coreDir is module core's directory, relative to the repository root.
	coreDir = "core"
	// coreImport is module core's import path.
	coreImport = "github.com/adk-contextguard/contextguard/core"
	// outFile is the generated file, relative to the repository root.
	outFile = "api_gen.go"
	// pkgName is the package outFile belongs to.
	pkgName = "contextguard"
)

// override is one change a plugin's doc comment makes to core's: old, an
// exact text of name's comment in core, becomes new.
type override struct {
	name, old, new string
}

func main() {
	check := flag.Bool("check", false, "report whether "+outFile+" is stale and exit 1 if it is, writing nothing")
	flag.Parse()
	stale, err := run(".", !*check)
	if err != nil {
		log.Fatal(err)
	}
	if *check && stale {
		fmt.Fprintf(os.Stderr, "%s is stale: run go run ./internal/apidoc\n", outFile)
		os.Exit(1)
	}
}

// run generates outFile from the core source under root and reports
// whether the file on disk differs; with write, it rewrites it.
func run(root string, write bool) (bool, error) {
	out, err := generateDir(filepath.Join(root, coreDir), reexported, hostOnly, overrides)
	if err != nil {
		return false, err
	}
	dst := filepath.Join(root, outFile)
	if old, err := os.ReadFile(dst); err == nil && bytes.Equal(old, out) {
		return false, nil
	}
	if write {
		if err := os.WriteFile(dst, out, 0o644); err != nil {
			return true, fmt.Errorf("apidoc: %w", err)
		}
	}
	return true, nil
}

// generateDir parses the package in dir (its test files left out) and
// returns the generated file.
func generateDir(dir string, names []string, host map[string]string, ovs []override) ([]byte, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("apidoc: %w", err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments)
		if err != nil {
			return nil, fmt.Errorf("apidoc: %w", err)
		}
		files = append(files, f)
	}
	return generate(fset, files, names, host, ovs)
}

// generator holds what one generation has gathered.
type generator struct {
	fset *token.FileSet
	// exported is the set of re-exported names.
	exported map[string]bool
	// fileImports maps a source file to its imports, by the name they are
	// used under.
	fileImports map[string]map[string]string
	// imports are the generated file's imports, by name.
	imports map[string]string
	// overrides maps a name to its comment's changes; a name's entry is
	// deleted once applied.
	overrides map[string][]override
}

// generate returns the generated file for core's parsed files.
func generate(fset *token.FileSet, files []*ast.File, names []string, host map[string]string, ovs []override) ([]byte, error) {
	g := &generator{
		fset:        fset,
		exported:    map[string]bool{},
		fileImports: map[string]map[string]string{},
		imports:     map[string]string{"core": coreImport},
		overrides:   map[string][]override{},
	}
	for _, n := range names {
		g.exported[n] = true
	}
	for _, f := range files {
		g.fileImports[fset.File(f.Pos()).Name()] = importsOf(f)
	}
	for _, o := range ovs {
		g.overrides[o.name] = append(g.overrides[o.name], o)
	}
	pkg, err := doc.NewFromFiles(fset, files, coreImport)
	if err != nil {
		return nil, fmt.Errorf("apidoc: %w", err)
	}
	if err := g.checkNames(pkg, host); err != nil {
		return nil, err
	}

	// In go doc's order: the package's constants, variables and functions,
	// then each type with its own.
	var body bytes.Buffer
	if err := g.decls(&body, pkg.Consts, pkg.Vars, pkg.Funcs); err != nil {
		return nil, err
	}
	for _, t := range pkg.Types {
		if g.exported[t.Name] {
			if err := g.typ(&body, t); err != nil {
				return nil, err
			}
		}
		if err := g.decls(&body, t.Consts, t.Vars, t.Funcs); err != nil {
			return nil, err
		}
	}
	if len(g.overrides) > 0 {
		name := slices.Sorted(maps.Keys(g.overrides))[0]
		return nil, fmt.Errorf("apidoc: an override names %s, which is not re-exported", name)
	}

	var out bytes.Buffer
	fmt.Fprintf(&out, "// Code generated by go run ./internal/apidoc; DO NOT EDIT.\n\n")
	fmt.Fprintf(&out, "package %s\n\n", pkgName)
	g.writeImports(&out)
	out.Write(body.Bytes())
	src, err := format.Source(out.Bytes())
	if err != nil {
		return nil, fmt.Errorf("apidoc: formatting the generated file: %w\n%s", err, out.Bytes())
	}
	return src, nil
}

// writeImports writes the generated file's imports, the standard
// library's first, as goimports groups them.
func (g *generator) writeImports(w *bytes.Buffer) {
	w.WriteString("import (\n")
	for _, std := range []bool{true, false} {
		for _, name := range slices.Sorted(maps.Keys(g.imports)) {
			p := g.imports[name]
			if isStd(p) != std {
				continue
			}
			if name == defaultName(p) {
				fmt.Fprintf(w, "\t%q\n", p)
			} else {
				fmt.Fprintf(w, "\t%s %q\n", name, p)
			}
		}
		w.WriteString("\n")
	}
	w.WriteString(")\n\n")
}

// decls writes the re-exported ones of values and funcs.
func (g *generator) decls(w *bytes.Buffer, consts, vars []*doc.Value, funcs []*doc.Func) error {
	for _, v := range slices.Concat(consts, vars) {
		if err := g.value(w, v); err != nil {
			return err
		}
	}
	for _, f := range funcs {
		if g.exported[f.Name] {
			if err := g.fn(w, f); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkNames fails when a name core exports is in neither list, or a
// listed name is not exported by core.
func (g *generator) checkNames(pkg *doc.Package, host map[string]string) error {
	inCore := map[string]bool{}
	for _, n := range exportedNames(pkg) {
		inCore[n] = true
		if !g.exported[n] && host[n] == "" {
			return fmt.Errorf("apidoc: core exports %s, listed neither as re-exported nor as host-only in internal/apidoc/names.go", n)
		}
		if g.exported[n] && host[n] != "" {
			return fmt.Errorf("apidoc: %s is listed both as re-exported and as host-only", n)
		}
	}
	for _, list := range [][]string{slices.Collect(maps.Keys(g.exported)), slices.Collect(maps.Keys(host))} {
		for _, n := range slices.Sorted(slices.Values(list)) {
			if !inCore[n] {
				return fmt.Errorf("apidoc: internal/apidoc/names.go lists %s, which core does not export", n)
			}
		}
	}
	return nil
}

// exportedNames are the names of every declaration of pkg.
func exportedNames(pkg *doc.Package) []string {
	var names []string
	addValues := func(vs []*doc.Value) {
		for _, v := range vs {
			names = append(names, v.Names...)
		}
	}
	addFuncs := func(fs []*doc.Func) {
		for _, f := range fs {
			names = append(names, f.Name)
		}
	}
	addValues(pkg.Consts)
	addValues(pkg.Vars)
	addFuncs(pkg.Funcs)
	for _, t := range pkg.Types {
		names = append(names, t.Name)
		addValues(t.Consts)
		addValues(t.Vars)
		addFuncs(t.Funcs)
	}
	return names
}

// value writes the re-exported specs of a const or var declaration, with
// its group's comment and each spec's.
func (g *generator) value(w *bytes.Buffer, v *doc.Value) error {
	var specs []*ast.ValueSpec
	for _, s := range v.Decl.Specs {
		vs := s.(*ast.ValueSpec)
		if slices.ContainsFunc(vs.Names, func(id *ast.Ident) bool { return g.exported[id.Name] }) {
			specs = append(specs, vs)
		}
	}
	if len(specs) == 0 {
		return nil
	}
	kw := v.Decl.Tok.String()
	group := v.Doc
	// A declaration without parentheses is one name, whose comment is the
	// declaration's.
	lone := !v.Decl.Lparen.IsValid()
	if lone {
		var err error
		if group, err = g.comment(v.Names[0], group); err != nil {
			return err
		}
	}
	writeComment(w, "", group)
	if lone {
		w.WriteString(kw + " ")
	} else {
		w.WriteString(kw + " (\n")
	}
	var last ast.Expr // the type an implicit repetition of a const takes
	for _, s := range v.Decl.Specs {
		vs := s.(*ast.ValueSpec)
		typ := vs.Type
		switch {
		case typ != nil:
			last = typ
		case len(vs.Values) == 0 && v.Decl.Tok == token.CONST:
			typ = last
		default:
			last = nil
		}
		if !slices.Contains(specs, vs) {
			continue
		}
		if len(vs.Names) != 1 {
			return fmt.Errorf("apidoc: %s: declare re-exported values one per line", vs.Names[0].Name)
		}
		name := vs.Names[0].Name
		if !lone {
			text, err := g.comment(name, vs.Doc.Text())
			if err != nil {
				return err
			}
			writeComment(w, "\t", text)
		}
		t := ""
		if typ != nil {
			s, err := g.expr(typ, name, true)
			if err != nil {
				return err
			}
			t = " " + s
		}
		if lone {
			fmt.Fprintf(w, "%s%s = core.%s\n\n", name, t, name)
			return nil
		}
		fmt.Fprintf(w, "\t%s%s = core.%s\n", name, t, name)
	}
	w.WriteString(")\n\n")
	return nil
}

// typ writes the alias of a core type, with core's comment followed by the
// type's exported fields or methods and its methods, as core declares them.
func (g *generator) typ(w *bytes.Buffer, t *doc.Type) error {
	text, err := g.comment(t.Name, t.Doc)
	if err != nil {
		return err
	}
	decl, err := g.declaration(t)
	if err != nil {
		return err
	}
	if decl != "" {
		text += "\n" + decl
	}
	writeComment(w, "", text)
	fmt.Fprintf(w, "type %s = core.%s\n\n", t.Name, t.Name)
	return nil
}

// declaration is the comment's account of t's declaration in core: for a
// struct or an interface, its exported fields or methods with their
// comments; then t's methods with theirs. Each is a code block. It is empty
// for a type with neither.
func (g *generator) declaration(t *doc.Type) (string, error) {
	spec := t.Decl.Specs[0].(*ast.TypeSpec)
	var src bytes.Buffer
	switch st := spec.Type.(type) {
	case *ast.StructType:
		fmt.Fprintf(&src, "type %s struct {\n", t.Name)
		if err := g.fields(&src, st.Fields, t.Name); err != nil {
			return "", err
		}
		if st.Incomplete {
			src.WriteString("// Has unexported fields.\n")
		}
		src.WriteString("}\n")
	case *ast.InterfaceType:
		fmt.Fprintf(&src, "type %s interface {\n", t.Name)
		if err := g.fields(&src, st.Methods, t.Name); err != nil {
			return "", err
		}
		if st.Incomplete {
			src.WriteString("// Has unexported methods.\n")
		}
		src.WriteString("}\n")
	}
	var intro string
	switch {
	case src.Len() > 0 && len(t.Methods) > 0:
		intro = "Its declaration in core, and its methods:"
	case src.Len() > 0:
		intro = "Its declaration in core:"
	case len(t.Methods) > 0:
		intro = "Its methods:"
	default:
		return "", nil
	}
	for _, m := range t.Methods {
		src.WriteString("\n")
		writeComment(&src, "", m.Doc)
		sig, err := g.funcDecl(m.Decl, t.Name+"."+m.Name, false)
		if err != nil {
			return "", err
		}
		src.WriteString(sig + "\n")
	}
	code, err := formatDecls(src.String())
	if err != nil {
		return "", fmt.Errorf("apidoc: %s: %w", t.Name, err)
	}
	var b strings.Builder
	b.WriteString(intro + "\n\n")
	for line := range strings.Lines(code) {
		if strings.TrimSpace(line) == "" {
			b.WriteString("\n")
		} else {
			b.WriteString("\t" + line)
		}
	}
	return b.String(), nil
}

// fields writes the fields (or methods) of a struct (or interface) with
// their comments; the list holds only exported ones once go/doc filtered it.
func (g *generator) fields(w *bytes.Buffer, list *ast.FieldList, owner string) error {
	for _, f := range list.List {
		writeComment(w, "", f.Doc.Text())
		var names []string
		for _, n := range f.Names {
			names = append(names, n.Name)
		}
		typ, err := g.expr(f.Type, owner, false)
		if err != nil {
			return err
		}
		switch _, isFunc := f.Type.(*ast.FuncType); {
		case isFunc && len(names) == 1:
			// An interface method: its name, then its signature.
			fmt.Fprintf(w, "%s%s", names[0], strings.TrimPrefix(typ, "func"))
		case len(names) > 0:
			fmt.Fprintf(w, "%s %s", strings.Join(names, ", "), typ)
		default:
			w.WriteString(typ) // an embedded field or interface
		}
		if f.Comment != nil {
			fmt.Fprintf(w, " // %s", strings.TrimSpace(f.Comment.Text()))
		}
		w.WriteString("\n")
	}
	return nil
}

// fn writes the wrapper of a core function.
func (g *generator) fn(w *bytes.Buffer, f *doc.Func) error {
	text, err := g.comment(f.Name, f.Doc)
	if err != nil {
		return err
	}
	ft := f.Decl.Type
	if ft.TypeParams != nil {
		return fmt.Errorf("apidoc: %s is generic; the generator does not wrap generic functions", f.Name)
	}
	var args []string
	for _, p := range ft.Params.List {
		if len(p.Names) == 0 {
			return fmt.Errorf("apidoc: %s: name every parameter", f.Name)
		}
		for _, n := range p.Names {
			if n.Name == "_" {
				return fmt.Errorf("apidoc: %s: name every parameter", f.Name)
			}
			arg := n.Name
			if _, ok := p.Type.(*ast.Ellipsis); ok {
				arg += "..."
			}
			args = append(args, arg)
		}
	}
	sig, err := g.funcDecl(f.Decl, f.Name, true)
	if err != nil {
		return err
	}
	call := fmt.Sprintf("core.%s(%s)", f.Name, strings.Join(args, ", "))
	if ft.Results != nil && len(ft.Results.List) > 0 {
		call = "return " + call
	}
	writeComment(w, "", text)
	fmt.Fprintf(w, "%s { %s }\n\n", sig, call)
	return nil
}

// funcDecl is the declaration line of a function or method, without its
// body; code as for expr.
func (g *generator) funcDecl(d *ast.FuncDecl, name string, code bool) (string, error) {
	sig, err := g.expr(d.Type, name, code)
	if err != nil {
		return "", err
	}
	recv := ""
	if d.Recv != nil && len(d.Recv.List) == 1 {
		r := d.Recv.List[0]
		rt, err := g.expr(r.Type, name, code)
		if err != nil {
			return "", err
		}
		if len(r.Names) == 1 {
			rt = r.Names[0].Name + " " + rt
		}
		recv = "(" + rt + ") "
	}
	return "func " + recv + d.Name.Name + strings.TrimPrefix(sig, "func"), nil
}

// expr prints a type expression of core as the plugin package names it:
// re-exported names as they are, core's other names qualified with core.,
// and other packages' names as they are, their imports added to the
// generated file's when the expression is code, not a comment's text. name
// is the declaration it belongs to, for errors.
func (g *generator) expr(e ast.Expr, name string, code bool) (string, error) {
	imports := g.fileImports[g.fset.File(e.Pos()).Name()]
	var renamed []*ast.Ident
	var err error
	var visit func(n ast.Node) bool
	visit = func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Field:
			// Only the type: names of parameters, results and fields stay.
			ast.Inspect(n.Type, visit)
			return false
		case *ast.SelectorExpr:
			pkg, ok := n.X.(*ast.Ident)
			if !ok || imports[pkg.Name] == "" {
				err = fmt.Errorf("apidoc: %s: %s is not a package's name", name, types.ExprString(n))
				return false
			}
			p := imports[pkg.Name]
			if !code {
				return false
			}
			if have, ok := g.imports[pkg.Name]; ok && have != p {
				err = fmt.Errorf("apidoc: %s: %s names both %s and %s", name, pkg.Name, have, p)
				return false
			}
			g.imports[pkg.Name] = p
			return false
		case *ast.Ident:
			if types.Universe.Lookup(n.Name) != nil || g.exported[n.Name] {
				return false
			}
			if !ast.IsExported(n.Name) {
				err = fmt.Errorf("apidoc: %s uses core's unexported %s", name, n.Name)
				return false
			}
			renamed = append(renamed, n)
		}
		return err == nil
	}
	ast.Inspect(e, visit)
	if err != nil {
		return "", err
	}
	// The printer writes an identifier's name as it is: qualify the names
	// the plugin does not re-export for the print, then restore them.
	for _, id := range renamed {
		id.Name = "core." + id.Name
	}
	var b bytes.Buffer
	perr := printer.Fprint(&b, token.NewFileSet(), e)
	for _, id := range renamed {
		id.Name = strings.TrimPrefix(id.Name, "core.")
	}
	if perr != nil {
		return "", fmt.Errorf("apidoc: %s: %w", name, perr)
	}
	return b.String(), nil
}

// comment is core's comment text for name with the plugin's overrides
// applied; an override whose text core's comment no longer holds is an
// error.
func (g *generator) comment(name, text string) (string, error) {
	for _, o := range g.overrides[name] {
		if !strings.Contains(text, o.old) {
			return "", fmt.Errorf("apidoc: core's comment of %s no longer contains %q: update its override in internal/apidoc/names.go", name, o.old)
		}
		text = strings.Replace(text, o.old, o.new, 1)
	}
	delete(g.overrides, name)
	return text, nil
}

// writeComment writes text as a // comment, each line after indent.
func writeComment(w *bytes.Buffer, indent, text string) {
	for line := range strings.Lines(strings.TrimRight(text, "\n")) {
		line = strings.TrimRight(line, "\n")
		if line == "" {
			fmt.Fprintf(w, "%s//\n", indent)
		} else {
			fmt.Fprintf(w, "%s// %s\n", indent, line)
		}
	}
}

// formatDecls gofmt-s declarations (aligning a struct's fields, as go doc
// shows them).
func formatDecls(src string) (string, error) {
	const header = "package p\n\n"
	out, err := format.Source([]byte(header + src))
	if err != nil {
		return "", err
	}
	return strings.TrimPrefix(string(out), header), nil
}

// importsOf maps the names a file's imports are used under to their paths.
func importsOf(f *ast.File) map[string]string {
	m := map[string]string{}
	for _, imp := range f.Imports {
		p := strings.Trim(imp.Path.Value, `"`)
		name := defaultName(p)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		m[name] = p
	}
	return m
}

// isStd reports whether an import path is the standard library's: its
// first element has no dot.
func isStd(p string) bool {
	first, _, _ := strings.Cut(p, "/")
	return !strings.Contains(first, ".")
}

// defaultName is the name a package is used under when its import does not
// rename it: the last element of its path that is not a major version.
func defaultName(p string) string {
	base := path.Base(p)
	if dir := path.Dir(p); dir != "." && len(base) > 1 && base[0] == 'v' && strings.Trim(base[1:], "0123456789") == "" {
		return path.Base(dir)
	}
	return base
}
