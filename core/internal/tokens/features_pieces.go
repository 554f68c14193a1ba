package tokens

import "math/bits"

// Pieces: where a letter run splits into the tokens of a byte-pair tokenizer
// (case transitions, contractions, accents).

// wordRun consumes the alphanumeric run starting at s[i] (ASCII letters and
// digits, non-ASCII Latin letters, and embedded '/' and '+'), adds its
// features and returns the index after it. When it cuts the run before a
// run of one letter, it sets *cutEnd to the run's end (see cutWord); cutEnd
// is nil for a run already cut.
func wordRun[T text](s T, i int, f *Features, cutEnd *int) int {
	n := len(s)
	start := i
	var acc uint8
	hexL, hexU := uint8(bHexL), uint8(bHexU)
	slashes := 0
	latin := false
	// Eight ASCII letters and digits at a time; '/', '+', non-ASCII bytes
	// and the end of the run are left to the byte loop.
	for i+8 <= n {
		x := load64(s, i)
		if x&msb != 0 {
			break
		}
		lo, up, dg := rangeMask(x, 'a', 'z'), rangeMask(x, 'A', 'Z'), rangeMask(x, '0', '9')
		if lo|up|dg != msb {
			break
		}
		if lo != 0 {
			acc |= bLower
		}
		if up != 0 {
			acc |= bUpper
		}
		if dg != 0 {
			acc |= bDigit
		}
		if dg|rangeMask(x, 'a', 'f') != msb {
			hexL = 0
		}
		if dg|rangeMask(x, 'A', 'F') != msb {
			hexU = 0
		}
		i += 8
	}
	for i < n {
		c := s[i]
		if c < 0x80 {
			fl := byteFlags[c]
			if fl&bRun == 0 {
				break
			}
			acc |= fl
			hexL &= fl
			hexU &= fl
			if fl&bSlashP != 0 {
				slashes++
			}
			i++
			continue
		}
		if c >= 0xC2 && c <= 0xDF && i+1 < n && s[i+1]&0xC0 == 0x80 {
			// Two-byte sequence (most accented letters), inline.
			r := rune(c&0x1F)<<6 | rune(s[i+1]&0x3F)
			if !isLatinLetter(r) {
				break
			}
			latin = true
			i += 2
			continue
		}
		r, size := decodeRune(s, i)
		if r < 0 || !isLatinLetter(r) {
			break
		}
		latin = true
		i += size
	}
	// Trailing '/' and '+' are punctuation, not part of the run.
	for i > start+1 && byteFlags[s[i-1]]&bSlashP != 0 {
		i--
		slashes--
	}
	if p := innerRun(s, start, i); p < i {
		// The word ends where a run of one letter starts: count what comes
		// before it as a word of its own (it has no such run).
		if cutEnd != nil {
			*cutEnd = i
		}
		return wordRun(s[:p], start, f, nil)
	}
	length := i - start
	if !latin && acc&bDigit != 0 && acc&(bLower|bUpper) != 0 {
		if length >= 8 && slashes == 0 && (hexL != 0 || hexU != 0) {
			f[fHex] += int32(length)
			f[fHexRun]++
			return i
		}
		if length >= 20 && acc&bLower != 0 && acc&bUpper != 0 && slashes*10 <= length &&
			transitions(s, start, i)*3 >= length {
			f[fBlob] += int32(length)
			f[fBlobRun]++
			return i
		}
	}
	pieces(s, start, i, f)
	return i
}

// cutWord counts the word that starts at s[i], inside an alphanumeric run
// that goes on at least to end, if it is cut before a run of one letter, as
// wordRun counts it, and returns where it ends (at the cut, or before the
// '/' and '+' that end it); otherwise it returns 0 and counts nothing.
// countFeatures calls it for each word that starts inside a run it cut
// before: every other path reads the word to the run's end before it looks
// for the cut, which in a long run cut often (base64 or hex with a letter
// repeated, a line of runs of one letter) made the counter quadratic in the
// run's length. Here the word is read only up to its cut. A cut found
// before end is the word's whatever the run holds after end: the word is
// longer than innerRunMin, and the cut is its first run of one letter.
func cutWord[T text](s T, i int, f *Features, end int) int {
	if end-i <= innerRunMin {
		return 0
	}
	p := innerRunFrom(s, i, end)
	if p == end {
		return 0
	}
	return wordRun(s[:p], i, f, nil)
}

