package tokens

// Non-ASCII bytes: words that start with a Latin letter, invalid bytes,
// the three-byte runes of CJK text on a fast path, and every other rune by
// its script class, with what the run features remember of the runes
// before.

// scriptRuns is what the run features of scripts remember between runes,
// besides the class of the previous rune (prevNone, prevHan, ...), which
// countFeatures keeps in a register and passes: the pairing of ideographs
// and of kana.
type scriptRuns struct {
	hanLen int // length so far of the current run of ideographs
	// The previous letter of another script (sOther), for runs of one.
	otherPrev rune
	// The previous ideograph, and whether it may still pair with the next
	// one (it is not the second of a pair already counted).
	hanPrev rune
	hanOpen bool
	// The same for kana, with the kana pair table.
	kanaPrev rune
	kanaOpen bool
	// The same with the Gemma-3 kana pair table.
	kanaOpenG bool
}

// nonASCII counts what starts at the non-ASCII byte s[i], after a rune of
// class prev: a run of CJK runes, a word of Latin letters, an invalid
// byte, or one rune of another script. It returns where that ends and the
// class of its last rune. cutEnd is countFeatures' end of the alphanumeric
// run last cut before a run of one letter (see cutWord), which wordRun
// updates.
func nonASCII[T text](s T, i int, f *Features, prev int, st *scriptRuns, cutEnd *int) (int, int) {
	if i < *cutEnd {
		// A Latin letter inside the run last cut: the alphanumeric run
		// holds no other non-ASCII rune.
		if p := cutWord(s, i, f, *cutEnd); p > 0 {
			return p, prevNone
		}
	}
	c := s[i]
	if c >= 0xE3 && c <= 0xEF {
		if j, p := cjkRun(s, i, f, prev, st); j > i {
			return j, p
		}
	}
	if c >= latin2First && c <= latin2Last {
		// A word that starts with an accented letter ("à", "été").
		if k := latinWord(s, i, i, f); k > 0 {
			return k, prevNone
		}
	}
	r, size := decodeRune(s, i)
	if r < 0 {
		f[fCtrl]++
		return i + 1, prevNone
	}
	if isLatinLetter(r) {
		return wordRun(s, i, f, cutEnd), prevNone
	}
	size, prev = scriptRune(s, i, r, size, f, prev, st)
	return i + size, prev
}

