package accuracy_test

import (
	"encoding/base64"
	"fmt"
	"math"
	"math/rand/v2"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tiktoken-go/tokenizer"

	"github.com/adk-contextguard/contextguard/core/internal/tokenfit/gemmabpe"
	"github.com/adk-contextguard/contextguard/core/internal/tokens"
)

// The estimator's floors on hostile text: for every class of text that
// tokenizes far from prose (punctuation, runs of one character, minified
// code, encodings, art, emoji and mixed scripts), the estimate of texts of
// at least hostileMinTokens tokens stays within hostileLow–hostileHigh of
// the exact count at the class's 5th and 95th percentile, for o200k and for
// Gemma 3. Each class has several generators of its own (alphabets, run
// lengths, layouts), none shared with the fit corpus's generators
// (internal/tokenfit/gen), so that the bounds hold for the class and not for
// one way of writing it.
const (
	// hostileLow is the least estimate/exact ratio allowed: the guard's
	// trigger margin absorbs an under-count of 15%, not more.
	hostileLow = 0.85
	// hostileHigh is the largest: over that, half a window is wasted.
	hostileHigh = 1.5
	// hostileMinTokens is the least o200k count of a text: shorter texts
	// are too few tokens for a ratio to mean anything.
	hostileMinTokens = 200
	// hostileSamples is the number of texts per class in a default run: 200
	// puts the 5th percentile at the 10th text from either end, so that a
	// run's percentile is the class's and not one unlucky draw (at 32 texts
	// it was the 2nd, and moved by 0.02 from seed to seed);
	// TOKENS_HOSTILE_N asks for another number. The test runs without the
	// race detector (`make core-test`): it is a computation on one
	// goroutine, and 200 texts per class take minutes under it.
	hostileSamples = 200
	// hostileMaxTokens bounds a text's length, so that the test stays fast.
	hostileMaxTokens = 3000
)

// hostileGaps are the classes whose 5th percentile the estimator does not
// yet hold at hostileLow, by family, with the floor it holds instead. The
// test fails if one falls under it, and logs it as a gap otherwise. None is
// left: emoji_scripts, the last, holds since words that are not words
// (random letters) are costed by their rare letter pairs (rareWordPairs in
// features_words.go): its worst 5th percentile over 60 seeds at the default
// sample is 0.862 (o200k) and 0.859 (Gemma 3). Random pseudo-words of Greek
// or Cyrillic alone, whose letter pairs are not costed, are under-counted by
// 15 to 20 percent; in the class they are one generator of eight.
var hostileGaps = map[string]float64{}

// Environment variables of TestEstimatorHostileClasses.
const (
	// hostileSeedEnv sets the seed, to reproduce a run: every run draws a
	// new one and logs it.
	hostileSeedEnv = "TOKENS_HOSTILE_SEED"
	// hostileNEnv sets the number of texts per class.
	hostileNEnv = "TOKENS_HOSTILE_N"
)

// hostileGen writes a text of a hostile class into b: one line, block or
// stretch at a time, called until the text is long enough.
type hostileGen func(r *rand.Rand, b *strings.Builder)

// hostileClass is a class of hostile text and its generators.
type hostileClass struct {
	name string
	gens []hostileGen
}

// pickStr returns one of list.
func pickStr(r *rand.Rand, list ...string) string { return list[r.IntN(len(list))] }

// runeFrom returns a rune drawn uniformly from the inclusive ranges.
func runeFrom(r *rand.Rand, ranges ...[2]rune) rune {
	rg := ranges[r.IntN(len(ranges))]
	return rg[0] + rune(r.IntN(int(rg[1]-rg[0]+1)))
}

// runLen draws a run length by one of three distributions: geometric
// (mostly short), uniform, or heavy-tailed (mostly short, sometimes very
// long).
func runLen(r *rand.Rand, dist, max int) int {
	switch dist % 3 {
	case 0:
		n := 1
		for n < max && r.IntN(4) != 0 {
			n++
		}
		return n
	case 1:
		return 1 + r.IntN(max)
	}
	return min(max, 1+int(math.Exp(r.Float64()*math.Log(float64(max)))))
}

const (
	asciiPunct = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
	lowerAlpha = "abcdefghijklmnopqrstuvwxyz"
	upperAlpha = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	digits     = "0123456789"
)

