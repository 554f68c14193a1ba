package recallindex

import "strings"

// maxTagBytes bounds what Gist reads as one markup tag: "<br />" or
// "<meta http-equiv=... />" is one, a "<" that no ">" closes soon is text.
const maxTagBytes = 200

// Gist is the lines of s as any view of them reads: each line without
// markup tags ("<br />"), a leading line number (a file viewer's "  85\t",
// "1475:", a diff's "55 -  ") or diff mark ("+ ", "- "), its runs of
// white space as one space; blank lines dropped. Two places whose lines
// have one gist show the same lines in two views (a file read twice,
// before and after an edit moved its lines; a page fetched raw and as
// HTML), so a page of excerpts can show one and name the other.
func Gist(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for line := range strings.Lines(s) {
		words := strings.Fields(stripLineMarks(stripTags(line)))
		if len(words) == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		for i, w := range words {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(w)
		}
	}
	return b.String()
}

// stripLineMarks is line without its leading white space, line number and
// diff mark.
func stripLineMarks(line string) string {
	line = strings.TrimLeft(line, " \t")
	if n := digitsPrefix(line); n > 0 && n < len(line) && (line[n] == ':' || line[n] == '\t' || line[n] == ' ') {
		line = strings.TrimLeft(line[n+1:], " \t")
	}
	if len(line) > 1 && (line[0] == '+' || line[0] == '-') && (line[1] == ' ' || line[1] == '\t') {
		line = line[1:]
	}
	return line
}

// digitsPrefix is how many ASCII digits s starts with.
func digitsPrefix(s string) int {
	n := 0
	for n < len(s) && '0' <= s[n] && s[n] <= '9' {
		n++
	}
	return n
}

// stripTags is line with each markup tag replaced by a space.
func stripTags(line string) string {
	if !strings.Contains(line, "<") {
		return line
	}
	var b strings.Builder
	for i := 0; i < len(line); i++ {
		if n := tagBytes(line[i:]); n > 0 {
			b.WriteByte(' ')
			i += n - 1
			continue
		}
		b.WriteByte(line[i])
	}
	return b.String()
}

// tagBytes is the length of the markup tag s starts with ("<br />",
// "</title>"), 0 when it starts with none: "<", an optional "/", an ASCII
// letter, then anything but "<" up to a ">" within maxTagBytes.
func tagBytes(s string) int {
	if len(s) < 3 || s[0] != '<' {
		return 0
	}
	i := 1
	if s[i] == '/' {
		i++
	}
	if i >= len(s) || !isASCIILetter(s[i]) {
		return 0
	}
	end := strings.IndexAny(s[i:min(len(s), maxTagBytes)], "<>")
	if end < 0 || s[i+end] != '>' {
		return 0
	}
	return i + end + 1
}

// isASCIILetter reports whether c is an ASCII letter.
func isASCIILetter(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }
