package core

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"google.golang.org/genai"
)

// Text helpers: a content's text, and cuts that keep UTF-8 valid.

// Cutting a text to a bound in tokens: truncateMiddle cuts by bytes, so a
// cut is guessed from the bound, counted, and shrunk until it fits.
const (
	// bytesPerTokenGuess is the first cut's length per token of the bound:
	// text runs about four bytes a token under the tokenizers the
	// estimator is fitted to, so three a token usually fits at once.
	bytesPerTokenGuess = 3
	// cutRetryPercent is how much of the last cut each retry keeps: three
	// retries take a first guess that was twice too long under its bound.
	cutRetryPercent = 75
)

// contentText joins the text parts of c (thoughts excluded).
func contentText(c *genai.Content) string {
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

// truncateMiddle bounds s to about maxBytes, keeping its head and tail (the
// facts an agent learned are often at either end) and saying what was cut.
// It never splits a UTF-8 sequence.
func truncateMiddle(s string, maxBytes int) string {
	if maxBytes <= 0 {
		return ""
	}
	if len(s) <= maxBytes {
		return s
	}
	marker := "\n[... " + strconv.Itoa(len(s)-maxBytes) + " bytes omitted ...]\n"
	keep := maxBytes - len(marker)
	if keep < 16 {
		return validPrefix(s, maxBytes)
	}
	head := validPrefix(s, keep*2/3)
	tail := validSuffix(s, keep-len(head))
	return head + marker + tail
}

func validPrefix(s string, n int) string {
	if n >= len(s) {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func validSuffix(s string, n int) string {
	if n >= len(s) {
		return s
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}

// sanitizeUTF8 replaces invalid UTF-8 so templates and providers accept it.
func sanitizeUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
