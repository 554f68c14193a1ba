package main

import (
	"go/ast"
	"go/doc"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// repoRoot is the repository root seen from this package's directory.
const repoRoot = "../.."

// TestAPIDoc_Current: the committed api_gen.go is what core's source gives,
// so the plugins' doc comments cannot drift from core's (ADK v2's copy is
// held to the root's by TestMirror_Current).
func TestAPIDoc_Current(t *testing.T) {
	stale, err := run(repoRoot, false)
	require.NoError(t, err)
	assert.False(t, stale, "api_gen.go differs from core's public API or doc comments: run go generate . in the repository root")
}

// coreSrc is a small engine package for the generator's scenarios.
const coreSrc = `package core

import (
	"context"
	"log/slog"
	"time"
)

// Reasons, grouped.
const (
	// ReasonA is the first.
	ReasonA = "a"
	// reasonHidden is not exported.
	reasonHidden = "h"
)

// Mode names a mode.
type Mode int

const (
	// ModeOne is the first mode.
	ModeOne Mode = iota
	// ModeTwo repeats ModeOne's type.
	ModeTwo
)

// Stats is what a caller reads.
type Stats struct {
	// Tokens is a count.
	Tokens int
	// Start and End bound it.
	Start, End time.Time
	Mode       Mode // the mode it ran in
	hidden     int
}

// Counter counts.
type Counter interface {
	// Count counts text.
	Count(text string) int
}

// CounterFunc adapts a function.
type CounterFunc func(string) int

// Count calls f.
func (f CounterFunc) Count(text string) int { return f(text) }

// Engine is the host-facing engine.
type Engine struct{}

// Option configures an Engine.
type Option func(*Engine)

// WithLogger sets the logger.
func WithLogger(l *slog.Logger) Option { return nil }

// WithHooks registers hooks.
func WithHooks(fns ...func(context.Context, Stats)) Option { return nil }

// Describe returns the engine's stats.
func Describe(e *Engine) Stats { return Stats{} }
`

func TestGenerate(t *testing.T) {
	all := []string{"ReasonA", "Mode", "ModeOne", "ModeTwo", "Stats", "Counter", "CounterFunc", "Option", "WithLogger", "WithHooks", "Describe"}
	host := map[string]string{"Engine": "the host's"}
	tests := []struct {
		name    string
		names   []string
		host    map[string]string
		ovs     []override
		want    []string // substrings of the generated file
		notWant []string
		wantErr string
	}{
		{
			name:  "an alias's comment shows the exported fields with their comments, aligned",
			names: all, host: host,
			want: []string{
				"// Stats is what a caller reads.\n//\n// Its declaration in core:\n//\n//\ttype Stats struct {\n" +
					"//\t\t// Tokens is a count.\n//\t\tTokens int\n" +
					"//\t\t// Start and End bound it.\n//\t\tStart, End time.Time\n" +
					"//\t\tMode       Mode // the mode it ran in\n" +
					"//\t\t// Has unexported fields.\n//\t}\ntype Stats = core.Stats\n",
			},
			notWant: []string{"hidden int"},
		},
		{
			name:  "an interface's methods, a function type's methods",
			names: all, host: host,
			want: []string{
				"//\ttype Counter interface {\n//\t\t// Count counts text.\n//\t\tCount(text string) int\n//\t}\ntype Counter = core.Counter\n",
				"// Its methods:\n//\n//\t// Count calls f.\n//\tfunc (f CounterFunc) Count(text string) int\ntype CounterFunc = core.CounterFunc\n",
			},
		},
		{
			name:  "wrappers keep their signature; a name not re-exported is core's",
			names: all, host: host,
			want: []string{
				"// WithLogger sets the logger.\nfunc WithLogger(l *slog.Logger) Option { return core.WithLogger(l) }\n",
				"func WithHooks(fns ...func(context.Context, Stats)) Option { return core.WithHooks(fns...) }\n",
				"func Describe(e *core.Engine) Stats { return core.Describe(e) }\n",
				"import (\n\t\"context\"\n\t\"log/slog\"\n\n\t\"example.com/core\"\n)",
			},
			// time is named only in a comment: no import.
			notWant: []string{`"time"`},
		},
		{
			name:  "constants keep their group's comment and their type, unexported ones left out",
			names: all, host: host,
			want: []string{
				"// Reasons, grouped.\nconst (\n\t// ReasonA is the first.\n\tReasonA = core.ReasonA\n)\n",
				"\t// ModeTwo repeats ModeOne's type.\n\tModeTwo Mode = core.ModeTwo\n",
			},
			notWant: []string{"reasonHidden"},
		},
		{
			name:  "an override changes the plugin's comment",
			names: all, host: host,
			ovs:     []override{{name: "Option", old: "an Engine.", new: "a Plugin."}},
			want:    []string{"// Option configures a Plugin.\ntype Option = core.Option\n"},
			notWant: []string{"configures an Engine"},
		},
		{
			name:  "an override whose text core no longer has is an error, not a silent copy",
			names: all, host: host,
			ovs:     []override{{name: "Option", old: "a Guard.", new: "a Plugin."}},
			wantErr: `core's comment of Option no longer contains "a Guard."`,
		},
		{
			name:  "an override of a name not re-exported",
			names: all, host: host,
			ovs:     []override{{name: "Engine", old: "engine", new: "plugin"}},
			wantErr: "an override names Engine, which is not re-exported",
		},
		{
			name:  "a name core exports in neither list stops the generator",
			names: all[1:], host: host,
			wantErr: "core exports ReasonA, listed neither as re-exported nor as host-only",
		},
		{
			name:  "a listed name core does not export",
			names: append([]string{"Gone"}, all...), host: host,
			wantErr: "lists Gone, which core does not export",
		},
		{
			name:  "a name in both lists",
			names: append([]string{"Engine"}, all...), host: host,
			wantErr: "Engine is listed both",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, "core.go", coreSrc, parser.ParseComments)
			require.NoError(t, err)
			out, err := generateAs(fset, []*ast.File{f}, tt.names, tt.host, tt.ovs)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			for _, w := range tt.want {
				assert.Contains(t, string(out), w)
			}
			for _, w := range tt.notWant {
				assert.NotContains(t, string(out), w)
			}
		})
	}
}

