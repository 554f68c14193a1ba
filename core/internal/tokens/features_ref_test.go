package tokens

import (
	"strings"
	"unicode/utf8"
)

// This file is the reference of the feature counter: a plain version of
// features.go, which must give identical counts on every input. It was frozen
// at commit 007d782 and extended three times: with the classes of unusual
// text (rare CJK, astral, private-use, combining, box-drawing and long
// punctuation runs); with private-use runes costed by their bytes and
// combining marks costed apart from the letters; with the CJK split and kana
// pair tables, elisions and tabs before punctuation; with words after
// newlines, snake_case joints, English contractions and French verb
// endings; with pairs of punctuation, runs of one letter, repeated CJK runes,
// the symbol tables and the cap on tabs. Do not edit it to follow features.go.

// Byte flags of the ASCII class table.
const (
	bLowerRef  = 1 << iota // a-z
	bUpperRef              // A-Z
	bDigitRef              // 0-9
	bHexLRef               // 0-9 a-f
	bHexURef               // 0-9 A-F
	bSlashPRef             // '/' or '+', allowed inside an alphanumeric run
	bRunRef                // may continue an alphanumeric run
)

// Byte kinds for the outer loop.
const (
	kWordRef = iota
	kSpaceRef
	kNewlineRef
	kTabRef
	kPunctRef
	kCtrlRef
	kHighRef
)

var (
	byteFlagsRef [256]uint8
	byteKindRef  [256]uint8
)

func init() {
	initRefTables()
}

func initRefTables() {
	for i := 0; i < 256; i++ {
		c := byte(i)
		var f uint8
		k := uint8(kPunctRef)
		switch {
		case c >= 'a' && c <= 'z':
			f = bLowerRef | bRunRef
			if c <= 'f' {
				f |= bHexLRef
			}
			k = kWordRef
		case c >= 'A' && c <= 'Z':
			f = bUpperRef | bRunRef
			if c <= 'F' {
				f |= bHexURef
			}
			k = kWordRef
		case c >= '0' && c <= '9':
			f = bDigitRef | bHexLRef | bHexURef | bRunRef
			k = kWordRef
		case c == '/' || c == '+':
			f = bSlashPRef | bRunRef
		case c == ' ':
			k = kSpaceRef
		case c == '\n' || c == '\r':
			k = kNewlineRef
		case c == '\t':
			k = kTabRef
		case c < 0x20 || c == 0x7f:
			k = kCtrlRef
		case c >= 0x80:
			k = kHighRef
		}
		byteFlagsRef[i] = f
		byteKindRef[i] = k
	}
}

// text is the set of types the counter runs on.
type textRef interface{ ~string | ~[]byte }

// decodeRuneRef decodes the UTF-8 sequence at s[i]. Invalid or truncated
// sequences yield (-1, 1), and so do overlong forms and code points past
// U+10FFFF, which no encoder writes: a word must not take E0 83 A0 for 'à'.
// It does not reject surrogates: the result only steers an estimate.
func decodeRuneRef[T textRef](s T, i int) (rune, int) {
	n := len(s)
	c := s[i]
	switch {
	case c < 0x80:
		return rune(c), 1
	case c < 0xC2:
		return -1, 1
	case c < 0xE0:
		if i+1 < n && s[i+1]&0xC0 == 0x80 {
			return rune(c&0x1F)<<6 | rune(s[i+1]&0x3F), 2
		}
	case c < 0xF0:
		if i+2 < n && s[i+1]&0xC0 == 0x80 && s[i+2]&0xC0 == 0x80 && (c != 0xE0 || s[i+1] >= 0xA0) {
			return rune(c&0x0F)<<12 | rune(s[i+1]&0x3F)<<6 | rune(s[i+2]&0x3F), 3
		}
	case c < 0xF5:
		if i+3 < n && s[i+1]&0xC0 == 0x80 && s[i+2]&0xC0 == 0x80 && s[i+3]&0xC0 == 0x80 &&
			(c != 0xF0 || s[i+1] >= 0x90) && (c != 0xF4 || s[i+1] < 0x90) {
			return rune(c&0x07)<<18 | rune(s[i+1]&0x3F)<<12 | rune(s[i+2]&0x3F)<<6 | rune(s[i+3]&0x3F), 4
		}
	}
	return -1, 1
}

