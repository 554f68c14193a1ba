package contextguard

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The repository's documents against the code: links that resolve, the
// supported ADK ranges as the modules require them, the package doc's
// runner example, and a README a newcomer reads in ten minutes.

// documents are the repository's Markdown files whose relative links must
// resolve.
var documents = []string{"README.md", "ARCHITECTURE.md", "RELEASING.md", "examples/README.md", "integration/README.md"}

// markdownLink matches a Markdown link's target: [text](target).
var markdownLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

func TestDocs_RelativeLinksResolve(t *testing.T) {
	for _, doc := range documents {
		t.Run(doc, func(t *testing.T) {
			b, err := os.ReadFile(doc)
			require.NoError(t, err)
			for _, m := range markdownLink.FindAllStringSubmatch(string(b), -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				target, _, _ = strings.Cut(target, "#")
				_, err := os.Stat(filepath.Join(filepath.Dir(doc), target))
				assert.NoError(t, err, "%s links to %s, which does not exist", doc, m[1])
			}
		})
	}
}

// requiredVersion is the version of module path that the go.mod at gomod
// requires.
func requiredVersion(t *testing.T, gomod, path string) string {
	t.Helper()
	b, err := os.ReadFile(gomod)
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(path) + `\s+(v\S+)`).FindStringSubmatch(string(b))
	require.NotNil(t, m, "%s requires no %s", gomod, path)
	return m[1]
}

// TestDocs_SupportedRangesAndInstall: the README's table of ADK lines names
// the minor version each plugin's go.mod requires, and it has an Install
// section.
func TestDocs_SupportedRangesAndInstall(t *testing.T) {
	b, err := os.ReadFile("README.md")
	require.NoError(t, err)
	readme := string(b)
	tests := []struct {
		gomod, adk, module string
	}{
		{"go.mod", "google.golang.org/adk", "github.com/adk-contextguard/contextguard"},
		{"adkv2/go.mod", "google.golang.org/adk/v2", "github.com/adk-contextguard/contextguard/adkv2"},
	}
	for _, tt := range tests {
		t.Run(tt.module, func(t *testing.T) {
			v := requiredVersion(t, tt.gomod, tt.adk)
			minor := v[:strings.LastIndex(v, ".")]
			assert.True(t, strings.Contains(readme, "| `"+tt.adk+"` "+minor+".x |"), "the table of ADK lines names %s %s.x, as %s requires %s", tt.adk, minor, tt.gomod, v)
		})
	}
	assert.True(t, strings.Contains(readme, "\n## Install\n"), "the README has an Install section")
	assert.True(t, strings.Contains(readme, "EventsCompactionConfig"), "the README says what to do about ADK v2.3's own compaction")
}

// TestDocs_PackageDocRunnerCreatesTheSession: the package doc's runner
// example of each line sets AutoCreateSession, without which its first Run
// fails with "session not found".
func TestDocs_PackageDocRunnerCreatesTheSession(t *testing.T) {
	for _, f := range []string{"doc.go", "adkv2/doc.go"} {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		assert.Contains(t, string(b), "AutoCreateSession: true", f)
	}
}

// readmeWordLimit is the most words README.md may have, as wc -w counts
// them: what a newcomer reads in about ten minutes. Detail beyond it
// belongs in ARCHITECTURE.md, the doc comments or CHANGELOG.md.
const readmeWordLimit = 5_000

// proseLineLimit is the longest line, in characters, that the Markdown
// documents may have outside tables and fenced code blocks: prose is
// wrapped (at about 100 columns), so that a diff shows the sentence that
// changed and a terminal shows the text without scrolling. Table rows and
// code keep their own lines.
const proseLineLimit = 400

// wrappedDocuments are the documents whose prose must be wrapped.
var wrappedDocuments = []string{"README.md", "ARCHITECTURE.md", "CHANGELOG.md", "examples/README.md"}

// wordCount counts words as wc -w does: runs of characters that are not
// white space.
func wordCount(text string) int {
	return len(strings.Fields(text))
}

// fenceOpening matches the line that opens or closes a fenced code block
// (CommonMark: three or more backticks or tildes, after indentation, which
// inside a list item may exceed three spaces).
var fenceOpening = regexp.MustCompile("^[ \t]*(```+|~~~+)")