// cjkRun counts the run of three-byte CJK runes at s[i]: Han ideographs of
// U+4E00–U+9FFF (lead bytes E4–E9), kana and CJK punctuation of
// U+3000–U+30FF (E3 80–83), Hangul syllables (EA–ED) and full-width
// punctuation of U+FF00–U+FF65 (EF BC, EF BD 80–A5). CJK text is mostly
// runs of them, mixed as Japanese mixes kana and kanji; the loop walks
// them without countFeatures' dispatch, and any other rune leaves it. It
// returns the run's end (i if there is none) and the class of its last
// rune. The state is copied in and out so that the loop keeps it in
// registers.
func cjkRun[T text](s T, i int, f *Features, prev int, st *scriptRuns) (int, int) {
	n := len(s)
	hanLen, hanPrev, hanOpen, kanaPrev, kanaOpen, kanaOpenG := st.hanLen, st.hanPrev, st.hanOpen, st.kanaPrev, st.kanaOpen, st.kanaOpenG
runs:
	for i+2 < n {
		c, c1, c2 := s[i], s[i+1], s[i+2]
		if c&0xF0 != 0xE0 || c1&0xC0 != 0x80 || c2&0xC0 != 0x80 {
			break // not a three-byte sequence
		}
		r := rune(c&0x0F)<<12 | rune(c1&0x3F)<<6 | rune(c2&0x3F)
		switch {
		case r >= 0x4E00 && r <= 0x9FFF:
			// The same counting as the general path's
			// sHan case below, kept inline: as a shared
			// method (not inlined) it cost a quarter of
			// Chinese text's speed (zh 635 -> 465 MB/s).
			if r == hanPrev && prev == prevHan && !(hanOpen && isHanPair(hanPrev, r)) {
				// A run of one ideograph: each is a token of its own,
				// or two when it is split alone, past a pair the
				// vocabulary holds ("慢慢").
				f[fCJKRepeat]++
				f[fCJKRepeatSplit] += hanSplitBit(r)
				f[fCJKRepeatSplitG] += gemmaHanExtra(r)
				hanOpen = false
				hanLen++
				i += 3
				continue
			}
			f[fHan]++
			f[fCJKSplit] += hanSplitBit(r)
			if prev != prevHan {
				// The first ideograph of a run pairs with none.
				hanLen = 0
				hanOpen = false
				if prev == prevKana {
					f[fHanRunKana]++
				} else {
					f[fHanRun]++
				}
			}
			if hanOpen && isHanPair(hanPrev, r) {
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
			prev = prevHan
		case r >= 0x3000 && r <= 0x303F, r >= 0xFF00 && r <= 0xFF65:
			f[fCJKPunct]++
			if r >= WideFirst && r <= WideLast {
				f[fWideSplit] += int32(wideSplit[r-WideFirst])
			}
			prev = prevNone
		case r >= KanaFirst && r <= KanaLast:
			// The pair tables of both families, with one index.
			paired, pairedG, solo2G := false, false, int32(0)
			if prev == prevKana {
				k := KanaPairIndex(kanaPrev, r)
				paired = kanaOpen && kanaPairs[k>>6]&(1<<(k&63)) != 0
				if r == kanaPrev && !paired {
					f[fCJKRepeat]++
					f[fCJKRepeatSplit] += kanaSplitBit(r)
					f[fCJKRepeatSplitG] += gemmaKanaExtra(r)
					kanaOpen, kanaOpenG = false, false
					i += 3
					continue
				}
				pairedG = kanaOpenG && kanaPairsGemma[k>>3]&(1<<(k&7)) != 0
				solo2G = b2i(kanaOpenG && !pairedG)
			}
			f[fKana]++
			f[fCJKSplit] += kanaSplitBit(r)
			f[fKanaSolo] += 1 - b2i(paired)
			f[fKanaSoloG] += 1 - b2i(pairedG)
			f[fKanaSolo2G] += solo2G
			kanaOpen, kanaOpenG = !paired, !pairedG
			kanaPrev = r
			prev = prevKana
		case r >= 0xAC00 && r <= 0xD7AF:
			f[fHangul]++
			prev = prevNone
		default:
			break runs
		}
		i += 3
	}
	st.hanLen, st.hanPrev, st.hanOpen, st.kanaPrev, st.kanaOpen, st.kanaOpenG = hanLen, hanPrev, hanOpen, kanaPrev, kanaOpen, kanaOpenG
	return i, prev
}

// scriptRune counts the rune r of size bytes at s[i], valid and not a Latin
// letter, by its script class, after a rune of class prev. It returns the
// bytes it covers (size, or a whole run of one box-drawing rune) and the
// class of r.
func scriptRune[T text](s T, i int, r rune, size int, f *Features, prev int, st *scriptRuns) (int, int) {
	n := len(s)
	next := prevNone
	switch scriptOfRune(r) {
	case sHan:
		if prev == prevHan && r == st.hanPrev && !(st.hanOpen && isHanPair(st.hanPrev, r)) {
			f[fCJKRepeat]++
			if r >= HanSplitFirst && r <= HanSplitLast {
				f[fCJKRepeatSplit] += hanSplitBit(r)
			}
			f[fCJKRepeatSplitG] += gemmaHanExtra(r)
			st.hanOpen = false
			st.hanLen++
			next = prevHan
			break
		}
		f[fHan]++
		if r >= HanSplitFirst && r <= HanSplitLast {
			f[fCJKSplit] += hanSplitBit(r)
		}
		if prev != prevHan {
			st.hanLen = 0
			st.hanOpen = false
			if prev == prevKana {
				f[fHanRunKana]++
			} else {
				f[fHanRun]++
			}
		}
		if st.hanOpen && isHanPair(st.hanPrev, r) {
			st.hanOpen = false
		} else {
			f[fHanSolo]++
			if st.hanLen < 4 {
				f[fHanHead]++
			}
			st.hanOpen = true
		}
		st.hanPrev = r
		st.hanLen++
		next = prevHan
	case sKana:
		// Only kana outside U+3040–U+30FF, or truncated, reach
		// here: none is in the pair table.
		next = prevKana
		if prev == prevKana && r == st.kanaPrev {
			f[fCJKRepeat]++
			if r >= KanaFirst && r <= KanaLast {
				f[fCJKRepeatSplitG] += gemmaKanaExtra(r)
			}
			st.kanaOpen, st.kanaOpenG = false, false
			break
		}
		f[fKana]++
		f[fKanaSolo]++
		f[fKanaSoloG]++
		f[fKanaSolo2G] += b2i(prev == prevKana && st.kanaOpenG)
		st.kanaOpen, st.kanaOpenG = false, false
		st.kanaPrev = r
	case sHangul:
		f[fHangul]++
	case sCJKPunct:
		f[fCJKPunct]++
		if r >= WideFirst && r <= WideLast {
			f[fWideSplit] += int32(wideSplit[r-WideFirst])
		}
	case sOther:
		next = prevOther
		if prev == prevOther && r == st.otherPrev {
			// A run of one letter does not merge.
			f[fOtherRepeat]++
			break
		}
		f[fOtherLetter]++
		if prev != prevOther {
			f[fOtherRun]++
		}
		st.otherPrev = r
	case sUniPunct:
		f[fUniPunct]++
	case sHanRare:
		f[fHanRare]++
	case sAstral:
		f[fAstral]++
	case sPrivate:
		// Split into bytes: 3 tokens in the BMP area (2.9 on
		// average in o200k_base), 4 in planes 15 and 16.
		f[fPrivate] += int32(size)
	case sCombining:
		f[fCombining] += markTokens(r)
	case sBox:
		// A run of the same rune (three bytes).
		c := s[i]
		j := i + 3
		for j+2 < n && s[j] == c && s[j+1] == s[i+1] && s[j+2] == s[i+2] {
			j += 3
		}
		space := b2i(i > 0 && s[i-1] == ' ')
		f[fBoxTokens] += runTokens(int32(j-i)/3, int32(boxRunLen[r-boxFirst]))
		f[fSpaceSymbol] += space
		// Gemma 3 has no " ▂" or " ─" piece: a single space before a box
		// or block rune is a token of its own (a run of spaces is one
		// already), part of the run's Gemma cost.
		f[fBoxTokensG] += runTokensBytes(int32(j-i)/3, int32(boxRunLenGemma[r-boxFirst]), 3) + space&b2i(i < 2 || s[i-2] != ' ')
		size = j - i
	default:
		if inSymTables(r) {
			f[fSymO200k] += symCost(&symCostO200k, r)
			f[fSymGemma] += symCost(&symCostGemma, r)
			if i > 0 && s[i-1] == ' ' {
				f[fSpaceSymbol]++
				f[fSpaceSymbolG] += b2i(i < 2 || s[i-2] != ' ') & symSpaceBit(r)
			}
		} else {
			f[fSymbol]++
		}
	}
	return size, next
}
