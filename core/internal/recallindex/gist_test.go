package recallindex

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestGist(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b string
		same bool
	}{
		{"a file viewer's line numbers", "   124\t    # Calculate positions\n   125\t    if x:", "85\t    # Calculate positions\n86\t    if x:", true},
		{"a grep's line number", "1475:return int(round(v))", "  return int(round(v))", true},
		{"a diff's line number and marks", "     50 -          When I run \"list\"", "     13 +          When I run \"list\"", true},
		{"a unified diff's mark", "+            if end == 'head':", "            if end == 'head':", true},
		{"an HTML view's line breaks", "<br />\tPUBLIC \"-//W3C//DTD XHTML 1.0\"", "\tPUBLIC \"-//W3C//DTD XHTML 1.0\"", true},
		{"blank lines and spacing", "a  b\n\n\t\nc", "a b\nc", true},
		{"other words", "85\t    # Calculate positions", "85\t    # Update positions", false},
		{"a number inside the line", "slice(0, 30, None)", "slice(4, 6, None)", false},
		{"a negative number is not a diff mark", "-32768", "32768", false},
		{"a comparison is not a tag", "if a < b and c > d", "if a d", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.same {
				assert.Equal(t, Gist(tc.a), Gist(tc.b))
			} else {
				assert.NotEqual(t, Gist(tc.a), Gist(tc.b))
			}
		})
	}
	assert.Equal(t, "PUBLIC \"x\"\nTitle", Gist("<br />\tPUBLIC \"x\"\n\n<br />\t\t<title>Title</title>\n"))
	assert.Empty(t, Gist(" \n\t\n"))
}

// FuzzGist: any text has a gist, valid UTF-8 when the text is, and the
// same for the text viewed with line numbers.
func FuzzGist(f *testing.F) {
	for _, s := range []string{"", "<br />\tPUBLIC x", "  12\t+ a<b", "<", "<a", "9", "- -", "ü\n\n<ü>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		g := Gist(s)
		if utf8.ValidString(s) && !utf8.ValidString(g) {
			t.Fatalf("Gist(%q) = %q, not valid UTF-8", s, g)
		}
		if strings.Contains(s, "\n") || strings.ContainsAny(s, "0123456789+-<") {
			return // numbered again, a line of its own marks would read otherwise
		}
		if n := Gist("  42\t" + s); n != g {
			t.Fatalf("Gist of %q numbered = %q, not %q", s, n, g)
		}
	})
}