// generateAs runs generate for the scenarios' package, imported as
// example.com/core.
func generateAs(fset *token.FileSet, files []*ast.File, names []string, host map[string]string, ovs []override) ([]byte, error) {
	out, err := generate(fset, files, names, host, ovs)
	return []byte(strings.ReplaceAll(string(out), coreImport, "example.com/core")), err
}

// TestGenerate_GoDocShowsFields: go/doc, which go doc uses, reads the
// generated alias's comment with the fields as a code block.
func TestGenerate_GoDocShowsFields(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "core.go", coreSrc, parser.ParseComments)
	require.NoError(t, err)
	out, err := generate(fset, []*ast.File{f}, []string{"ReasonA", "Mode", "ModeOne", "ModeTwo", "Stats", "Counter", "CounterFunc", "Option", "WithLogger", "WithHooks", "Describe"}, map[string]string{"Engine": "x"}, nil)
	require.NoError(t, err)

	gen, err := parser.ParseFile(fset, "api_gen.go", out, parser.ParseComments)
	require.NoError(t, err)
	pkg, err := doc.NewFromFiles(fset, []*ast.File{gen}, "example.com/plugin")
	require.NoError(t, err)
	var stats *doc.Type
	for _, typ := range pkg.Types {
		if typ.Name == "Stats" {
			stats = typ
		}
	}
	require.NotNil(t, stats)
	var code []string
	for _, block := range pkg.Parser().Parse(stats.Doc).Content {
		if c, ok := block.(*comment.Code); ok {
			code = append(code, c.Text)
		}
	}
	require.Len(t, code, 1, "the fields are one code block")
	assert.Contains(t, code[0], "type Stats struct {\n\t// Tokens is a count.\n\tTokens int\n")
}
