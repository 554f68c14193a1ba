package tokens

import (
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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, featuresOf(tt.want), Count(tt.in))
		})
	}
}