// someOf returns a random sub-alphabet of 2–n bytes of alpha.
func someOf(r *rand.Rand, alpha string, n int) string {
	k := 2 + r.IntN(n-1)
	out := make([]byte, k)
	for i := range out {
		out[i] = alpha[r.IntN(len(alpha))]
	}
	return string(out)
}

// pseudoWord returns n letters drawn uniformly from the inclusive range rg:
// a word of the range's script that is not a word.
func pseudoWord(r *rand.Rand, rg [2]rune, n int) string {
	var b strings.Builder
	for range n {
		b.WriteRune(runeFrom(r, rg))
	}
	return b.String()
}

// The hostile classes and their generators.
var hostileClasses = []hostileClass{
	{"punct_symbols", []hostileGen{
		// Uniformly random ASCII punctuation, lines of random length.
		func(r *rand.Rand, b *strings.Builder) {
			for i, n := 0, 10+r.IntN(120); i < n; i++ {
				b.WriteByte(asciiPunct[r.IntN(len(asciiPunct))])
			}
			b.WriteByte('\n')
		},
		// A small random alphabet of punctuation, in runs, with spaces.
		func(r *rand.Rand, b *strings.Builder) {
			alpha := someOf(r, asciiPunct, 6)
			for i, n := 0, 5+r.IntN(40); i < n; i++ {
				b.WriteString(strings.Repeat(string(alpha[r.IntN(len(alpha))]), runLen(r, i, 6)))
				if r.IntN(5) == 0 {
					b.WriteByte(' ')
				}
			}
			b.WriteByte('\n')
		},
		// Operators of programming languages, glued or spaced.
		func(r *rand.Rand, b *strings.Builder) {
			sep := pickStr(r, "", " ", "")
			for i, n := 0, 5+r.IntN(30); i < n; i++ {
				b.WriteString(pickStr(r, "=>", "::", "&&", "||", "!==", "<<=", "...", "->", "?.", "??", "**=", "%}", "{%",
					"#[", "]]", "@@", "$$", "^=", "~>", "|>", "<|", ":=", "!!", "//", "/*", "*/", "<!--", "-->", "\\\\"))
				b.WriteString(sep)
			}
			b.WriteByte('\n')
		},
		// Unicode symbols: arrows, math operators, currency, technical
		// and misc symbols, with ASCII punctuation between.
		func(r *rand.Rand, b *strings.Builder) {
			for i, n := 0, 10+r.IntN(60); i < n; i++ {
				if r.IntN(3) == 0 {
					b.WriteByte(asciiPunct[r.IntN(len(asciiPunct))])
					continue
				}
				b.WriteRune(runeFrom(r, [2]rune{0x2190, 0x21FF}, [2]rune{0x2200, 0x22FF}, [2]rune{0x20A0, 0x20BF},
					[2]rune{0x2300, 0x23FF}, [2]rune{0x2600, 0x26FF}, [2]rune{0x2010, 0x2027}))
			}
			b.WriteString(pickStr(r, "\n", " ", "\n\n"))
		},
		// Punctuation-only "code": brackets nested and closed, with
		// commas and colons, as a JSON skeleton without values.
		func(r *rand.Rand, b *strings.Builder) {
			depth := 0
			for i, n := 0, 20+r.IntN(80); i < n; i++ {
				switch c := r.IntN(6); {
				case c < 2 && depth < 12:
					b.WriteString(pickStr(r, "{", "[", "(", "{\"", "[["))
					depth++
				case c < 4 && depth > 0:
					b.WriteString(pickStr(r, "}", "]", ")", "\"}", "]]"))
					depth--
				default:
					b.WriteString(pickStr(r, ",", ":", ";", "\":\"", "\",", ".", "::"))
				}
			}
			b.WriteByte('\n')
		},
	}},
	{"single_char_runs", []hostileGen{
		// A run of one letter, lower or upper case.
		func(r *rand.Rand, b *strings.Builder) {
			alpha := pickStr(r, lowerAlpha, upperAlpha)
			b.WriteString(strings.Repeat(string(alpha[r.IntN(26)]), runLen(r, r.IntN(3), 600)))
			b.WriteString(pickStr(r, "\n", " ", ""))
		},
		// A run of one digit.
		func(r *rand.Rand, b *strings.Builder) {
			b.WriteString(strings.Repeat(string(digits[r.IntN(10)]), runLen(r, r.IntN(3), 400)))
			b.WriteString(pickStr(r, "\n", " ", ","))
		},
		// A run of one punctuation character.
		func(r *rand.Rand, b *strings.Builder) {
			b.WriteString(strings.Repeat(string(asciiPunct[r.IntN(len(asciiPunct))]), runLen(r, r.IntN(3), 300)))
			b.WriteString(pickStr(r, "\n", " ", ""))
		},
		// Runs of spaces between short words.
		func(r *rand.Rand, b *strings.Builder) {
			b.WriteString(pickStr(r, "x", "id", "ok", "a1", "=", "null"))
			b.WriteString(strings.Repeat(" ", runLen(r, r.IntN(3), 200)))
		},
		// A run of one CJK ideograph, kana or full-width character.
		func(r *rand.Rand, b *strings.Builder) {
			c := runeFrom(r, [2]rune{0x4E00, 0x6FFF}, [2]rune{0x3041, 0x3096}, [2]rune{0x30A1, 0x30FA}, [2]rune{0xFF01, 0xFF5E})
			b.WriteString(strings.Repeat(string(c), runLen(r, r.IntN(3), 200)))
			b.WriteString(pickStr(r, "\n", "。", " "))
		},
		// Runs of one character, the character changing each run, from
		// every class at once.
		func(r *rand.Rand, b *strings.Builder) {
			for i, n := 0, 3+r.IntN(10); i < n; i++ {
				var c string
				switch r.IntN(4) {
				case 0:
					c = string(lowerAlpha[r.IntN(26)])
				case 1:
					c = string(digits[r.IntN(10)])
				case 2:
					c = string(asciiPunct[r.IntN(len(asciiPunct))])
				default:
					c = string(runeFrom(r, [2]rune{0x410, 0x44F}, [2]rune{0x3B1, 0x3C9}, [2]rune{0x2500, 0x257F}))
				}
				b.WriteString(strings.Repeat(c, runLen(r, i, 80)))
			}
			b.WriteByte('\n')
		},
		// Runs of one accented Latin, Greek or Cyrillic letter, glued to
		// the next run or not (added after the estimator was fitted to
		// the generators above, to check it on runs it was not tuned to).
		func(r *rand.Rand, b *strings.Builder) {
			c := runeFrom(r, [2]rune{0xC0, 0x17F}, [2]rune{0x3B1, 0x3C9}, [2]rune{0x410, 0x44F})
			b.WriteString(strings.Repeat(string(c), runLen(r, r.IntN(3), 150)))
			b.WriteString(pickStr(r, "", " ", "\n"))
		},
		// Masks and padding inside words: a short identifier, then a run
		// of one letter or digit, then maybe a suffix ("idxxxxxxxx",
		// "AAAAAAAAAAAA==", "user_zzzzzz9"); added with the one above.
		func(r *rand.Rand, b *strings.Builder) {
			b.WriteString(pickStr(r, "id", "X", "user_", "0x", "tok", "Bearer ", "sk-", ""))
			c := pickStr(r, lowerAlpha, upperAlpha, digits)
			b.WriteString(strings.Repeat(string(c[r.IntN(len(c))]), runLen(r, r.IntN(3), 120)))
			b.WriteString(pickStr(r, "", "==", "9", "_end", "-XXXX", ".txt"))
			b.WriteString(pickStr(r, " ", "\n", ",", ""))
		},
	}},
	{"minified_code", []hostileGen{
		// Minified JavaScript: one-letter names, no spaces.
		func(r *rand.Rand, b *strings.Builder) {
			v := func() string {
				return string(lowerAlpha[r.IntN(26)]) + pickStr(r, "", "", "", string(upperAlpha[r.IntN(26)]), strconv.Itoa(r.IntN(10)), "$", "_")
			}
			switch r.IntN(6) {
			case 0:
				fmt.Fprintf(b, "function %s(%s,%s){return %s%s%s}", v(), v(), v(), v(), pickStr(r, "+", "*", "&&", "||", "===", "<<"), v())
			case 1:
				fmt.Fprintf(b, "var %s=%s.%s(%s,%d),%s=!0;", v(), v(), pickStr(r, "call", "apply", "bind", "map", "filter", "reduce"), v(), r.IntN(1000), v())
			case 2:
				fmt.Fprintf(b, "if(%s[%s]!==void 0)%s=%s?%s:%s;else{%s++}", v(), v(), v(), v(), v(), v(), v())
			case 3:
				fmt.Fprintf(b, "!function(%s){%s.exports=%s}(this);", v(), v(), v())
			case 4:
				fmt.Fprintf(b, "%s.prototype.%s=function(){return this.%s>>>%d};", v(), v(), v(), r.IntN(32))
			default:
				fmt.Fprintf(b, "for(var %s=0;%s<%s.length;%s+=%d)%s.push(%s[%s]);", v(), v(), v(), v(), 1+r.IntN(4), v(), v(), v())
			}
		},
		// Minified CSS: selectors and declarations without whitespace.
		func(r *rand.Rand, b *strings.Builder) {
			sel := pickStr(r, ".", "#", "") + someOf(r, lowerAlpha, 5) + pickStr(r, "", "-"+someOf(r, lowerAlpha, 4), ">"+someOf(r, lowerAlpha, 3), ":hover")
			b.WriteString(sel + "{")
			for i, n := 0, 1+r.IntN(5); i < n; i++ {
				if i > 0 {
					b.WriteByte(';')
				}
				switch r.IntN(4) {
				case 0:
					fmt.Fprintf(b, "%s:#%06x", pickStr(r, "color", "background", "border-color", "fill"), r.IntN(1<<24))
				case 1:
					fmt.Fprintf(b, "%s:%dpx %dpx", pickStr(r, "margin", "padding", "inset"), r.IntN(40), r.IntN(40))
				case 2:
					fmt.Fprintf(b, "%s:%s", pickStr(r, "display", "position", "float"), pickStr(r, "flex", "none", "absolute", "block", "left"))
				default:
					fmt.Fprintf(b, "transform:translate(%d%%,%.1fem) rotate(%ddeg)", r.IntN(100), r.Float64()*4, r.IntN(360))
				}
			}
			b.WriteString("}")
		},
		// A webpack-style bundle: module table with numeric keys and
		// mangled names.
		func(r *rand.Rand, b *strings.Builder) {
			fmt.Fprintf(b, "%d:function(e,t,n){\"use strict\";n.d(t,\"%s\",function(){return %s});var r=n(%d),o=n.n(r);",
				r.IntN(9999), someOf(r, lowerAlpha+upperAlpha, 3), someOf(r, lowerAlpha, 2), r.IntN(9999))
			for i, n := 0, r.IntN(4); i < n; i++ {
				fmt.Fprintf(b, "o()(%s,{%s:%d,%s:\"%s\"});", someOf(r, lowerAlpha, 2), someOf(r, lowerAlpha, 3), r.IntN(100), someOf(r, lowerAlpha, 2), someOf(r, lowerAlpha+digits, 8))
			}
			b.WriteString("},")
		},
	}},
	{"hex_base64", []hostileGen{
		// hexdump -C.
		func(r *rand.Rand, b *strings.Builder) {
			fmt.Fprintf(b, "%08x ", r.IntN(1<<24)*16)
			var ascii []byte
			for i := 0; i < 16; i++ {
				c := byte(r.IntN(256))
				if i == 8 {
					b.WriteByte(' ')
				}
				fmt.Fprintf(b, " %02x", c)
				if c < 0x20 || c > 0x7e {
					c = '.'
				}
				ascii = append(ascii, c)
			}
			fmt.Fprintf(b, "  |%s|\n", ascii)
		},
		// xxd: groups of four hex digits.
		func(r *rand.Rand, b *strings.Builder) {
			fmt.Fprintf(b, "%08x:", r.IntN(1<<24)*16)
			for i := 0; i < 8; i++ {
				fmt.Fprintf(b, " %04x", r.IntN(1<<16))
			}
			b.WriteString("  ................\n")
		},
		// A long hex string (a digest list, a key), lower or upper case.
		func(r *rand.Rand, b *strings.Builder) {
			n := 16 << r.IntN(4)
			s := make([]byte, n)
			for i := range s {
				s[i] = "0123456789abcdef"[r.IntN(16)]
			}
			if r.IntN(3) == 0 {
				s = []byte(strings.ToUpper(string(s)))
			}
			b.Write(s)
			b.WriteString(pickStr(r, "\n", " ", ",", "  "))
		},
		// Base64 of random bytes, wrapped at 76 or 64, or unwrapped.
		func(r *rand.Rand, b *strings.Builder) {
			raw := make([]byte, 30+r.IntN(600))
			for i := range raw {
				raw[i] = byte(r.IntN(256))
			}
			enc := base64.StdEncoding
			if r.IntN(2) == 0 {
				enc = base64.RawURLEncoding
			}
			s := enc.EncodeToString(raw)
			if w := pickStr(r, "76", "64", "0"); w != "0" {
				n, _ := strconv.Atoi(w)
				for len(s) > n {
					b.WriteString(s[:n] + "\n")
					s = s[n:]
				}
			}
			b.WriteString(s + "\n")
		},
		// Base64 of text (mostly ASCII bytes): a different letter mix.
		func(r *rand.Rand, b *strings.Builder) {
			words := []string{"the", "config", "token", "user", "value", "error", "request", "payload", "{", "}", ":", "\"", "1"}
			var t strings.Builder
			for i, n := 0, 10+r.IntN(60); i < n; i++ {
				t.WriteString(words[r.IntN(len(words))] + " ")
			}
			b.WriteString("data:text/plain;base64," + base64.StdEncoding.EncodeToString([]byte(t.String())) + "\n")
		},
	}},
	{"urlenc_regex", []hostileGen{
		// URLs with percent-encoded query values of random bytes.
		func(r *rand.Rand, b *strings.Builder) {
			fmt.Fprintf(b, "https://%s.example.com/%s?", someOf(r, lowerAlpha, 8), someOf(r, lowerAlpha, 6))
			for i, n := 0, 1+r.IntN(6); i < n; i++ {
				raw := make([]byte, 4+r.IntN(30))
				for j := range raw {
					raw[j] = byte(r.IntN(256))
				}
				fmt.Fprintf(b, "%s=%s&", someOf(r, lowerAlpha, 5), url.QueryEscape(string(raw)))
			}
			b.WriteByte('\n')
		},
		// Percent-encoded UTF-8 text in full (every byte %XX).
		func(r *rand.Rand, b *strings.Builder) {
			s := pickStr(r, "résumé naïve", "Привет мир", "東京都", "ümlaut straße", "a/b?c=d&e")
			for i := 0; i < len(s); i++ {
				fmt.Fprintf(b, "%%%02X", s[i])
			}
			b.WriteString(pickStr(r, "%20", "+", "/", "\n"))
		},
		// Form-encoded text: '+' for spaces, reserved characters escaped.
		func(r *rand.Rand, b *strings.Builder) {
			words := []string{"select", "from", "where", "id", "=", "'x'", "and", "1", "<>", "2", "order", "by", "name;", "--", "\"q\"", "#tag", "50%"}
			var t []string
			for i, n := 0, 3+r.IntN(12); i < n; i++ {
				t = append(t, words[r.IntN(len(words))])
			}
			b.WriteString("q=" + url.QueryEscape(strings.Join(t, " ")) + "&page=" + strconv.Itoa(r.IntN(100)) + "\n")
		},
		// Regular expressions of validators and routers.
		func(r *rand.Rand, b *strings.Builder) {
			atom := func() string {
				return pickStr(r, `\d`, `\w`, `\s`, `[a-z0-9_-]`, `[A-Fa-f0-9]`, `(?:\.|-)`, `[^/\s]`, `\b`, `[\p{L}\p{N}]`, `\\`, `\/`, `.`)
			}
			q := func() string { return pickStr(r, "", "+", "*", "?", "{2,4}", "{1,}", "+?", "*?", "{8}") }
			b.WriteString(pickStr(r, "^", "(?i)^", "/^", ""))
			for i, n := 0, 2+r.IntN(8); i < n; i++ {
				if r.IntN(3) == 0 {
					fmt.Fprintf(b, "(?P<%s>%s%s)", someOf(r, lowerAlpha, 5), atom(), q())
				} else {
					b.WriteString(atom() + q())
				}
				if r.IntN(4) == 0 {
					b.WriteByte('|')
				}
			}
			b.WriteString(pickStr(r, "$", "$/", "$/gm", "") + "\n")
		},
	}},
	{"ascii_art_indent", []hostileGen{
		// Banner art from a small art alphabet and spaces.
		func(r *rand.Rand, b *strings.Builder) {
			alpha := pickStr(r, `_|/\ `, `#  `, `()<>- `, `.:'  `, `*+  `, `@%#*+=-:.  `)
			w := 20 + r.IntN(60)
			for i := 0; i < w; i++ {
				b.WriteByte(alpha[r.IntN(len(alpha))])
			}
			b.WriteByte('\n')
		},
		// Deep indentation: lines of many spaces and a short token.
		func(r *rand.Rand, b *strings.Builder) {
			b.WriteString(strings.Repeat(" ", runLen(r, r.IntN(3), 120)))
			b.WriteString(pickStr(r, "}", "end", "- item", "</div>", "x: 1", "return", "|", ")") + "\n")
		},
		// Tab indentation, with trailing spaces sometimes.
		func(r *rand.Rand, b *strings.Builder) {
			b.WriteString(strings.Repeat("\t", runLen(r, r.IntN(3), 30)))
			b.WriteString(pickStr(r, "}", "fi", "done", "x++;", "</li>", "-"))
			b.WriteString(strings.Repeat(" ", r.IntN(5)) + "\n")
		},
		// Box diagrams drawn with +, -, | and spaces.
		func(r *rand.Rand, b *strings.Builder) {
			w := 4 + r.IntN(30)
			fmt.Fprintf(b, "%s+%s+\n%s|%s|\n%s+%s+\n", strings.Repeat(" ", r.IntN(20)), strings.Repeat("-", w), strings.Repeat(" ", r.IntN(20)),
				strings.Repeat(" ", w), strings.Repeat(" ", r.IntN(20)), strings.Repeat("=", w))
		},
		// Unicode box drawing and block art.
		func(r *rand.Rand, b *strings.Builder) {
			for i, n := 0, 10+r.IntN(60); i < n; i++ {
				if r.IntN(4) == 0 {
					b.WriteByte(' ')
					continue
				}
				b.WriteRune(runeFrom(r, [2]rune{0x2500, 0x257F}, [2]rune{0x2580, 0x259F}))
			}
			b.WriteByte('\n')
		},
	}},
	{"emoji_scripts", []hostileGen{
		// Emoji, spaced or glued.
		func(r *rand.Rand, b *strings.Builder) {
			for i, n := 0, 5+r.IntN(30); i < n; i++ {
				b.WriteRune(runeFrom(r, [2]rune{0x1F300, 0x1F5FF}, [2]rune{0x1F600, 0x1F64F}, [2]rune{0x1F680, 0x1F6FF}, [2]rune{0x1F900, 0x1F9FF}))
				if r.IntN(3) == 0 {
					b.WriteByte(' ')
				}
			}
			b.WriteString(pickStr(r, "\n", " ", "!\n"))
		},
		// Emoji with skin tones, variation selectors and joiners.
		func(r *rand.Rand, b *strings.Builder) {
			for i, n := 0, 2+r.IntN(10); i < n; i++ {
				b.WriteRune(runeFrom(r, [2]rune{0x1F466, 0x1F469}, [2]rune{0x1F44A, 0x1F450}))
				b.WriteRune(runeFrom(r, [2]rune{0x1F3FB, 0x1F3FF}))
				if r.IntN(2) == 0 {
					b.WriteString("\u200D" + pickStr(r, "\u2764\uFE0F", "\U0001F4BB", "\U0001F680", "\u2696\uFE0F"))
				}
			}
			b.WriteString(pickStr(r, " ", "\n"))
		},
		// Words in one script each, the script changing word by word.
		func(r *rand.Rand, b *strings.Builder) {
			for i, n := 0, 3+r.IntN(10); i < n; i++ {
				rg := [][2]rune{{0x3B1, 0x3C9}, {0x430, 0x44F}, {0x3041, 0x3096}, {0x30A1, 0x30FA}, {0x4E00, 0x6FFF}, {'a', 'z'}, {0xE0, 0xFF}}[r.IntN(7)]
				for j, m := 0, 2+r.IntN(8); j < m; j++ {
					b.WriteRune(runeFrom(r, rg))
				}
				b.WriteString(pickStr(r, " ", " ", ", ", "、"))
			}
			b.WriteByte('\n')
		},
		// Every character of another script.
		func(r *rand.Rand, b *strings.Builder) {
			for i, n := 0, 10+r.IntN(50); i < n; i++ {
				b.WriteRune(runeFrom(r, [2]rune{0x391, 0x3C9}, [2]rune{0x410, 0x44F}, [2]rune{0x3041, 0x3096}, [2]rune{0x4E00, 0x6FFF},
					[2]rune{'A', 'Z'}, [2]rune{'0', '9'}, [2]rune{0x1F600, 0x1F64F}, [2]rune{0xC0, 0x17F}))
			}
			b.WriteByte('\n')
		},
		// The generators below were added after the estimator was fitted
		// to the ones above, as an outside tester would write them: random
		// letters strung into words that are not words, in Latin and other
		// alphabets, with or without emoji, and none with CJK. Random
		// Latin letters are text in a script as any other here, the class
		// of "mixed scripts" that tokenizers cut far from prose.
		//
		// Random lower-case letters split into words of random length,
		// with a comma or a full stop now and then.
		func(r *rand.Rand, b *strings.Builder) {
			for i, n := 0, 3+r.IntN(15); i < n; i++ {
				b.WriteString(pseudoWord(r, [2]rune{'a', 'z'}, 1+r.IntN(12)))
				b.WriteString(pickStr(r, " ", " ", " ", " ", ", ", ". "))
			}
			b.WriteByte('\n')
		},
		// Random Latin pseudo-words with emoji between them, spaced or
		// glued.
		func(r *rand.Rand, b *strings.Builder) {
			for i, n := 0, 3+r.IntN(12); i < n; i++ {
				b.WriteString(pseudoWord(r, [2]rune{'a', 'z'}, 2+r.IntN(9)))
				b.WriteString(pickStr(r, " ", "", " "))
				if r.IntN(2) == 0 {
					b.WriteRune(runeFrom(r, [2]rune{0x1F300, 0x1F5FF}, [2]rune{0x1F600, 0x1F64F}, [2]rune{0x1F900, 0x1F9FF}))
					b.WriteString(pickStr(r, " ", ""))
				}
			}
			b.WriteString(pickStr(r, "\n", " "))
		},
		// Random pseudo-words in Latin, Cyrillic and Greek, the script
		// changing word by word, a capital first now and then.
		func(r *rand.Rand, b *strings.Builder) {
			for i, n := 0, 3+r.IntN(12); i < n; i++ {
				rg := [][2]rune{{'a', 'z'}, {0x430, 0x44F}, {0x3B1, 0x3C9}}[r.IntN(3)]
				w := pseudoWord(r, rg, 2+r.IntN(9))
				if r.IntN(4) == 0 {
					rs := []rune(w)
					rs[0] -= 0x20 // the capital of each of the three alphabets
					w = string(rs)
				}
				b.WriteString(w)
				b.WriteString(pickStr(r, " ", " ", ", ", " - "))
			}
			b.WriteByte('\n')
		},
		// Random pseudo-words of ASCII and accented Latin letters mixed
		// in each word ("qéxàvn"), a capital first now and then.
		func(r *rand.Rand, b *strings.Builder) {
			for i, n := 0, 3+r.IntN(12); i < n; i++ {
				if r.IntN(4) == 0 {
					b.WriteByte(upperAlpha[r.IntN(26)])
				}
				for j, m := 0, 2+r.IntN(9); j < m; j++ {
					b.WriteRune(runeFrom(r, [2]rune{'a', 'z'}, [2]rune{'a', 'z'}, [2]rune{0xE0, 0xFF}))
				}
				b.WriteString(pickStr(r, " ", " ", ", ", ". "))
			}
			b.WriteByte('\n')
		},
	}},
}

