package recallindex

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func terms(s string) []string {
	var out []string
	EachTerm(s, func(t string) bool { out = append(out, t); return true })
	return out
}

func TestEachTerm(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"Hello, World!", []string{"hello", "world"}},
		{"MARK-7f3a9 found", []string{"mark", "7f3a9", "found"}},
		{"parseConfig failed", []string{"parseconfig", "parse", "config", "failed"}},
		{"snake_case_name", []string{"snake", "case", "name"}},
		{"port=8080\x00\x1b[31m", []string{"port", "8080", "31m"}},
		{"Größe ÄRGER", []string{"größe", "ärger"}},
		{strings.Repeat("a", 100), []string{strings.Repeat("a", MaxTermBytes)}},
	} {
		assert.Equal(t, tc.want, terms(tc.in), tc.in)
	}
}

func TestEachTermAt_OffsetsAreTheTexts(t *testing.T) {
	// "İ" lower-cases to a letter of another length: the offsets still
	// name the text's own bytes.
	s := "İSTANBUL parseConfig walrus"
	var got []string
	EachTermAt(s, func(term string, at, end int) bool {
		got = append(got, term+"="+s[at:end])
		return true
	})
	assert.Equal(t, []string{strings.ToLower("İSTANBUL") + "=İSTANBUL", "parseconfig=parseConfig", "parse=parse", "config=Config", "walrus=walrus"}, got)
}
