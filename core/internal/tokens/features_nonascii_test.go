package tokens

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// What starts at a non-ASCII byte, by script: each text's non-zero features,
// every other feature zero.
func TestNonASCII(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want map[int]int32
	}{
		{"a Cyrillic word is one run of other letters", "Привет", map[int]int32{fOtherLetter: 6, fOtherRun: 1}},
		{"a Greek letter then ASCII letters", "Ωmega", map[int]int32{fOtherLetter: 1, fOtherRun: 1, fWord2: 1}},
		{
			"Japanese: kana pairs from the kana table, then a kanji run after kana whose two ideographs pair",
			"こんにちは世界",
			map[int]int32{fKana: 5, fKanaSolo: 3, fKanaSoloG: 3, fKanaSolo2G: 1, fHan: 2, fHanRunKana: 1, fHanHead: 1, fHanSolo: 1},
		},
		{
			"random kana: in Gemma 3 each after the first is alone, apart from the one before",
			"ゑぬゐ",
			map[int]int32{fKana: 3, fCJKSplit: 3, fKanaSolo: 3, fKanaSoloG: 3, fKanaSolo2G: 2},
		},
		{"Hangul syllables", "한국어", map[int]int32{fHangul: 3}},
		{"a run of one ideograph: each after the first a token", "东东东",
			map[int]int32{fHan: 1, fHanRun: 1, fHanHead: 1, fHanSolo: 1, fCJKRepeat: 2}},
		{"a run of one kana", "ルルル", map[int]int32{fKana: 1, fKanaSolo: 1, fKanaSoloG: 1, fCJKRepeat: 2}},
		{"a run of one Greek letter", "ΩΩΩ", map[int]int32{fOtherLetter: 1, fOtherRun: 1, fOtherRepeat: 2}},
		{"emoji cost their table, a space before one apart", "😀 ✅", map[int]int32{fSymO200k: 2, fSymGemma: 2, fSpaceSymbol: 1}},
		{"CJK brackets are CJK punctuation", "「」", map[int]int32{fCJKPunct: 2}},
		{"a full-width letter is two o200k tokens, a full-width bang one", "ｋ！", map[int]int32{fCJKPunct: 2, fWideSplit: 1}},
		{"an ideograph of Extension B", "\U00020000", map[int]int32{fHanRare: 1}},
		{"a private-use rune costs its three bytes", "\ue000", map[int]int32{fPrivate: 3}},
		{"an invalid byte between two words", "ab\xffcd", map[int]int32{fWord1: 2, fCtrl: 1}},
		{"a word that starts with an accented letter", "été", map[int]int32{fWord2: 1, fAccent: 2, fAccentWord: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, featuresOf(tt.want), Count(tt.in))
		})
	}
}

// featuresOf is the feature vector with the counts of m, every other zero.
func featuresOf(m map[int]int32) Features {
	var f Features
	for i, v := range m {
		f[i] = v
	}
	return f
}