// hostileText draws a text of class c: its generators mixed (one, or two
// alternating), until it has about target bytes.
func hostileText(r *rand.Rand, c hostileClass, target int) string {
	g1 := c.gens[r.IntN(len(c.gens))]
	g2 := g1
	if r.IntN(3) == 0 {
		g2 = c.gens[r.IntN(len(c.gens))]
	}
	var b strings.Builder
	for i := 0; b.Len() < target; i++ {
		if i%2 == 0 {
			g1(r, &b)
		} else {
			g2(r, &b)
		}
	}
	return b.String()
}

// hostileSeed returns the run's seed: hostileSeedEnv's, else a new one.
func hostileSeed(t *testing.T) uint64 {
	if s := os.Getenv(hostileSeedEnv); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		require.NoError(t, err, "%s", hostileSeedEnv)
		return seed
	}
	return uint64(time.Now().UnixNano())
}

// hostileN returns the number of texts per class.
func hostileN(t *testing.T) int {
	if s := os.Getenv(hostileNEnv); s != "" {
		n, err := strconv.Atoi(s)
		require.NoError(t, err, "%s", hostileNEnv)
		require.Positive(t, n, "%s", hostileNEnv)
		return n
	}
	return hostileSamples
}

var (
	gemmaOnce sync.Once
	gemmaTok  *gemmabpe.Tokenizer
	gemmaErr  error
)

