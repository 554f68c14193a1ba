package tokens

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Runs of punctuation bytes and of one letter: each text's non-zero features,
// every other feature zero.
func TestPunctRun(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want map[int]int32
	}{
		{"four dashes are one o200k token", "----", map[int]int32{fPunctRun: 1, fPunctLong: 1}},
		{"eight dashes, a power of two, are one token too", "--------", map[int]int32{fPunctRun: 1, fPunctLong: 1}},
		{"seven dashes are pieces of four, two and one", "-------", map[int]int32{fPunctRun: 1, fPunctLong: 1, fPunctLongMore: 2, fPunctLongMoreG: 2}},
		{"a long alternation of two bytes: a pair, a byte, then the alternation", "=-=-=-=-",
			map[int]int32{fPunctRun: 1, fPunctMixedPair: 1, fPunctMixed: 1, fPunctAlt: 5}},
		{"a short alternation is pairs of punctuation", "!?!?", map[int]int32{fPunctRun: 1, fPunctMixedPair: 1, fPunctMixed: 2}},
		{"a long run of pipes counts its pipes", "||||||", map[int]int32{fPunctRun: 1, fPunctLong: 1, fPunctLongMore: 1, fPunctLongMoreG: 2, fPipe: 6}},
		{"a triple that is one token", "\":\"", map[int]int32{fPunctRun: 1, fPunctTriple: 1}},
		{"brackets: a repeat, then a pair", "}}])", map[int]int32{fPunctRun: 1, fPunctRepeat: 1, fPunctMixed: 1, fPunctMixedPair: 1}},
		{"a run of one letter costs its run table", "aaaaaaaa", map[int]int32{fLetterRun: 1, fLetterRunG: 1}},
		{"runs of a capital cost more in Gemma 3", "IIIIII", map[int]int32{fLetterRun: 2, fLetterRunG: 3}},
		{"a letter before a run of one letter is a word of its own", "A" + strings.Repeat("n", 16),
			map[int]int32{fWord1: 1, fLetterRun: 8, fLetterRunG: 4}},
		{"a word ends where a run starts inside it, and the rest is a word", "abcdefgxxxxxxxxhijk",
			map[int]int32{fWord3: 1, fWord2: 1, fLetterRun: 1, fLetterRunG: 1}},
		{"a run of capitals after lower-case letters", "nn" + strings.Repeat("R", 16),
			map[int]int32{fWord1: 1, fLetterRun: 8, fLetterRunG: 8}},
		{"glued runs of one letter each", "VVV" + strings.Repeat("T", 8) + strings.Repeat("n", 8),
			map[int]int32{fWord2: 1, fUpper: 1, fUpperLetters: 3, fLetterRun: 8, fLetterRunG: 6}},
		{"words of up to 16 letters are not looked into", "A" + strings.Repeat("n", 15), map[int]int32{fWord5: 1, fWordExtra: 4, fTitle: 1}},
		{"three equal letters in a word are no run", "Walllessnessesses", map[int]int32{fWord5: 1, fWordExtra: 5, fTitle: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, featuresOf(tt.want), Count(tt.in))
		})
	}
}