// isLatinLetterRef reports whether r is a non-ASCII Latin letter.
func isLatinLetterRef(r rune) bool {
	return (r >= 0xC0 && r <= 0x24F && r != 0xD7 && r != 0xF7) || (r >= 0x1E00 && r <= 0x1EFF)
}

// Script classes of non-ASCII runes that are not Latin letters.
const (
	sHanRef = iota
	sKanaRef
	sHangulRef
	sCJKPunctRef
	sOtherRef
	sUniPunctRef
	sSymbolRef
	sHanRareRef
	sAstralRef
	sPrivateRef
	sCombiningRef
	sBoxRef
)

func scriptOfRef(r rune) int {
	switch {
	case r >= 0x4E00 && r <= 0x9FFF, r >= 0x3400 && r <= 0x4DBF, r >= 0xF900 && r <= 0xFAFF:
		return sHanRef
	case r >= 0x20000 && r <= 0x3FFFF:
		return sHanRareRef
	case r >= 0x3040 && r <= 0x30FF, r >= 0x31F0 && r <= 0x31FF, r >= 0xFF66 && r <= 0xFF9F:
		return sKanaRef
	case r >= 0xAC00 && r <= 0xD7AF, r >= 0x1100 && r <= 0x11FF, r >= 0x3130 && r <= 0x318F:
		return sHangulRef
	case r >= 0x3000 && r <= 0x303F, r >= 0xFF00 && r <= 0xFF65:
		return sCJKPunctRef
	case r >= 0x370 && r <= 0x52F, r >= 0x530 && r <= 0x8FF, r >= 0x900 && r <= 0xDFF,
		r >= 0xE00 && r <= 0xFFF, r >= 0x10A0 && r <= 0x10FF:
		return sOtherRef
	case r >= 0x2000 && r <= 0x206F:
		return sUniPunctRef
	case r >= 0x2500 && r <= 0x259F:
		return sBoxRef
	case r >= 0x300 && r <= 0x36F, r >= 0x1AB0 && r <= 0x1AFF, r >= 0x1DC0 && r <= 0x1DFF, r >= 0x20D0 && r <= 0x20FF, r >= 0xFE20 && r <= 0xFE2F:
		return sCombiningRef
	case r >= 0xE000 && r <= 0xF8FF, r >= 0xE0000 && r <= 0x10FFFF:
		return sPrivateRef
	case r >= 0x10000 && r < 0x1F000, r > 0x1FAFF:
		return sAstralRef
	}
	return sSymbolRef
}

