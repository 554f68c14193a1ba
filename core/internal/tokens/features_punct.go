package tokens

// Punctuation: the longer runs of ASCII punctuation bytes, with the o200k
// run table and the alternation count.

// punctRun counts the run of ASCII punctuation at s[i], of four bytes or
// more, and returns its end. Single bytes and runs of two or three
// ("\":", "),", "();") are counted inline by countFeatures: they are most
// of the punctuation of code and JSON, and a call costs them 5%.
func punctRun[T text](s T, i int, f *Features) int {
	n := len(s)
	c := s[i]
	j := i + 1
	rep := int32(0)
	pipes := int32(0)
	if c == '|' {
		pipes++
	}
	// same counts the bytes equal to the one before in the
	// current run of one byte; long runs are costed by the table.
	same, long, alt := int32(0), int32(0), int32(0)
	// A byte that differs from the one before is the head of a run of one
	// byte; two heads in a row, the first a run of one, are one token when
	// the pair table says so, greedily from the left, as byte-pair merges
	// join common pairs ("()", "=>", "\":") first. open: the byte before
	// is a head that may pair.
	// A pair whose second byte is a run of one, followed by a head, is a
	// triple when the triple table says so ("\":\"" is two tokens, not
	// three). paired: the byte before is the second of a pair; tripled:
	// the third of a triple.
	pairs, triples := int32(0), int32(0)
	open, paired, tripled := true, false, false
	// altRun is the length of the current stretch of bytes that repeat the
	// two before them ("-=-=-="); stretches of longAlt and more count.
	altRun := int32(0)
	for j < n && byteKind[s[j]] == kPunct {
		if d := s[j]; d == s[j-1] {
			// The byte and the rest of its run ("-----"), eight
			// at a time: each repeats the byte before.
			e := j + 1
			for e+8 <= n && load64(s, e) == uint64(d)*lsb {
				e += 8
			}
			rep += int32(e - j)
			same += int32(e - j)
			if d == '|' {
				pipes += int32(e - j)
			}
			j = e
			open = false
			alt += altRun & -b2i(altRun >= longAlt)
			altRun = 0
			continue
		}
		// A byte of an alternation pairs with nothing: punct_alt costs
		// it if the stretch is long.
		isAlt := j-i >= 3 && s[j] == s[j-2] && s[j-1] == s[j-3]
		if isAlt {
			altRun++
		} else {
			alt += altRun & -b2i(altRun >= longAlt)
			altRun = 0
		}
		if same >= longPunct-1 {
			rep -= same
			long += same + 1
			addLongPunct(f, same+1, s[j-1])
			// A long run's head pairs with nothing: a triple it ends
			// is a pair.
			pairs += b2i(tripled) - b2i(paired)
			triples -= b2i(tripled)
		}
		tripled = !isAlt && paired && same == 0 && tripleBit(s[j-2], s[j-1], s[j]) != 0
		paired = !isAlt && !tripled && open && same == 0 && pairBit(s[j-1], s[j]) != 0
		pairs += b2i(paired) - b2i(tripled)
		triples += b2i(tripled)
		open = !paired && !tripled && !isAlt
		same = 0
		if s[j] == '|' {
			pipes++
		}
		j++
	}
	if same >= longPunct-1 {
		rep -= same
		long += same + 1
		addLongPunct(f, same+1, s[j-1])
		pairs += b2i(tripled) - b2i(paired)
		triples -= b2i(tripled)
	}
	alt += altRun & -b2i(altRun >= longAlt)
	f[fPunctAlt] += alt
	f[fPipe] += pipes
	f[fPunctMixed] += int32(j-i) - rep - long - alt - 2*pairs - 3*triples
	f[fPunctMixedPair] += pairs
	f[fPunctMixedTriple] += triples
	f[fPunctRepeat] += rep
	f[fPunctRun]++ // never one byte before a word: those take the fast path
	return j
}

// shortPunctRun returns the length of the run of ASCII punctuation that
// starts at s[i], followed by more punctuation, if it is two or three bytes
// long, and 0 otherwise.
func shortPunctRun[T text](s T, i int) int {
	switch n := len(s); {
	case i+2 >= n || byteKind[s[i+2]] != kPunct:
		return 2
	case i+3 >= n || byteKind[s[i+3]] != kPunct:
		return 3
	}
	return 0
}

// addLongPunct counts a run of m copies of the punctuation byte c, m at
// least longPunct, with the run tables of both families.
func addLongPunct(f *Features, m int32, c byte) {
	f[fPunctLong]++
	f[fPunctLongMore] += runTokens(m, int32(runLenO200k[c])) - 1
	f[fPunctLongMoreG] += runTokens(m, int32(runLenGemma[c])) - 1
}

// pairBit returns 1 if the ASCII punctuation bytes a, b together are one
// o200k_base token, and 0 otherwise.
func pairBit(a, b byte) int32 {
	return int32(punctPair[a&0x7F][b>>6&1] >> (b & 63) & 1)
}

// punctIndex maps each ASCII punctuation byte to its index (0–31) in the
// triple table, and every other byte to 0xFF; filled by the init of
// features_bytes.go, after byteKind.
var punctIndex [256]uint8

// PunctIndex returns the index of the ASCII punctuation byte c in the
// triple table. It is exported for the fit program, which writes the table.
func PunctIndex(c byte) (int, bool) {
	if punctIndex[c] == 0xFF {
		return 0, false
	}
	return int(punctIndex[c]), true
}