// gemmaCounter returns the exact Gemma-3 counter of testdata/gemma3_bpe.bz2.
func gemmaCounter(t *testing.T) *gemmabpe.Tokenizer {
	t.Helper()
	gemmaOnce.Do(func() {
		f, err := os.Open("testdata/gemma3_bpe.bz2")
		if err != nil {
			gemmaErr = err
			return
		}
		defer f.Close()
		s, err := gemmabpe.Read(f)
		if err != nil {
			gemmaErr = err
			return
		}
		gemmaTok, gemmaErr = gemmabpe.New(s)
	})
	require.NoError(t, gemmaErr)
	return gemmaTok
}

// percentile returns the p-th percentile of sorted v, nearest rank.
func percentile(v []float64, p float64) float64 {
	i := int(math.Ceil(p*float64(len(v)))) - 1
	return v[max(0, min(len(v)-1, i))]
}

// TestEstimatorHostileClasses draws texts of every hostile class, with a new
// seed each run (logged; TOKENS_HOSTILE_SEED reproduces it), and checks the
// 5th and 95th percentile of estimate/exact per class and family.
func TestEstimatorHostileClasses(t *testing.T) {
	if raceEnabled {
		t.Skip("runs without the race detector (make core-test): one goroutine, and minutes under it")
	}
	seed := hostileSeed(t)
	n := hostileN(t)
	t.Logf("seed %d, %d texts per class (reproduce: %s=%d %s=%d)", seed, n, hostileSeedEnv, seed, hostileNEnv, n)
	enc, err := tokenizer.Get(tokenizer.O200kBase)
	require.NoError(t, err)
	gemma := gemmaCounter(t)
	o200k, gemma3 := tokens.New(tokens.O200k), tokens.New(tokens.Gemma3)
	var report strings.Builder
	fmt.Fprintf(&report, "\n%-18s %6s %6s | %6s %6s\n", "class", "o p5", "o p95", "g p5", "g p95")
	for ci, c := range hostileClasses {
		r := rand.New(rand.NewPCG(seed, uint64(ci)))
		var ro, rg []float64
		for len(ro) < n {
			s := hostileText(r, c, 800+r.IntN(8000))
			y, err := enc.Count(s)
			require.NoError(t, err)
			if y < hostileMinTokens || y > hostileMaxTokens {
				continue
			}
			require.True(t, gemma.Covers(s), "%s: a generator writes runes outside the Gemma subset: %q", c.name, s)
			g, err := gemma.Count(s)
			require.NoError(t, err)
			ro = append(ro, float64(o200k.Text(s))/float64(y))
			rg = append(rg, float64(gemma3.Text(s))/float64(g))
		}
		sort.Float64s(ro)
		sort.Float64s(rg)
		o5, o95, g5, g95 := percentile(ro, 0.05), percentile(ro, 0.95), percentile(rg, 0.05), percentile(rg, 0.95)
		fmt.Fprintf(&report, "%-18s %6.3f %6.3f | %6.3f %6.3f\n", c.name, o5, o95, g5, g95)
		for _, q := range []struct {
			fam     string
			p5, p95 float64
		}{{"o200k", o5, o95}, {"gemma3", g5, g95}} {
			low := hostileLow
			if gap, ok := hostileGaps[q.fam+"/"+c.name]; ok {
				low = gap
				if q.p5 < hostileLow {
					t.Logf("known gap: %s %s p5 %.3f, under %.2f (floor %.2f)", c.name, q.fam, q.p5, hostileLow, gap)
				}
			}
			assert.GreaterOrEqual(t, q.p5, low, "%s %s: p5 of estimate/exact under-counts (seed %d)", c.name, q.fam, seed)
			assert.LessOrEqual(t, q.p95, hostileHigh, "%s %s: p95 of estimate/exact over-counts (seed %d)", c.name, q.fam, seed)
		}
	}
	t.Log(report.String())
}