// eachLine calls visit with each of doc's lines, its 1-based number, and
// whether it is prose: outside fenced code blocks (fences included) and
// table rows.
func eachLine(doc string, visit func(n int, line string, prose bool)) {
	fence := "" // the opening fence of the code block the line is in
	for i, line := range strings.Split(doc, "\n") {
		if m := fenceOpening.FindStringSubmatch(line); m != nil {
			switch {
			case fence == "":
				fence = m[1]
				visit(i+1, line, false)
				continue
			case m[1][0] == fence[0] && len(m[1]) >= len(fence) && strings.TrimSpace(line) == m[1]:
				fence = ""
				visit(i+1, line, false)
				continue
			}
		}
		visit(i+1, line, fence == "" && !strings.HasPrefix(strings.TrimSpace(line), "|"))
	}
}

// longProseLines returns the 1-based numbers of doc's lines longer than
// limit characters outside fenced code blocks and table rows.
func longProseLines(doc string, limit int) []int {
	var long []int
	eachLine(doc, func(n int, line string, prose bool) {
		if prose && utf8.RuneCountInString(line) > limit {
			long = append(long, n)
		}
	})
	return long
}

// paragraphWordLimit is the most words a paragraph of ARCHITECTURE.md may
// have outside tables and code blocks: the document is a map a newcomer
// scans, and a paragraph longer than a few sentences hides the one fact a
// reader looks for.
const paragraphWordLimit = 150

// heading matches a Markdown heading, which is not part of a paragraph.
var heading = regexp.MustCompile(`^\s{0,3}#{1,6}(\s|$)`)

// paragraph is a block of prose: the 1-based number of its first line and
// its words, as wc -w counts them.
type paragraph struct {
	line, words int
}

// longParagraphs returns doc's paragraphs of more than limit words outside
// tables and fenced code blocks. A paragraph ends at a blank line, a table,
// a code block or a heading; the items of a list not parted by blank lines
// are one paragraph, as they read as one block.
func longParagraphs(doc string, limit int) []paragraph {
	var long []paragraph
	cur := paragraph{}
	end := func() {
		if cur.words > limit {
			long = append(long, cur)
		}
		cur = paragraph{}
	}
	eachLine(doc, func(n int, line string, prose bool) {
		if !prose || strings.TrimSpace(line) == "" || heading.MatchString(line) {
			end()
			return
		}
		if cur.line == 0 {
			cur.line = n
		}
		cur.words += wordCount(line)
	})
	end()
	return long
}

func TestDocs_LongParagraphs(t *testing.T) {
	words := func(n int) string { return strings.TrimSpace(strings.Repeat("w ", n)) }
	tests := []struct {
		name string
		doc  string
		want []paragraph
	}{
		{"short paragraphs", "# Title\n\n" + words(5) + "\n" + words(5) + "\n\n" + words(10) + "\n", nil},
		{"a paragraph over the limit, across lines", "# Title\n\n" + words(6) + "\n" + words(6) + "\n", []paragraph{{3, 12}}},
		{"a heading is not part of the paragraph below it", "## " + words(5) + "\n" + words(8) + "\n", nil},
		{"a heading is not a paragraph", "## " + words(20) + "\n", nil},
		{"a tight list is one paragraph", "- " + words(4) + "\n  " + words(2) + "\n- " + words(4) + "\n", []paragraph{{1, 12}}},
		{"a loose list is a paragraph per item", "- " + words(8) + "\n\n- " + words(8) + "\n", nil},
		{"a table is not prose", "| " + words(20) + " |\n|---|\n| " + words(20) + " |\n", nil},
		{"a code block is not prose", words(5) + "\n```\n" + words(20) + "\n```\n" + words(5) + "\n", nil},
		{"a table ends a paragraph", words(6) + "\n| a |\n" + words(6) + "\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, longParagraphs(tt.doc, 10))
		})
	}
}