// countFeaturesRef adds the features of s to f in one pass.
func countFeaturesRef[T textRef](s T, f *Features) {
	accents := f[fAccent]
	others, cjk := f[fOtherLetter]+f[fOtherRepeat], f[fHan]+f[fKana]
	n := len(s)
	i := 0
	prevOther, prevHan, prevKana := false, false, false
	hanLen := 0 // length so far of the current run of ideographs
	// The previous ideograph, and whether it may still pair with the next
	// one (it is not the second of a pair already counted).
	var hanPrev rune
	hanOpen := false
	var kanaPrev rune
	kanaOpen := false
	kanaOpenG := false
	var otherPrev rune
	for i < n {
		c := s[i]
		k := byteKindRef[c]
		if k == kSpaceRef {
			j := i + 1
			if j < n && s[j] == ' ' {
				for j < n && s[j] == ' ' {
					j++
				}
				f[fSpaceRun]++
				f[fSpaceExtra] += int32(j - i - 1)
			} else if j < n && byteFlagsRef[s[j]]&bDigitRef != 0 {
				f[fSpaceDigit]++
			}
			prevOther, prevHan, prevKana = false, false, false
			i = j
			if i >= n {
				break
			}
			// Most spaces precede a word: handle it without another
			// round of the dispatch below.
			c = s[i]
			k = byteKindRef[c]
		}
		if k == kWordRef {
			prevOther, prevHan, prevKana = false, false, false
			if byteFlagsRef[c]&(bLowerRef|bUpperRef) != 0 && i+3 < n && s[i+1] == c && s[i+2] == c && s[i+3] == c {
				j := i
				for j < n && s[j] == c {
					j++
				}
				f[fLetterRun] += runTokens(int32(j-i), int32(runLenO200k[c]))
				f[fLetterRunG] += runTokens(int32(j-i), int32(runLenGemma[c]))
				i = j
				continue
			}
			// Fast path, inline: a plain ASCII word (lower case, or one
			// capital then lower case) that the next byte cannot continue.
			if fl := byteFlagsRef[c]; fl&(bLowerRef|bUpperRef) != 0 {
				j := i + 1
				for j < n && byteFlagsRef[s[j]]&bLowerRef != 0 {
					j++
				}
				if j == n || byteFlagsRef[s[j]]&bRunRef == 0 && s[j] < 0x80 {
					j = innerRunRef(s, i, j)
					letters := j - i
					if fl&bUpperRef != 0 && letters > 1 {
						f[fTitle]++
					}
					switch {
					case letters <= 2:
						f[fWord1]++
					case letters <= 5:
						f[fWord2]++
					case letters <= 8:
						f[fWord3]++
					default:
						addPieceRef(f, letters, 0, false)
					}
					i = j
					continue
				}
			}
			i = wordRunRef(s, i, f)
			continue
		}
		switch k {
		case kSpaceRef:
			// Unreachable: spaces are handled above and never follow
			// themselves.
			i++
		case kNewlineRef:
			j := i + 1
			for j < n && (s[j] == '\n' || s[j] == '\r') {
				j++
			}
			if i > 0 && byteKindRef[s[i-1]] == kPunctRef {
				f[fNewlinePunct]++
			} else {
				f[fNewlineRun]++
			}
			f[fNewlineExtra] += int32(j - i - 1)
			if j < n {
				if r, _ := utf8.DecodeRuneInString(string(s[j:])); r >= 'a' && r <= 'z' || r >= 0xC0 && r <= 0xFF {
					f[fNewlineWord]++
				}
			}
			i = j
		case kTabRef:
			j := i + 1
			for j < n && s[j] == '\t' {
				j++
			}
			f[fTabRun]++
			f[fTab] += int32(min(j-i, 4))
			if j < n && byteKindRef[s[j]] == kPunctRef {
				f[fTabPunct]++
			}
			i = j
		case kPunctRef:
			if c == '\'' && i > 0 && byteFlagsRef[s[i-1]]&(bLowerRef|bUpperRef) != 0 {
				e := i + 1
				for e < n && byteFlagsRef[s[e]]&(bLowerRef|bUpperRef) != 0 {
					e++
				}
				if e == n || s[e] < 0x80 {
					switch strings.ToLower(string(s[i+1 : e])) {
					case "s", "t", "m", "d", "re", "ve", "ll":
						f[fContraction]++
						i = e
						continue
					}
				}
			}
			if c == '_' && i > 0 && i+1 < n && byteFlagsRef[s[i-1]]&(bLowerRef|bUpperRef|bDigitRef) != 0 &&
				byteFlagsRef[s[i+1]]&(bLowerRef|bUpperRef) != 0 {
				f[fSnake]++
				if s[i+1] >= 'A' && s[i+1] <= 'Z' {
					f[fSnakeUpper]++
				}
				i++
				continue
			}
			j := i + 1
			rep := int32(0)
			pipes := int32(0)
			if c == '|' {
				pipes++
			}
			for j < n && byteKindRef[s[j]] == kPunctRef {
				if s[j] == '|' {
					pipes++
				}
				j++
			}
			// Bytes that repeat the two before them, not the one before:
			// alternating patterns, counted in stretches of longAlt or
			// more.
			alt := int32(0)
			stretch := int32(0)
			for k := i; k <= j; k++ {
				if k < j && k >= i+3 && s[k] == s[k-2] && s[k-1] == s[k-3] && s[k] != s[k-1] {
					stretch++
					continue
				}
				if stretch >= longAlt {
					alt += stretch
				}
				stretch = 0
			}
			f[fPunctAlt] += alt
			heads := int32(0)
			// Split the run into runs of one byte: short ones count a
			// punct and repeats, long ones their table cost. Two short
			// ones in a row, the first of one byte, pair up when the pair
			// table says so, from the left.
			// Then, from the left, a short one of one byte and the short
			// one after it make a pair when the pair table says so, and
			// with a third short one a triple when the second is of one
			// byte and the triple table says so.
			type unit struct {
				c   byte
				m   int32
				alt bool // its byte repeats the two before it
			}
			var units []unit
			for a := i; a < j; {
				b := a + 1
				for b < j && s[b] == s[a] {
					b++
				}
				units = append(units, unit{s[a], int32(b - a), a >= i+3 && s[a] == s[a-2] && s[a-1] == s[a-3] && s[a] != s[a-1]})
				a = b
			}
			short := func(k int) bool { return k < len(units) && units[k].m < longPunct && !units[k].alt }
			pairs, triples := int32(0), int32(0)
			for k := 0; k < len(units); k++ {
				u := units[k]
				if u.m >= longPunct {
					f[fPunctLong]++
					f[fPunctLongMore] += runTokens(u.m, int32(runLenO200k[u.c])) - 1
					f[fPunctLongMoreG] += runTokens(u.m, int32(runLenGemma[u.c])) - 1
					continue
				}
				heads++
				rep += u.m - 1
				if u.alt || u.m != 1 || !short(k+1) || punctPair[u.c][units[k+1].c/64]&(1<<(units[k+1].c%64)) == 0 {
					continue
				}
				v := units[k+1]
				heads++
				rep += v.m - 1
				if v.m == 1 && short(k+2) {
					w := units[k+2]
					if punctTriple[int(punctIndex[u.c])*32+int(punctIndex[v.c])]&(1<<punctIndex[w.c]) != 0 {
						heads++
						rep += w.m - 1
						triples++
						k += 2
						continue
					}
				}
				pairs++
				k++
			}
			// Runs of four bytes or more count apart.
			if j-i >= 4 {
				f[fPunctMixed] += heads - alt - 2*pairs - 3*triples
				f[fPunctMixedPair] += pairs
				f[fPunctMixedTriple] += triples
			} else {
				f[fPunct] += heads - 2*pairs - 3*triples
				f[fPunctPair] += pairs
				f[fPunctTriple] += triples
			}
			f[fPipe] += pipes
			f[fPunctRepeat] += rep
			if j-i == 1 && j < n && byteFlagsRef[s[j]]&(bLowerRef|bUpperRef) != 0 {
				f[fPunctWord]++
				if c == '\'' && isElisionRef(string(s), i) {
					f[fElision]++
				}
			} else {
				f[fPunctRun]++
			}
			i = j
		case kCtrlRef:
			f[fCtrl]++
			i++
		default: // kHighRef
			// Fast path for Han ideographs (U+4E00–U+9FFF, lead bytes
			// E4–E9), the bulk of Chinese and much of Japanese text.
			if c >= 0xE4 && c <= 0xE9 && i+2 < n && s[i+1]&0xC0 == 0x80 && s[i+2]&0xC0 == 0x80 &&
				(c > 0xE4 || s[i+1] >= 0xB8) {
				r := rune(c&0x0F)<<12 | rune(s[i+1]&0x3F)<<6 | rune(s[i+2]&0x3F)
				if prevHan && r == hanPrev && !(hanOpen && isHanPairRef(hanPrev, r)) {
					f[fCJKRepeat]++
					f[fCJKRepeatSplit] += splitBitRef(r)
					f[fCJKRepeatSplitG] += gemmaHanExtra(r)
					hanOpen = false
					hanLen++
					prevOther, prevHan, prevKana = false, true, false
					i += 3
					continue
				}
				f[fHan]++
				f[fCJKSplit] += splitBitRef(r)
				if !prevHan {
					hanLen = 0
					if prevKana {
						f[fHanRunKana]++
					} else {
						f[fHanRun]++
					}
				} else if hanOpen && isHanPairRef(hanPrev, r) {
					hanOpen = false
					hanPrev = r
					hanLen++
					i += 3
					continue
				}
				f[fHanSolo]++
				if hanLen < 4 {
					f[fHanHead]++
				}
				hanLen++
				hanOpen, hanPrev = true, r
				prevOther, prevHan, prevKana = false, true, false
				i += 3
				continue
			}
			r, size := decodeRuneRef(s, i)
			if r < 0 {
				f[fCtrl]++
				i++
				prevOther, prevHan, prevKana = false, false, false
				continue
			}
			if isLatinLetterRef(r) {
				i = wordRunRef(s, i, f)
				prevOther, prevHan, prevKana = false, false, false
				continue
			}
			other, han, kana := false, false, false
			switch scriptOfRef(r) {
			case sHanRef:
				if prevHan && r == hanPrev && !(hanOpen && isHanPairRef(hanPrev, r)) {
					f[fCJKRepeat]++
					f[fCJKRepeatSplit] += splitBitRef(r)
					f[fCJKRepeatSplitG] += gemmaHanExtra(r)
					hanOpen = false
					hanLen++
					han = true
					break
				}
				f[fHan]++
				f[fCJKSplit] += splitBitRef(r)
				if !prevHan {
					hanLen = 0
					hanOpen = false
					if prevKana {
						f[fHanRunKana]++
					} else {
						f[fHanRun]++
					}
				}
				if hanOpen && isHanPairRef(hanPrev, r) {
					hanOpen = false
				} else {
					f[fHanSolo]++
					if hanLen < 4 {
						f[fHanHead]++
					}
					hanOpen = true
				}
				hanPrev = r
				hanLen++
				han = true
			case sKanaRef:
				if prevKana && r == kanaPrev && !(r >= 0x3040 && r <= 0x30FF && kanaOpen && isKanaPairRef(kanaPrev, r)) {
					f[fCJKRepeat]++
					f[fCJKRepeatSplit] += splitBitRef(r)
					if r >= 0x3040 && r <= 0x30FF {
						f[fCJKRepeatSplitG] += int32(gemmaKanaCost[r-0x3040])
					}
					kanaOpen = false
					kanaOpenG = false
					kana = true
					break
				}
				f[fKana]++
				f[fCJKSplit] += splitBitRef(r)
				if r >= 0x3040 && r <= 0x30FF && prevKana && kanaOpen && isKanaPairRef(kanaPrev, r) {
					kanaOpen = false
				} else {
					f[fKanaSolo]++
					kanaOpen = r >= 0x3040 && r <= 0x30FF
				}
				if r >= 0x3040 && r <= 0x30FF && prevKana && kanaOpenG && isKanaPairGemma(kanaPrev, r) {
					kanaOpenG = false
				} else {
					f[fKanaSoloG]++
					if prevKana && kanaOpenG {
						f[fKanaSolo2G]++
					}
					kanaOpenG = r >= 0x3040 && r <= 0x30FF
				}
				kanaPrev = r
				kana = true
			case sHangulRef:
				f[fHangul]++
			case sCJKPunctRef:
				f[fCJKPunct]++
				if r >= 0xFF01 && r <= 0xFF5E {
					f[fWideSplit] += int32(wideSplit[r-0xFF01])
				}
			case sOtherRef:
				other = true
				if prevOther && r == otherPrev {
					f[fOtherRepeat]++
					break
				}
				f[fOtherLetter]++
				if !prevOther {
					f[fOtherRun]++
				}
				otherPrev = r
			case sUniPunctRef:
				f[fUniPunct]++
			case sHanRareRef:
				f[fHanRare]++
			case sAstralRef:
				f[fAstral]++
			case sPrivateRef:
				f[fPrivate] += int32(size)
			case sCombiningRef:
				if r >= 0x1AB0 && r <= 0x1AFF || r >= 0x1DC0 && r <= 0x1DFF {
					f[fCombining] += 3
				} else {
					f[fCombining] += 2
				}
			case sBoxRef:
				m := 1
				for {
					if i+m*size >= n {
						break
					}
					if r2, size2 := decodeRuneRef(s, i+m*size); r2 != r || size2 != size {
						break
					}
					m++
				}
				f[fBoxTokens] += runTokens(int32(m), int32(boxRunLen[r-0x2500]))
				if i > 0 && s[i-1] == ' ' {
					f[fSpaceSymbol]++
					if i < 2 || s[i-2] != ' ' {
						f[fBoxTokensG]++
					}
				}
				if l := boxRunLenGemma[r-0x2500]; l == 0 {
					f[fBoxTokensG] += 3 * int32(m)
				} else {
					f[fBoxTokensG] += runTokens(int32(m), int32(l))
				}
				size *= m
			default:
				if r >= 0x2000 && r < 0x2C00 || r >= 0x1F000 && r < 0x1FC00 {
					f[fSymO200k] += symCost(&symCostO200k, r)
					f[fSymGemma] += symCost(&symCostGemma, r)
					if i > 0 && s[i-1] == ' ' {
						f[fSpaceSymbol]++
						if (i < 2 || s[i-2] != ' ') && symSpaceRef(r) {
							f[fSpaceSymbolG]++
						}
					}
				} else {
					f[fSymbol]++
				}
			}
			prevOther, prevHan, prevKana = other, han, kana
			i += size
			continue
		}
		prevOther, prevHan, prevKana = false, false, false
	}
	f[fVerbEnd] += verbEndsRef(string(s), len(s) > 0 && int(f[fAccent]-accents)*64 >= len(s))
	if len(s) > 0 && (rareSampleRef(string(s)) || int(f[fOtherLetter]+f[fOtherRepeat]-others)*64 >= len(s) && int(f[fHan]+f[fKana]-cjk)*64 >= len(s)) {
		_, r := rareWordPairsRef(string(s), 0, len(s), 1<<31-1)
		f[fRareBigram] += r
	}
}