// tripleBit returns 1 if the ASCII punctuation bytes a, b, c together are
// one o200k_base token, and 0 otherwise.
func tripleBit(a, b, c byte) int32 {
	return int32(punctTriple[uint32(punctIndex[a]&31)<<5|uint32(punctIndex[b]&31)] >> (punctIndex[c] & 31) & 1)
}

// innerRun returns the start of the first run of longLetterRun copies of
// one ASCII letter in s[a+1:b], if b-a > innerRunMin, or b. Byte-pair
// merges build such a run by doubling whatever letters come before it ("nn"
// then "RR" "RR" ... in "nnRRRRRRRR"), so a word is cut before it and the
// run costed with the run tables, as one at the start of a word is. Any
// run of four covers a position a+4k, one of whose neighbours is the same
// letter: only those positions are looked at first.
func innerRun[T text](s T, a, b int) int {
	if b-a <= innerRunMin {
		return b // inline: most words are short
	}
	return innerRunFrom(s, a, b)
}

// innerRunMin is the longest word that innerRun does not look into: looking
// into every word cost code and JSON 5–10% of their speed, and a run inside
// a word of 16 letters costs the estimate a few tokens at most (runs of
// hostile text are mostly longer).
const innerRunMin = 4 * longLetterRun

// innerRunFrom is innerRun for b-a > innerRunMin.
func innerRunFrom[T text](s T, a, b int) int {
	for k := a + longLetterRun; k < b; k += longLetterRun {
		c := s[k]
		if s[k-1] != c && (k+1 == b || s[k+1] != c) || byteFlags[c]&(bLower|bUpper) == 0 {
			continue
		}
		lo, hi := k, k+1
		for lo > a+1 && s[lo-1] == c {
			lo--
		}
		for hi < b && s[hi] == c {
			hi++
		}
		if hi-lo >= longLetterRun {
			return lo
		}
	}
	return b
}

// letterRun counts the run of one ASCII letter at s[i], at least
// longLetterRun long, with the run tables of both families, and returns its
// end.
func letterRun[T text](s T, i int, f *Features) int {
	c := s[i]
	j := i + 1
	for j < len(s) && s[j] == c {
		j++
	}
	m := int32(j - i)
	f[fLetterRun] += runTokens(m, int32(runLenO200k[c]))
	f[fLetterRunG] += runTokens(m, int32(runLenGemma[c]))
	return j
}

// The runs of two or three ASCII punctuation bytes ("\":", "),", "();") are
// most of JSON's and code's punctuation. Their counts depend on the bytes
// only, so shortPunct holds them for every such run, packed in lanes of
// shortPunctBits bits (punct, punct_pair, punct_triple, punct_repeat,
// pipe), and the counter adds a run's entry to one register, flushed into
// the features every shortPunctFlush runs and at the end.
const (
	// shortPunctBits is the width of a lane: a run adds at most 3 to a
	// lane, so shortPunctFlush runs fit in it.
	shortPunctBits = 12
	shortPunctMask = 1<<shortPunctBits - 1
	// shortPunctFlush is the number of runs after which the register is
	// flushed, before a lane can overflow (3 × 1024 < 4096).
	shortPunctFlush = 1024
	// shortPunctNone is the third byte's index of a run of two bytes, past
	// the 32 punctuation bytes; shortPunctThird is the stride of the third
	// byte's index.
	shortPunctNone  = 32
	shortPunctThird = 33
)

// shortPunct holds the packed counts of every run of two or three ASCII
// punctuation bytes, indexed by (punctIndex of the first byte << 5 |
// punctIndex of the second) × shortPunctThird + punctIndex of the third or
// shortPunctNone; filled by the init of features_bytes.go.
var shortPunct [32 * 32 * shortPunctThird]uint64

// fillShortPunct fills shortPunct from the pair and triple tables: the
// first two bytes are one token, or else the last two (see punctRun).
func fillShortPunct() {
	var bytes [32]byte
	for c := range 128 {
		if k := punctIndex[c]; k != 0xFF {
			bytes[k] = byte(c)
		}
	}
	for a, c := range bytes {
		for b, d := range bytes {
			for t := range shortPunctThird {
				l := int32(2)
				rep := b2i(d == c)
				pipes := b2i(c == '|') + b2i(d == '|')
				pair := (1 - rep) & pairBit(c, d)
				tri := int32(0)
				if t != shortPunctNone {
					l = 3
					e := bytes[t]
					rep += b2i(e == d)
					pipes += b2i(e == '|')
					if pair != 0 && e != d {
						tri = tripleBit(c, d, e)
					}
					pair = pair&^tri | (1-pair)&b2i(d != c && e != d)&pairBit(d, e)
				}
				v := uint64(0)
				for i, x := range [...]int32{l - rep - 2*pair - 3*tri, pair, tri, rep, pipes} {
					v |= uint64(x) << (i * shortPunctBits)
				}
				shortPunct[(a<<5|b)*shortPunctThird+t] = v
			}
		}
	}
}

// flushShortPunct adds the packed counts of n runs to f.
func flushShortPunct(f *Features, v uint64, n int) {
	f[fPunct] += int32(v & shortPunctMask)
	f[fPunctPair] += int32(v >> shortPunctBits & shortPunctMask)
	f[fPunctTriple] += int32(v >> (2 * shortPunctBits) & shortPunctMask)
	f[fPunctRepeat] += int32(v >> (3 * shortPunctBits) & shortPunctMask)
	f[fPipe] += int32(v >> (4 * shortPunctBits) & shortPunctMask)
	f[fPunctRun] += int32(n)
}