// TestDocs_ArchitectureParagraphsShort: ARCHITECTURE.md reads as a map, no
// paragraph over paragraphWordLimit words.
func TestDocs_ArchitectureParagraphsShort(t *testing.T) {
	b, err := os.ReadFile("ARCHITECTURE.md")
	require.NoError(t, err)
	for _, p := range longParagraphs(string(b), paragraphWordLimit) {
		t.Errorf("ARCHITECTURE.md:%d: a paragraph of %d words, over %d: split it, or move the detail to the code's comments", p.line, p.words, paragraphWordLimit)
	}
}

// goFileSpan matches a Markdown code span that names a Go file, or Go files
// by a pattern (`core/x.go`, `x_test.go`, `dir/*_test.go`).
var goFileSpan = regexp.MustCompile("`([^`\\s]+\\.go)`")

// missingGoFiles returns the Go files doc names in code spans that no path
// of files (slash-separated, relative to the repository's root) holds: a
// name matches a path that ends with it, whole segments, and may be a
// path.Match pattern.
func missingGoFiles(doc string, files []string) []string {
	var missing []string
	seen := map[string]bool{}
	for _, m := range goFileSpan.FindAllStringSubmatch(doc, -1) {
		name := strings.TrimPrefix(m[1], "/")
		if seen[name] {
			continue
		}
		seen[name] = true
		if !namesAFile(name, files) {
			missing = append(missing, name)
		}
	}
	return missing
}

// namesAFile reports whether name, a path or a path.Match pattern, matches
// the last segments of one of files.
func namesAFile(name string, files []string) bool {
	n := strings.Count(name, "/") + 1
	for _, f := range files {
		segs := strings.Split(f, "/")
		if len(segs) < n {
			continue
		}
		if ok, err := path.Match(name, strings.Join(segs[len(segs)-n:], "/")); err == nil && ok {
			return true
		}
	}
	return false
}

func TestDocs_MissingGoFiles(t *testing.T) {
	files := []string{"adapter_adk.go", "core/limits.go", "core/internal/tokens/media.go", "core/internal/tokens/media_test.go"}
	tests := []struct {
		name string
		doc  string
		want []string
	}{
		{"a file by its name", "`limits.go` and `adapter_adk.go`", nil},
		{"a file by its path, or the end of it", "`core/limits.go`, `internal/tokens/media.go`", nil},
		{"a pattern", "`core/internal/tokens/*_test.go`", nil},
		{"a file that is gone", "`limits.go` and `guard_limits.go`", []string{"guard_limits.go"}},
		{"a path that is not the file's", "`adkv2/limits.go`", []string{"adkv2/limits.go"}},
		{"part of a name is not the name", "`its.go`", []string{"its.go"}},
		{"named twice, reported once", "`gone.go` `gone.go`", []string{"gone.go"}},
		{"a span that is not a file", "`go run ./internal/apidoc` and `x.go` `beforeRun`", []string{"x.go"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, missingGoFiles(tt.doc, files))
		})
	}
}

// TestDocs_ArchitectureNamesExistingFiles: every Go file ARCHITECTURE.md
// names exists in the repository, so that a file renamed or removed takes
// the map with it.
func TestDocs_ArchitectureNamesExistingFiles(t *testing.T) {
	var files []string
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && p != "." && strings.HasPrefix(d.Name(), "."):
			return filepath.SkipDir
		case !d.IsDir() && strings.HasSuffix(p, ".go"):
			files = append(files, filepath.ToSlash(p))
		}
		return nil
	})
	require.NoError(t, err)
	b, err := os.ReadFile("ARCHITECTURE.md")
	require.NoError(t, err)
	assert.Empty(t, missingGoFiles(string(b), files), "ARCHITECTURE.md names Go files the repository does not hold: name them as they are now")
}

