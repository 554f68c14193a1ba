// Package textcut is a content's text and the cuts the engine makes of
// text: a bound in bytes that keeps the head and the tail, prefixes that
// never split a UTF-8 sequence, invalid UTF-8 made valid for templates
// and providers, and payloads rendered as JSON text for transcripts.
package textcut

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/tokens"
)

// Cutting a text to a bound in tokens: Middle cuts by bytes, so a cut is
// guessed from the bound, counted, and shrunk until it fits.
const (
	// BytesPerTokenGuess is the first cut's length per token of the bound:
	// text runs about four bytes a token under the tokenizers the
	// estimator is fitted to, so three a token usually fits at once.
	BytesPerTokenGuess = 3
	// RetryPercent is how much of the last cut each retry keeps: three
	// retries take a first guess that was twice too long under its bound.
	RetryPercent = 75
)

// ContentText joins the text parts of c (thoughts excluded).
func ContentText(c *genai.Content) string {
	if c == nil {
		return ""
	}
	var parts []string
	for _, p := range c.Parts {
		if p != nil && p.Text != "" && !p.Thought {
			parts = append(parts, p.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// Middle bounds s to about maxBytes, keeping its head and tail (the facts
// an agent learned are often at either end) and saying what was cut. It
// never splits a UTF-8 sequence.
func Middle(s string, maxBytes int) string {
	if maxBytes <= 0 {
		return ""
	}
	if len(s) <= maxBytes {
		return s
	}
	marker := "\n[... " + strconv.Itoa(len(s)-maxBytes) + " bytes omitted ...]\n"
	keep := maxBytes - len(marker)
	if keep < 16 {
		return Prefix(s, maxBytes)
	}
	head := Prefix(s, keep*2/3)
	tail := suffix(s, keep-len(head))
	return head + marker + tail
}

// Prefix is the longest prefix of s of at most n bytes that does not split
// a UTF-8 sequence.
func Prefix(s string, n int) string {
	if n >= len(s) {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func suffix(s string, n int) string {
	if n >= len(s) {
		return s
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}

// Sanitize replaces invalid UTF-8 so templates and providers accept it.
func Sanitize(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// CompactJSON renders a tool result for a transcript. Results that hold a
// single string (the common {"output": "..."} or {"result": "..."}) render as
// that string, so excerpts show text rather than escapes.
func CompactJSON(v any) string {
	if s, ok := SingleString(v); ok {
		return s
	}
	return JSON(v)
}

// SingleString is the string a tool result holds when it holds only one
// (as {"output": "..."}), made valid UTF-8; ok is false otherwise.
func SingleString(v any) (string, bool) {
	if m, ok := v.(map[string]any); ok && len(m) == 1 {
		for _, val := range m {
			if s, ok := val.(string); ok {
				return Sanitize(s), true
			}
		}
	}
	return "", false
}

// JSON renders v as compact JSON, as json.Marshal would, for values
// of any depth and without failing: a tool result that refers to itself is
// rendered with the reference as null (see tokens.AppendJSON).
func JSON(v any) string {
	return Sanitize(string(tokens.AppendJSON(nil, v)))
}
