package recallindex

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/adk-contextguard/contextguard/core/internal/textcut"
)

// MaxTermBytes bounds one indexed term: a longer run of letters (a hash,
// base64) is indexed by its head, which still identifies it.
const MaxTermBytes = 64

// EachTerm calls f with each term of s, lowercased, until f returns false:
// runs of letters and digits, and within a mixed-case identifier its parts
// as well (the whole "parseConfig" and "parse", "config"), each at most
// MaxTermBytes. Everything else (punctuation, underscores, control
// characters, symbols) separates terms, so a term only ever matches a whole
// word or a whole part of one, never the inside of a longer word.
func EachTerm(s string, f func(string) bool) {
	EachTermAt(s, func(t string, _, _ int) bool { return f(t) })
}

// EachTermAt is EachTerm with the byte span [at, end) in s of each term's
// word or part: offsets into s itself, whatever lower-casing does to the
// length of its letters.
func EachTermAt(s string, f func(t string, at, end int) bool) {
	start := -1
	for i := 0; i < len(s); {
		var word bool
		size := 1
		if b := s[i]; b < utf8.RuneSelf { // ASCII, most of any text: no decoding
			word = asciiWord[b]
		} else {
			var r rune
			r, size = utf8.DecodeRuneInString(s[i:])
			word = unicode.IsLetter(r) || unicode.IsDigit(r)
		}
		switch {
		case word && start < 0:
			start = i
		case !word && start >= 0:
			if !emitWord(s, start, i, f) {
				return
			}
			start = -1
		}
		i += size
	}
	if start >= 0 {
		emitWord(s, start, len(s), f)
	}
}

// asciiWord marks the ASCII letters and digits.
var asciiWord = func() (t [utf8.RuneSelf]bool) {
	for c := range t {
		t[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
	}
	return t
}()

// emitWord emits the word s[from:to] lowercased, and its camel-case parts
// when it has any.
func emitWord(s string, from, to int, f func(string, int, int) bool) bool {
	w := s[from:to]
	if !f(termOf(w), from, to) {
		return false
	}
	parts := 0
	start := 0
	prevLower := false
	for i, r := range w {
		if unicode.IsUpper(r) && prevLower {
			if parts == 0 || start < i {
				if !f(termOf(w[start:i]), from+start, from+i) {
					return false
				}
				parts++
			}
			start = i
		}
		prevLower = unicode.IsLower(r) || unicode.IsDigit(r)
	}
	if parts > 0 && start < len(w) {
		return f(termOf(w[start:]), from+start, to)
	}
	return true
}

// termOf is w lowercased and cut to MaxTermBytes on a rune boundary.
func termOf(w string) string {
	if len(w) > MaxTermBytes {
		w = textcut.Prefix(w, MaxTermBytes)
	}
	return strings.ToLower(w)
}