func TestDocs_LongProseLines(t *testing.T) {
	long := strings.Repeat("word ", 20) // 100 characters
	tests := []struct {
		name string
		doc  string
		want []int
	}{
		{"short lines", "# Title\n\nsome prose\n", nil},
		{"a long paragraph", "# Title\n\n" + long + "\n", []int{3}},
		{"a long list item", "- " + long + "\n  " + long + "\n", []int{1, 2}},
		{"characters, not bytes", strings.Repeat("é", 80) + "\n", nil},
		{"a table row", "| a | b |\n|---|---|\n| " + long + " | x |\n", nil},
		{"an indented table row", "  | " + long + " |\n", nil},
		{"a fenced code block", "```go\n" + long + "\n```\n" + long + "\n", []int{4}},
		{"a tilde fence", "~~~\n" + long + "\n~~~\n", nil},
		{"a fence in a list item", "1. step\n   ```sh\n   " + long + "\n   ```\n", nil},
		{"a shorter fence does not close a longer one", "````\n```\n" + long + "\n````\n" + long + "\n", []int{5}},
		{"a tilde line does not close a backtick fence", "```\n~~~\n" + long + "\n```\n", nil},
		{"a backtick line with text does not close the block", "```\n``` not a close\n" + long + "\n```\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, longProseLines(tt.doc, 80))
		})
	}
}

// TestDocs_READMEReadsInTenMinutes: the README stays within
// readmeWordLimit words, and no document's prose line is over
// proseLineLimit characters.
func TestDocs_READMEReadsInTenMinutes(t *testing.T) {
	b, err := os.ReadFile("README.md")
	require.NoError(t, err)
	assert.LessOrEqual(t, wordCount(string(b)), readmeWordLimit, "README.md's words (wc -w): move detail to ARCHITECTURE.md or the doc comments")
	for _, doc := range wrappedDocuments {
		t.Run(doc, func(t *testing.T) {
			b, err := os.ReadFile(doc)
			require.NoError(t, err)
			assert.Empty(t, longProseLines(string(b), proseLineLimit), "%s: lines over %d characters outside tables and code blocks (wrap them at about 100 columns)", doc, proseLineLimit)
		})
	}
}

// mostAppsNeed is how the paragraph on what most apps need starts, in the
// README and in each plugin's package doc.
const mostAppsNeed = "Most apps need five things."

// docLink matches a doc comment's link to an identifier ([New],
// [ContextGuard.Add]), which the README writes as code (`New`, `Add`).
var docLink = regexp.MustCompile(`\[(?:ContextGuard\.)?(\w+)\]`)

// plainParagraph returns the paragraph of text that starts with start, with
// Go doc comment markers, doc links and Markdown code spans reduced to their
// words and white space collapsed, or "" when text has no such paragraph.
func plainParagraph(text, start string) string {
	var lines []string
	for _, line := range strings.Split(text, "\n") {
		lines = append(lines, strings.TrimPrefix(strings.TrimPrefix(line, "//"), " "))
	}
	_, para, ok := strings.Cut(strings.Join(lines, "\n"), start)
	if !ok {
		return ""
	}
	para, _, _ = strings.Cut(para, "\n\n")
	para = docLink.ReplaceAllString(start+para, "$1")
	return strings.Join(strings.Fields(strings.ReplaceAll(para, "`", "")), " ")
}

func TestDocs_PlainParagraph(t *testing.T) {
	tests := []struct {
		name, text, want string
	}{
		{"a doc comment", "// Package p.\n//\n// Start: [New] and\n// [ContextGuard.Add] go.\n//\n// Next.", "Start: New and Add go."},
		{"Markdown", "# p\n\nStart: `New` and\n`Add` go.\n\nNext.", "Start: New and Add go."},
		{"the last paragraph", "Start: the end.", "Start: the end."},
		{"no such paragraph", "Other text.", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, plainParagraph(tt.text, "Start:"))
		})
	}
}

// TestDocs_MostAppsNeedOpensEachPlugin: the README's "Start here" and both
// plugins' package docs say what most apps need in the same words.
func TestDocs_MostAppsNeedOpensEachPlugin(t *testing.T) {
	b, err := os.ReadFile("README.md")
	require.NoError(t, err)
	_, start, ok := strings.Cut(string(b), "\n## Start here\n")
	require.True(t, ok, "README.md has no Start here section")
	want := plainParagraph(start, mostAppsNeed)
	require.NotEmpty(t, want, "README.md's Start here does not say what most apps need")
	for _, f := range []string{"doc.go", "adkv2/doc.go"} {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		doc, _, _ := strings.Cut(string(b), "\npackage ")
		assert.Equal(t, want, plainParagraph(doc, mostAppsNeed), "%s's package doc and README.md's Start here differ on what most apps need", f)
	}
}