// rareWordPairsRef counts the letter pairs and the rare ones of the words
// that start in s[from:to], in order until they hold limit pairs: runs of
// ASCII letters between non-alphanumeric bytes, a letter then lower-case
// letters.
func rareWordPairsRef(s string, from, to int, limit int32) (pairs, rare int32) {
	alnum := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' }
	for i := 0; i < len(s); {
		if !alnum(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && alnum(s[j]) {
			j++
		}
		w := s[i:j]
		word := len(w) > 0 && (w[0] < '0' || w[0] > '9')
		for k := 1; k < len(w); k++ {
			word = word && w[k] >= 'a' && w[k] <= 'z'
		}
		if word && i >= from && i < to && pairs < limit {
			for k := 1; k < len(w); k++ {
				pairs++
				if strings.IndexByte(rareRef[w[k-1]|0x20-'a'], w[k]) >= 0 && w[k-1]|0x20 != w[k] {
					rare++
				}
			}
		}
		i = j
	}
	return pairs, rare
}

// rareRef lists, for each letter, the letters that rarely follow it.
var rareRef = [26]string{"hoq", "ghkmnpqtvwxz", "gjnqsvwxz", "hjmnpqvwxz", "j", "ghjknpqvwxyz", "bcdfjkmpqvwxz",
	"cdfghjklnqsvwxyz", "huwy", "bcdfghiklmnpqrtvwxyz", "bcdfhjlmopqrtvwxyz", "bcghjkmnpqrwxz", "cfghjkqrvwxyz",
	"bhjqrwxz", "hq", "bfgjnqvwxz", "abcdefghijklmnoprstvwxyz", "hjxz", "bfjkqvxz", "bjkmnqvz", "hjkqwy",
	"bcdfghjklmnpqrstuwxyz", "bcdfgjklmpqtuvxyz", "bdfghjklmnoqrsuvwyz", "bcdfghjklqruvwxz", "bcdfghjklmnpqrstuvwx"}

// rareSampleRef samples s as rareSample does: 4 windows, one more per
// 2 KB, each from the middle of its share of s, of the words that start in
// its first 128 bytes until they hold 24 pairs.
func rareSampleRef(s string) bool {
	if len(s) < 256 {
		return false
	}
	w := 4 + len(s)/2048
	var pairs, rare int32
	for k := 0; k < w; k++ {
		a := (2*k + 1) * len(s) / (2 * w)
		p, r := rareWordPairsRef(s, a, min(len(s), a+128), 24)
		pairs += p
		rare += r
	}
	return rare >= 3 && rare*5 >= pairs
}

// wordRunRef consumes the alphanumeric run starting at s[i] (ASCII letters and
// digits, non-ASCII Latin letters, and embedded '/' and '+'), adds its
// features and returns the index after it.
func wordRunRef[T textRef](s T, i int, f *Features) int {
	n := len(s)
	start := i
	var acc uint8
	hexL, hexU := uint8(bHexLRef), uint8(bHexURef)
	slashes := 0
	latin := false
	for i < n {
		c := s[i]
		if c < 0x80 {
			fl := byteFlagsRef[c]
			if fl&bRunRef == 0 {
				break
			}
			acc |= fl
			hexL &= fl
			hexU &= fl
			if fl&bSlashPRef != 0 {
				slashes++
			}
			i++
			continue
		}
		r, size := decodeRuneRef(s, i)
		if r < 0 || !isLatinLetterRef(r) {
			break
		}
		latin = true
		i += size
	}
	// Trailing '/' and '+' are punctuation, not part of the run.
	for i > start+1 && byteFlagsRef[s[i-1]]&bSlashPRef != 0 {
		i--
		slashes--
	}
	if p := innerRunRef(s, start, i); p < i {
		return wordRunRef(s[:p], start, f)
	}
	length := i - start
	if !latin && acc&bDigitRef != 0 && acc&(bLowerRef|bUpperRef) != 0 {
		if length >= 8 && slashes == 0 && (hexL != 0 || hexU != 0) {
			f[fHex] += int32(length)
			f[fHexRun]++
			return i
		}
		if length >= 20 && acc&bLowerRef != 0 && acc&bUpperRef != 0 && slashes*10 <= length &&
			transitionsRef(s, start, i)*3 >= length {
			f[fBlob] += int32(length)
			f[fBlobRun]++
			return i
		}
	}
	piecesRef(s, start, i, f)
	return i
}

// symSpaceRef reports whether Gemma 3 keeps a space before the symbol r
// apart.
func symSpaceRef(r rune) bool {
	t, k := symSpaceGemma[0], int(r-0x2000)
	if r >= 0x1F000 {
		t, k = symSpaceGemma[1], int(r-0x1F000)
	}
	return t[k/8]&(1<<(k%8)) != 0
}

// innerRunRef returns the first p in s[a+1:b] where four copies of one ASCII
// letter start, if s[a:b] is longer than 16 bytes, or b.
func innerRunRef[T textRef](s T, a, b int) int {
	if b-a <= 16 {
		return b
	}
	for p := a + 1; p+4 <= b; p++ {
		if byteFlagsRef[s[p]]&(bLowerRef|bUpperRef) != 0 && s[p+1] == s[p] && s[p+2] == s[p] && s[p+3] == s[p] {
			return p
		}
	}
	return b
}

// transitionsRef counts changes between lower, upper and digit classes in s[a:b].
func transitionsRef[T textRef](s T, a, b int) int {
	t := 0
	prev := byteFlagsRef[s[a]] & (bLowerRef | bUpperRef | bDigitRef)
	for j := a + 1; j < b; j++ {
		cur := byteFlagsRef[s[j]] & (bLowerRef | bUpperRef | bDigitRef)
		if cur != prev {
			t++
		}
		prev = cur
	}
	return t
}

// piecesRef splits the run s[a:b] into letter piecesRef (at camelCase and
// letter/digit boundaries), digit runs and '/'/'+' punctuation.
func piecesRef[T textRef](s T, a, b int, f *Features) {
	i := a
	first := true
	for i < b {
		c := s[i]
		fl := byteFlagsRef[c]
		switch {
		case fl&bDigitRef != 0:
			j := i + 1
			for j < b && byteFlagsRef[s[j]]&bDigitRef != 0 {
				j++
			}
			d := int32(j - i)
			f[fDigitRun]++
			f[fDigit] += d
			f[fDigitGroup] += (d + 2) / 3
			i = j
		case fl&bSlashPRef != 0:
			j := i + 1
			for j < b && byteFlagsRef[s[j]]&bSlashPRef != 0 {
				j++
			}
			f[fPunct] += int32(j - i)
			if j-i == 1 && j < b && byteFlagsRef[s[j]]&(bLowerRef|bUpperRef) != 0 {
				f[fPunctWord]++
			} else {
				f[fPunctRun]++
			}
			i = j
		default:
			// Letter piece: Upper* lower* with the camelCase rule that in
			// "HTTPServer" the last capital starts the next piece.
			j := i
			ups := 0
			for j < b && byteFlagsRef[s[j]]&bUpperRef != 0 {
				j++
				ups++
			}
			letters := ups
			accents := int32(0)
			if ups > 0 && j < b && isLowerAtRef(s, j, b) {
				if ups > 1 {
					// ALLCAPS piece before the Title piece.
					addPieceRef(f, ups-1, 0, !first)
					f[fUpper]++
					f[fUpperLetters] += int32(ups - 1)
					first = false
					letters = 1
				}
				f[fTitle]++
				if !first {
					f[fGluedTitle]++
				}
			} else if ups > 1 {
				addPieceRef(f, ups, 0, !first)
				f[fUpper]++
				f[fUpperLetters] += int32(ups)
				first = false
				i = j
				continue
			}
			for j < b {
				c := s[j]
				if c < 0x80 {
					if byteFlagsRef[c]&bLowerRef == 0 {
						break
					}
					j++
				} else {
					r, size := decodeRuneRef(s, j)
					if size == 2 && r <= 0x17F && j-2 >= a {
						if prev, _ := decodeRuneRef(s, j-2); prev == r {
							// A run of one Latin letter: each after the
							// first costs what it costs alone.
							f[fLatinRepeat] += int32(latinCost[r-0xC0] & 0xF)
							f[fLatinRepeatG] += int32(latinCost[r-0xC0] >> 4)
							j += 2
							continue
						}
					}
					j += size
					accents++
					if r != 'é' && r != 'è' && r != 'à' && r != 'É' {
						f[fAccentRare]++
					}
				}
				letters++
			}
			if letters == 0 {
				// A lone byte that is none of the above; cannot happen for
				// runs built by wordRunRef, but never loop forever.
				j = i + 1
				letters = 1
			}
			if letters <= 2 && i > a && byteFlagsRef[s[i-1]]&bDigitRef != 0 {
				// "79b1", "6d13": short letter piecesRef inside hex-like ids.
				f[fDigitWord]++
				f[fGlued]++
			} else {
				addPieceRef(f, letters, accents, !first)
			}
			i = j
		}
		first = false
	}
}

// verbEndsRef counts the French verb endings of s, if s has an accented
// letter in 64 bytes or more: "ait", "aient" and "èrent" after a letter (ASCII or any non-ASCII
// byte) and before the end or an ASCII byte that is not a letter or digit.
func verbEndsRef(s string, accented bool) int32 {
	if !accented {
		return 0
	}
	isLetter := func(c byte) bool { return c >= 0x80 || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
	n := int32(0)
	for p := 0; p < len(s); p++ {
		if p+1 < len(s) && s[p+1] < 0x80 && (isLetter(s[p+1]) || s[p+1] >= '0' && s[p+1] <= '9') {
			continue
		}
		for _, end := range []string{"ait", "aient", "èrent"} {
			if b := p + 1 - len(end); b >= 1 && s[b:p+1] == end && isLetter(s[b-1]) {
				n++
			}
		}
	}
	return n
}

// isLowerAtRef reports whether s[j] starts a lower-case ASCII letter or a
// non-ASCII Latin letter (treated as lower case).
func isLowerAtRef[T textRef](s T, j, b int) bool {
	c := s[j]
	if c < 0x80 {
		return byteFlagsRef[c]&bLowerRef != 0
	}
	return j < b
}

func addPieceRef(f *Features, letters int, accents int32, glued bool) {
	switch {
	case letters <= 2:
		f[fWord1]++
	case letters <= 5:
		f[fWord2]++
	case letters <= 8:
		f[fWord3]++
	case letters <= 12:
		f[fWord4]++
	default:
		f[fWord5]++
		f[fWordExtra] += int32(letters - 12)
	}
	if glued {
		f[fGlued]++
	}
	if accents > 0 {
		f[fAccent] += accents
		f[fAccentWord]++
	}
}

// isElisionRef reports whether the apostrophe at s[i], between letters,
// follows one or two letters and is not an English contraction.
func isElisionRef(s string, i int) bool {
	isLetter := func(k int) bool { return k >= 0 && k < len(s) && byteFlagsRef[s[k]]&(bLowerRef|bUpperRef) != 0 }
	if !isLetter(i-1) || isLetter(i-2) && isLetter(i-3) {
		return false
	}
	j := i + 1
	for isLetter(j) {
		j++
	}
	switch strings.ToLower(s[i+1 : j]) {
	case "s", "t", "m", "d", "re", "ve", "ll":
		// Only the exact English spellings: "l'RE" is not one.
		return s[i+1:j] != strings.ToLower(s[i+1:j]) && s[i+1:j] != strings.ToUpper(s[i+1:j])
	}
	return true
}

// splitBitRef is 1 if the ideograph or kana r is in a split table.
func splitBitRef(r rune) int32 {
	var t []uint64
	var i uint32
	switch {
	case r >= 0x3400 && r <= 0x9FFF:
		t, i = hanSplit[:], uint32(r-0x3400)
	case r >= 0x3040 && r <= 0x30FF:
		t, i = kanaSplit[:], uint32(r-0x3040)
	default:
		return 0
	}
	return int32(t[i/64] >> (i % 64) & 1)
}

func isKanaPairRef(a, b rune) bool {
	i := uint32(a-0x3040)*192 + uint32(b-0x3040)
	return kanaPairs[i/64]&(1<<(i%64)) != 0
}

func isHanPairRef(a, b rune) bool {
	h := ((uint32(a)*0x9E3779B1 + uint32(b)) * 0x85EBCA77) >> (32 - 17)
	return hanPairs[h>>6]&(1<<(h&63)) != 0
}

// countRef is the frozen reference of Count.
func countRef(s string) Features {
	var f Features
	countFeaturesRef(s, &f)
	return f
}
