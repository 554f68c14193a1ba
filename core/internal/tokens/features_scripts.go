package tokens

import "math/bits"

// Scripts and runs: the script class of a rune, marks, and the token cost of
// punctuation and other runs.

// isLatinLetter reports whether r is a non-ASCII Latin letter.
func isLatinLetter(r rune) bool {
	return (r >= 0xC0 && r <= 0x24F && r != 0xD7 && r != 0xF7) || (r >= 0x1E00 && r <= 0x1EFF)
}

// markTokens is the o200k_base cost of a combining mark alone: the marks of
// U+1AB0–U+1AFF and U+1DC0–U+1DFF are three byte tokens each (61 of 64 and
// 30 of 31 in the vocabulary); those of U+0300–U+036F, U+20D0–U+20FF and
// U+FE20–U+FE2F two (their lead bytes pair up; 12 of the 112 basic marks are
// one token, not worth a table).
func markTokens(r rune) int32 {
	if r >= 0x1AB0 && r <= 0x1DFF {
		return 3
	}
	return 2
}

func scriptOf(r rune) int {
	switch {
	case r >= 0x4E00 && r <= 0x9FFF, r >= 0x3400 && r <= 0x4DBF, r >= 0xF900 && r <= 0xFAFF:
		return sHan
	case r >= 0x3040 && r <= 0x30FF, r >= 0x31F0 && r <= 0x31FF, r >= 0xFF66 && r <= 0xFF9F:
		return sKana
	case r >= 0xAC00 && r <= 0xD7AF, r >= 0x1100 && r <= 0x11FF, r >= 0x3130 && r <= 0x318F:
		return sHangul
	case r >= 0x3000 && r <= 0x303F, r >= 0xFF00 && r <= 0xFF65:
		return sCJKPunct
	case r >= 0x370 && r <= 0x52F, r >= 0x530 && r <= 0x8FF, r >= 0x900 && r <= 0xDFF,
		r >= 0xE00 && r <= 0xFFF, r >= 0x10A0 && r <= 0x10FF:
		return sOther
	case r >= 0x2000 && r <= 0x206F:
		return sUniPunct
	case r >= boxFirst && r <= boxLast:
		return sBox
	case r >= combiningFirst && r <= combiningLast, r >= 0x1AB0 && r <= 0x1AFF, r >= 0x1DC0 && r <= 0x1DFF,
		r >= 0x20D0 && r <= 0x20FF, r >= 0xFE20 && r <= 0xFE2F:
		return sCombining
	case r >= 0xE000 && r <= 0xF8FF, r >= 0xE0000 && r <= 0x10FFFF:
		// Private use, and the tags and variation selectors of plane 14
		// (subdivision flags are tag sequences): split into bytes.
		return sPrivate
	case r >= 0x20000 && r <= 0x3FFFF:
		return sHanRare
	case r >= 0x10000 && (r < 0x1F000 || r > 0x1FAFF):
		// Emoji (U+1F000–U+1FAFF) have tokens of their own; the rest of
		// the astral planes is mostly split into bytes.
		return sAstral
	}
	return sSymbol
}

var bmpScript = func() (t [0x10000 >> scriptBlockBits]uint8) {
	for b := range t {
		r0 := rune(b << scriptBlockBits)
		class := scriptOf(r0)
		for r := r0 + 1; r < r0+1<<scriptBlockBits; r++ {
			if scriptOf(r) != class {
				class = sMixed
				break
			}
		}
		t[b] = uint8(class)
	}
	return t
}()

// scriptOfRune is scriptOf, with the script table for the BMP.
func scriptOfRune(r rune) int {
	if r < 0x10000 {
		if class := bmpScript[r>>scriptBlockBits]; class != sMixed {
			return int(class)
		}
	}
	return scriptOf(r)
}

// longPunct is the length from which a run of one ASCII punctuation byte
// ("=====", "-----") is costed with punctRunLen instead of byte counts:
// tokenizers hold long runs of common rule characters in one token, and of
// rare ones in short tokens, which no per-byte weight can describe.
const longPunct = 4

// longLetterRun is the length from which a run of one ASCII letter at the
// start of a word is costed with the run tables: "aaaa" is one token, as a
// word would be, "aaaaaaaaaaaa" is not.
const longLetterRun = 4

// tabCap is the most tabs of a run that the tab feature counts: both
// vocabularies hold runs of 16 tabs and more in one token, so deep
// indentation costs what shallow does.
const tabCap = 4

// The ranges of the symbol tables: symbols (arrows, math operators,
// technical symbols, dingbats) from SymTableFirst and emoji from
// EmojiTableFirst, symTableRunes runes each. A symbol costs one to four
// tokens alone, by the rune, in ways no per-rune weight can follow: the
// tables of features_tables.go give each family's cost of each one.
const (
	SymTableFirst   = 0x2000
	EmojiTableFirst = 0x1F000
	symTableRunes   = 0xC00
)

// SymbolTableRune reports whether the symbol tables cost r: a rune of their
// ranges that is counted as a symbol (not a box-drawing rune nor general
// punctuation). It is exported for the fit program, which writes the tables.
func SymbolTableRune(r rune) bool {
	return inSymTables(r) && scriptOf(r) == sSymbol
}

