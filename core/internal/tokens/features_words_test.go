package tokens

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Random-looking words: which words the second pass counts, and that it runs
// only in text dense with both CJK and another script's letters.
func TestRandomWordLetters(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want int32
	}{
		{"random letters with four consonants in a row count whole", "gwvmmzw", 7},
		{"four consonants and nothing else are a word of four", "zqqk", 4},
		{"English words have vowels every few letters", "the quick brown fox jumps over lazy dogs", 0},
		{"y is a vowel: rhythm and system are not random", "rhythm system symptoms", 0},
		{"a rare English cluster counts too", "strengths", 9},
		{"three letters are too short to tell", "vfn xzq", 0},
		{"each lower-case run is a word", "Bxkfjq,gwvmmzw", 5 + 7},
		{"capitals and digits end a run", "xkcdQxkcd9xkcd", 12},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, randomWordLetters(tc.in))
		})
	}
}

func TestRandomWordFeatureNeedsMixedScripts(t *testing.T) {
	random := "gwvmmzw bxkfjq "
	mixed := strings.Repeat("αβγδ 漐啛 "+random, 10)
	assert.Equal(t, int32(10*(7+6)), Count(mixed)[fRandomWordG], "Greek, Han and random words mixed")
	assert.Zero(t, Count(strings.Repeat("αβγδ ζηθ "+random, 10))[fRandomWordG], "no CJK")
	assert.Zero(t, Count(strings.Repeat("漐啛 漐啛 "+random, 10))[fRandomWordG], "no letters of another script")
	diluted := mixed + strings.Repeat("plain English text, ", 200)
	assert.Zero(t, Count(diluted)[fRandomWordG], "scripts too sparse")
}
