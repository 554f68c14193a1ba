package tokens

import (
	_ "embed"
	"encoding/binary"
)

// HanPairBits is the size in bits of the Han pair table.
const HanPairBits = 1 << 17

// hanPairsBin is a bit set of hashed pairs of adjacent ideographs that occur
// inside multi-ideograph tokens of the o200k_base vocabulary (about 3,100
// pairs). Written by go run ./internal/tokenfit -hanpairs. Text whose
// ideographs form common words has many such pairs and fewer tokens per
// ideograph than a string of unrelated characters.
//
//go:embed hanpairs.bin
var hanPairsBin []byte

var hanPairs = func() (t [HanPairBits / 64]uint64) {
	if len(hanPairsBin) != HanPairBits/8 {
		panic("tokens: bad embedded hanpairs.bin")
	}
	for i := range t {
		t[i] = binary.LittleEndian.Uint64(hanPairsBin[8*i:])
	}
	return t
}()

// HanPairHash returns the bit index of the ideograph pair (a, b) in the Han
// pair table. It is exported for the fit program, which builds the table.
func HanPairHash(a, b rune) uint32 {
	return ((uint32(a)*0x9E3779B1 + uint32(b)) * 0x85EBCA77) >> (32 - 17)
}

func isHanPair(a, b rune) bool {
	h := HanPairHash(a, b)
	return hanPairs[h>>6]&(1<<(h&63)) != 0
}