func inSymTables(r rune) bool {
	return r >= SymTableFirst && r < SymTableFirst+symTableRunes || r >= EmojiTableFirst && r < EmojiTableFirst+symTableRunes
}

// The full-width forms of ASCII (U+FF01–U+FF5E): "！", "５", "Ａ", "ｋ".
// Both vocabularies hold the punctuation and digits whole, but o200k_base
// splits most full-width letters into two byte tokens: wideSplit
// (features_tables.go) gives the tokens it adds to one for each of them
// alone.
const (
	WideFirst = 0xFF01
	WideLast  = 0xFF5E
)

// The Latin letters of the run table latinCost: U+00C0–U+017F, whose
// UTF-8 lead bytes are C3–C5. A run of one of them ("éééé", "ŃŃŃŃ") does
// not merge as a word does: each letter after the first costs what it
// costs alone, one token or two (o200k_base splits many capitals with
// diacritics into their bytes).
const (
	LatinRepeatFirst = 0xC0
	LatinRepeatLast  = 0x17F
	latinRepeatLast  = 0xC5 // the lead byte of LatinRepeatLast
)

// latinRepeat adds the costs of the two-byte Latin letter c, d, which
// repeats the letter before it and whose lead byte c is at most
// latinRepeatLast.
func latinRepeat(f *Features, c, d byte) {
	k := latinRepeatCost(c, d)
	f[fLatinRepeat] += int32(k & 0xF)
	f[fLatinRepeatG] += int32(k >> 4)
}

// latinRepeatCost returns the run-table entry of the two-byte Latin letter
// c, d: its o200k cost in the low nibble, its Gemma-3 cost in the high.
func latinRepeatCost(c, d byte) uint8 {
	return latinCost[rune(c&0x1F)<<6|rune(d&0x3F)-LatinRepeatFirst]
}

// symSpaceBit returns 1 if Gemma 3 keeps a space before r apart, as a
// token of its own (it joins it to a few dozen symbols only: " →", " ✓"),
// from the bit table symSpaceGemma. r must be in the tables' ranges.
func symSpaceBit(r rune) int32 {
	k, s := int(r-SymTableFirst), symSpaceGemma[0]
	if r >= EmojiTableFirst {
		k, s = int(r-EmojiTableFirst), symSpaceGemma[1]
	}
	return int32(s[k>>3] >> (k & 7) & 1)
}

// The range of the Gemma-3 ideograph table.
const (
	GemmaHanFirst = 0x4E00
	GemmaHanLast  = 0x6FFF
)

// gemmaHanExtra returns the tokens Gemma 3 adds to one for the ideograph r
// alone (2 for one outside its vocabulary: three byte tokens), from the
// table of U+4E00–U+6FFF, and for other ideographs twice the o200k split
// bit (an ideograph o200k splits is mostly rare in Gemma's too).
func gemmaHanExtra(r rune) int32 {
	if r >= GemmaHanFirst && r <= GemmaHanLast {
		k := int(r - GemmaHanFirst)
		return int32(gemmaHanCost[k>>2] >> (2 * (k & 3)) & 3)
	}
	if r >= HanSplitFirst && r <= HanSplitLast {
		return 2 * hanSplitBit(r)
	}
	return 0
}

// gemmaKanaExtra returns the tokens Gemma 3 adds to one for the kana r
// (in KanaFirst–KanaLast) alone: 2 for the few outside its vocabulary
// ("ゖ", "ヷ"), three byte tokens.
func gemmaKanaExtra(r rune) int32 {
	return int32(gemmaKanaCost[r-KanaFirst])
}

// symCost returns the cost of r in table t (two bits a rune: the cost minus
// one). r must be in the tables' ranges.
func symCost(t *[2]string, r rune) int32 {
	k, s := int(r-SymTableFirst), t[0]
	if r >= EmojiTableFirst {
		k, s = int(r-EmojiTableFirst), t[1]
	}
	return int32(s[k>>2]>>(2*(k&3))&3) + 1
}

// longAlt is the length from which a stretch of punctuation bytes that each
// repeat the two bytes before them counts in fPunctAlt: "-=-=-=-=",
// "._._._._" and "<><><><>" are rules and art, tokenized as repeated pairs,
// which the pair count alone does not see; short ones ("->", "();") are code,
// and random punctuation has no long stretch.
const longAlt = 4

// PunctRunLen returns the entry of the run table for the ASCII punctuation
// byte or box-drawing rune r, and whether r has one. It is exported for the
// fit program, which checks the tables against the vocabulary.
func PunctRunLen(r rune) (int, bool) {
	switch {
	case r < 0x80 && byteKind[r] == kPunct:
		return int(runLenO200k[r]), true
	case r >= boxFirst && r <= boxLast:
		return int(boxRunLen[r-boxFirst]), true
	}
	return 0, false
}

// runTokensBytes is runTokens for a vocabulary with byte fallback (Gemma
// 3's): a rune that is no token alone costs one token per UTF-8 byte, size.
func runTokensBytes(n, l, size int32) int32 {
	if l == 0 {
		return n * size
	}
	return runTokens(n, l)
}

// runTokens is the cost of a run of n copies of a character whose run table
// entry is l: whole tokens of l copies, and the rest in power-of-two pieces.
func runTokens(n, l int32) int32 {
	if l == 0 {
		return 2 * n
	}
	return n/l + int32(bits.OnesCount32(uint32(n%l)))
}
