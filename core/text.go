package core

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"google.golang.org/genai"
)

// Text helpers: a content's text, and cuts that keep UTF-8 valid.

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
