package contextguard

import (
	"os"
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

// longProseLines returns the 1-based numbers of doc's lines longer than
// limit characters outside fenced code blocks and table rows.
func longProseLines(doc string, limit int) []int {
	var long []int
	fence := "" // the opening fence of the code block the line is in
	for i, line := range strings.Split(doc, "\n") {
		if m := fenceOpening.FindStringSubmatch(line); m != nil {
			switch {
			case fence == "":
				fence = m[1]
				continue
			case m[1][0] == fence[0] && len(m[1]) >= len(fence) && strings.TrimSpace(line) == m[1]:
				fence = ""
				continue
			}
		}
		if fence != "" || strings.HasPrefix(strings.TrimSpace(line), "|") {
			continue
		}
		if utf8.RuneCountInString(line) > limit {
			long = append(long, i+1)
		}
	}
	return long
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
