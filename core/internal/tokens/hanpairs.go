package tokens

import (
	_ "embed"
	"encoding/binary"
)

// Han and kana pairs: which adjacent ideographs and kana occur inside one
// o200k token, and which runes it splits (the tables of hanpairs.bin).

// HanPairBits is the size in bits of the Han pair table.
const HanPairBits = 1 << 17

// The ranges of the split and kana pair tables.
const (
	// HanSplitFirst and HanSplitLast bound the ideographs of the split
	// table: CJK Extension A and the Unified Ideographs.
	HanSplitFirst = 0x3400
	HanSplitLast  = 0x9FFF
	// KanaFirst and KanaLast bound the Hiragana and Katakana of the kana
	// tables.
	KanaFirst = 0x3040
	KanaLast  = 0x30FF
	kanaN     = KanaLast - KanaFirst + 1
)

// Sizes in bytes of the parts of hanpairs.bin, in file order.
const (
	hanPairBytes   = HanPairBits / 8
	hanSplitBytes  = (HanSplitLast - HanSplitFirst + 1) / 8
	kanaSplitBytes = kanaN / 8
	kanaPairBytes  = kanaN * kanaN / 8
	// HanTablesSize is the length of hanpairs.bin.
	HanTablesSize = hanPairBytes + hanSplitBytes + kanaSplitBytes + kanaPairBytes
)

// hanPairsBin holds the CJK tables, derived from the o200k_base vocabulary
// by go run ./internal/tokenfit -hanpairs, as little-endian bit sets in this
// order:
//
//   - the Han pair table: hashed pairs of adjacent ideographs that occur
//     inside multi-ideograph tokens (about 3,100 pairs). Text whose
//     ideographs form common words has many such pairs and fewer tokens per
//     ideograph than a string of unrelated characters;
//   - the Han split table: the ideographs of U+3400–U+9FFF that are not a
//     token of their own, and so cost two or three byte tokens;
//   - the kana split table: the same for U+3040–U+30FF;
//   - the kana pair table: the pairs of kana, indexed directly, that occur
//     inside multi-kana tokens ("なが", "って", "ション").
//
//go:embed hanpairs.bin
var hanPairsBin []byte

var (
	hanPairs  [HanPairBits / 64]uint64
	hanSplit  [hanSplitBytes / 8]uint64
	kanaSplit [kanaSplitBytes / 8]uint64
	kanaPairs [kanaPairBytes / 8]uint64
)

func init() {
	if len(hanPairsBin) != HanTablesSize {
		panic("tokens: bad embedded hanpairs.bin")
	}
	b := hanPairsBin
	for _, t := range [][]uint64{hanPairs[:], hanSplit[:], kanaSplit[:], kanaPairs[:]} {
		for i := range t {
			t[i] = binary.LittleEndian.Uint64(b[8*i:])
		}
		b = b[8*len(t):]
	}
}

// HanPairHash returns the bit index of the ideograph pair (a, b) in the Han
// pair table. It is exported for the fit program, which builds the table.
func HanPairHash(a, b rune) uint32 {
	return ((uint32(a)*0x9E3779B1 + uint32(b)) * 0x85EBCA77) >> (32 - 17)
}

func isHanPair(a, b rune) bool {
	h := HanPairHash(a, b)
	return hanPairs[h>>6]&(1<<(h&63)) != 0
}

// hanSplitBit is 1 if the ideograph r (in U+3400–U+9FFF) is not a token of
// its own, else 0.
func hanSplitBit(r rune) int32 {
	i := uint32(r - HanSplitFirst)
	return int32(hanSplit[i>>6] >> (i & 63) & 1)
}

// kanaSplitBit is 1 if the kana r (in U+3040–U+30FF) is not a token of its
// own, else 0.
func kanaSplitBit(r rune) int32 {
	i := uint32(r - KanaFirst)
	return int32(kanaSplit[i>>6] >> (i & 63) & 1)
}

// KanaPairIndex returns the bit index of the kana pair (a, b), both in
// U+3040–U+30FF, in the kana pair table. It is exported for the fit program.
func KanaPairIndex(a, b rune) uint32 {
	return uint32(a-KanaFirst)*kanaN + uint32(b-KanaFirst)
}

// isKanaPairGemma reports whether the kana a, b together are one Gemma-3
// token (the table of features_tables.go).
func isKanaPairGemma(a, b rune) bool {
	i := KanaPairIndex(a, b)
	return kanaPairsGemma[i>>3]&(1<<(i&7)) != 0
}