// transitions counts changes between lower, upper and digit classes in s[a:b].
func transitions[T text](s T, a, b int) int {
	t := 0
	prev := byteFlags[s[a]] & (bLower | bUpper | bDigit)
	for j := a + 1; j < b; j++ {
		cur := byteFlags[s[j]] & (bLower | bUpper | bDigit)
		if cur != prev {
			t++
		}
		prev = cur
	}
	return t
}

// pieces splits the run s[a:b] into letter pieces (at camelCase and
// letter/digit boundaries), digit runs and '/'/'+' punctuation.
func pieces[T text](s T, a, b int, f *Features) {
	i := a
	first := true
	for i < b {
		c := s[i]
		fl := byteFlags[c]
		switch {
		case fl&bDigit != 0:
			j := i + 1
			for j < b && byteFlags[s[j]]&bDigit != 0 {
				j++
			}
			d := int32(j - i)
			f[fDigitRun]++
			f[fDigit] += d
			f[fDigitGroup] += (d + 2) / 3
			i = j
		case fl&bSlashP != 0:
			j := i + 1
			for j < b && byteFlags[s[j]]&bSlashP != 0 {
				j++
			}
			f[fPunct] += int32(j - i)
			if j-i == 1 && j < b && byteFlags[s[j]]&(bLower|bUpper) != 0 {
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
			for j < b && byteFlags[s[j]]&bUpper != 0 {
				j++
				ups++
			}
			letters := ups
			accents := int32(0)
			if ups > 0 && j < b && isLowerAt(s, j, b) {
				if ups > 1 {
					// ALLCAPS piece before the Title piece.
					addPiece(f, ups-1, 0, !first)
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
				addPiece(f, ups, 0, !first)
				f[fUpper]++
				f[fUpperLetters] += int32(ups)
				first = false
				i = j
				continue
			}
			for j < b {
				// The lower-case letters, eight at a time.
				e := j
				for {
					if e+8 > b {
						for e < b && byteFlags[s[e]]&bLower != 0 {
							e++
						}
						break
					}
					if m := lowerMask(load64(s, e)); m != msb {
						e += bits.TrailingZeros64(^m&msb) >> 3
						break
					}
					e += 8
				}
				letters += e - j
				j = e
				if j == b || s[j] < 0x80 {
					break
				}
				// A Latin letter: wordRun let in only valid two- and
				// three-byte sequences.
				if j >= a+2 && s[j-2] == s[j] && s[j-1] == s[j+1] && s[j] <= latinRepeatLast {
					// "éééé", "ŃŃŃŃ": a run of one letter, which does not
					// merge; each after the first costs what it does alone.
					latinRepeat(f, s[j], s[j+1])
					j += 2
					continue
				}
				if s[j] != 0xC3 || s[j+1] != 0xA9 && s[j+1] != 0xA8 && s[j+1] != 0xA0 && s[j+1] != 0x89 {
					f[fAccentRare]++
				}
				j += 2
				if s[j-2] >= 0xE0 {
					j++
				}
				accents++
				letters++
			}
			if letters == 0 {
				// A lone byte that is none of the above; cannot happen for
				// runs built by wordRun, but never loop forever.
				j = i + 1
				letters = 1
			}
			if letters <= 2 && i > a && byteFlags[s[i-1]]&bDigit != 0 {
				// "79b1", "6d13": short letter pieces inside hex-like ids.
				f[fDigitWord]++
				f[fGlued]++
			} else {
				addPiece(f, letters, accents, !first)
			}
			i = j
		}
		first = false
	}
}

// isLowerAt reports whether s[j] starts a lower-case ASCII letter or a
// non-ASCII Latin letter (treated as lower case).
func isLowerAt[T text](s T, j, b int) bool {
	c := s[j]
	if c < 0x80 {
		return byteFlags[c]&bLower != 0
	}
	return j < b
}

func addPiece(f *Features, letters int, accents int32, glued bool) {
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
