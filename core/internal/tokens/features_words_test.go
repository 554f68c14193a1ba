package tokens

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Words that are not words: which letter pairs the second pass counts, and
// that it runs only where a sample of the text shows them.
func TestRareWordPairs(t *testing.T) {
	tests := []struct {
		name        string
		in          string
		pairs, rare int32
	}{
		{"random letters hold rare pairs", "gwvmmzw", 6, 5},
		{"English words hold none", "the quick brown fox jumps over the lazy dog", 26, 0},
		{"a capital then lower case is a word", "Xqzk", 3, 3},
		{"a capital inside is not a word (base64, camelCase)", "aGVsbG8 getValue", 0, 0},
		{"a run glued to digits is not a word", "xq9 9xq", 0, 0},
		{"punctuation and other scripts end words", "xq.xq😀xq", 3, 3},
		{"one letter has no pair", "q x z", 0, 0},
		{"commands and URLs are words of real text", "kubectl get pods -n https://example.com/api", 25, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pairs, rare := rareWordPairs(tc.in, 0, len(tc.in), math.MaxInt32)
			assert.Equal(t, tc.pairs, pairs, "pairs")
			assert.Equal(t, tc.rare, rare, "rare")
		})
	}
}

func TestRareBigramFeatureNeedsTheSample(t *testing.T) {
	random := strings.Repeat("gwvmmzw xq ubtk fjd ", 20)
	assert.Positive(t, Count(random)[fRareBigram], "random words, no other script")
	assert.Positive(t, Count(strings.Repeat("αβγδ 漐啛 gwvmmzw ", 5))[fRareBigram], "short, but CJK and Greek mixed with them")
	assert.Zero(t, Count(random[:200])[fRareBigram], "too short to sample")
	prose := strings.Repeat("The estimator counts words, digits and punctuation in one pass over the text. ", 40)
	assert.Zero(t, Count(prose)[fRareBigram], "prose")
	assert.Zero(t, Count(prose + "gwvmmzw xq " + prose)[fRareBigram], "a few random words in prose: not sampled")
}
