package tokens

import (
	"math"
	"math/bits"
)

// The feature counter: one pass over a text, dispatching on each byte's
// class, with inline fast paths for spaces, words, digits and short
// punctuation; longer runs and non-ASCII bytes go to the other features_*
// files.

// SWAR constants: the low and the high bit of every byte of a word.
const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// The combining diacritical marks (U+0300–U+036F). Tokenizers keep marks
// inside words, but byte-pair vocabularies hold a dozen of them at most:
// the others are split into their bytes, and the letter after a mark starts
// a new token. So a mark ends a letter piece, and is costed apart.
const (
	combiningFirst = 0x300
	combiningLast  = 0x36F
)

// Script classes of non-ASCII runes that are not Latin letters.
const (
	sHan = iota
	sKana
	sHangul
	sCJKPunct
	sOther
	sUniPunct
	sSymbol
	sHanRare
	sAstral
	sPrivate
	sCombining
	sBox
)

// The script table caches scriptOf for the Basic Multilingual Plane in
// blocks of 16 runes, all of whose bounds but one (U+FF66) are multiples of
// 16: one load instead of a chain of up to 40 comparisons.
const (
	scriptBlockBits = 4
	// sMixed marks a block whose runes are not all of one script class.
	sMixed = 0xFF
)

// Box-drawing (U+2500–U+257F) and block elements (U+2580–U+259F).
const (
	boxFirst = 0x2500
	boxLast  = 0x259F
)

// boxRunLen holds, for the runes U+2500–U+259F, the longest run of the
// rune of a power-of-two length such that the runs of 1, 2, 4, ... up to it
// are all single o200k_base tokens (byte-pair merges build long runs by
// doubling), 0 meaning that the rune alone is not a token (it costs two, and
// runs of it do not merge). The same tables of ASCII characters, for both
// families, are in features_tables.go.
var (
	boxRunLen = [boxLast - boxFirst + 1]uint8{
		0x00: 16, 0x01: 8, 0x02: 1, 0x03: 1, 0x1C: 1, 0x23: 1, 0x50: 8, 0x51: 1, 0x57: 1, 0x5D: 1,
		0x80: 1, 0x84: 2, 0x88: 4, 0x8B: 1, 0x91: 1, 0x92: 1, 0x93: 1,
	}
)

// Features is a vector of feature counts.
type Features [NumFeatures]int32

// Count returns the feature counts of s. It is exported for the fit program.
func Count(s string) Features {
	var f Features
	countFeatures(s, &f)
	return f
}

// The classes of the previous rune that run features look at: one variable
// for the three, as they exclude each other.
const (
	prevNone  = iota // ASCII, or any other class
	prevOther        // a letter of another script (sOther)
	prevHan          // a Han ideograph
	prevKana         // a kana
)

// countFeatures adds the features of s to f in one pass.
func countFeatures[T text](s T, f *Features) {
	// Accented letters before the call, to see whether s has any.
	accents := f[fAccent]
	// Letters of other scripts and CJK runes before the call, to see
	// whether s mixes them (see rareWordPairs).
	others, cjk := f[fOtherLetter]+f[fOtherRepeat], f[fHan]+f[fKana]
	n := len(s)
	i := 0
	// The class of the previous rune, for the run features of scripts, and
	// what they remember of the runes before. prev is apart, in a register:
	// every word sets it.
	prev := prevNone
	var st scriptRuns
	// The packed counts of the runs of two or three punctuation bytes, and
	// how many runs they hold.
	short, shortN := uint64(0), 0
	// Where the alphanumeric run last cut before a run of one letter (see
	// cutWord) goes on to at least, 0 before any.
	cutEnd := 0
	for i < n {
		c := s[i]
		k := byteKind[c]
		if k == kSpace {
			j := i + 1
			if j < n && s[j] == ' ' {
				for j < n && s[j] == ' ' {
					j++
				}
				f[fSpaceRun]++
				f[fSpaceExtra] += int32(j - i - 1)
			} else if j < n {
				// Without a branch: which byte follows a space is hard
				// to predict.
				f[fSpaceDigit] += int32(byteFlags[s[j]] / bDigit & 1)
			}
			prev = prevNone
			i = j
			if i >= n {
				break
			}
			// Most spaces precede a word: handle it without another
			// round of the dispatch below.
			c = s[i]
			k = byteKind[c]
		}
		if k == kPunct && (i+1 == n || byteKind[s[i+1]] != kPunct) {
			// Fast path: a single punctuation byte.
			if c == '_' && i > 0 && i+1 < n && byteFlags[s[i-1]]&(bLower|bUpper|bDigit) != 0 &&
				byteFlags[s[i+1]]&(bLower|bUpper) != 0 {
				// A snake_case joint: byte-pair vocabularies hold "_word"
				// pieces, so the underscore mostly joins the next word.
				f[fSnake]++
				if byteFlags[s[i+1]]&bUpper != 0 {
					// "_Dataset", "_RESPONSE": fewer such pieces.
					f[fSnakeUpper]++
				}
				prev = prevNone
				i++
				continue
			}
			if c == '\'' && i > 0 && byteFlags[s[i-1]]&(bLower|bUpper) != 0 {
				if m := contractionLen(s, i+1); m > 0 {
					// "Let's", "don't", "we're": o200k_base's pre-split
					// keeps the contraction with its word.
					f[fContraction]++
					prev = prevNone
					i += 1 + m
					continue
				}
			}
			f[fPunct]++
			if c == '|' {
				f[fPipe]++
			}
			prev = prevNone
			if i+1 == n || byteFlags[s[i+1]]&(bLower|bUpper) == 0 {
				f[fPunctRun]++
				i++
				continue
			}
			f[fPunctWord]++
			if c == '\'' && isElision(s, i) {
				f[fElision]++
			}
			// The word after it (".Errorf", "\"key"), without another
			// round of the dispatch.
			i++
			c = s[i]
			k = kWord
		}
		if k == kWord {
			prev = prevNone
			fl := byteFlags[c]
			if i < cutEnd {
				// Inside a run already cut: a run of one letter, or the
				// word up to its cut (see cutWord), without reading the
				// rest of the run.
				if fl&(bLower|bUpper) != 0 && i+longLetterRun-1 < n && s[i+1] == c && s[i+2] == c && s[i+3] == c {
					i = letterRun(s, i, f)
					continue
				}
				if p := cutWord(s, i, f, cutEnd); p > 0 {
					i = p
					continue
				}
			}
			// Fast path, inline: a plain ASCII word (lower case, or one
			// capital then lower case) that the next byte cannot continue.
			if fl&(bLower|bUpper) != 0 {
				// Eight bytes at a time, so that the end of a word costs no
				// mispredicted loop exit; inline, as a call would spill the loop
				// state.
				j := i + 1
				for {
					if j+8 > n {
						for j < n && byteFlags[s[j]]&bLower != 0 {
							j++
						}
						break
					}
					if m := lowerMask(load64(s, j)); m != msb {
						j += bits.TrailingZeros64(^m&msb) >> 3
						break
					}
					j += 8
				}
				if j == n || byteFlags[s[j]]&bEnd != 0 {
					letters := j - i
					if letters >= longLetterRun && s[i+1] == c && s[i+2] == c && s[i+3] == c {
						// "aaaaaaaa": a run of one letter merges by
						// doubling, not as a word. The words after it in
						// the run are cut (cutEnd).
						cutEnd = j
						i = letterRun(s, i, f)
						continue
					}
					if letters > innerRunMin {
						// "Annnnnnnnn", "xyzzzzzzzz": the word ends where a
						// run of one letter starts (see innerRun).
						if p := innerRunFrom(s, i, j); p < j {
							cutEnd = j
							j = p
						}
						letters = j - i
					}
					// A capital then lower-case letters, without a branch
					// (capitals are hard to predict).
					f[fTitle] += int32(fl/bUpper&1) & b2i(letters > 1)
					if letters <= 8 {
						f[shortWord[letters]]++
					} else {
						addPiece(f, letters, 0, false)
					}
					i = j
					continue
				}
				if i+longLetterRun-1 < n && s[i+1] == c && s[i+2] == c && s[i+3] == c {
					// "IIIIII", "aaaaB": a run of one letter, as above; the
					// run goes on at least to j.
					cutEnd = j
					i = letterRun(s, i, f)
					continue
				}
				// Two more cases that wordRun and pieces would count the
				// same way, done inline: a second, Title piece ("getValue",
				// and "nThe" after an escaped newline in JSON), and a short
				// run of digits ("v2", "n2024").
				tf := byteFlags[s[j]]
				if tf&bUpper != 0 && j+1 < n && byteFlags[s[j+1]]&bLower != 0 && (fl&bLower != 0 || j-i > 1) {
					if k := camelWord(s, i, j, f); k > 0 {
						i = k
						continue
					}
				} else if s[j] >= latin2First && s[j] <= latin2Last {
					// An accented word ("était", "Québec"): most of
					// French and Spanish prose.
					if k := latinWord(s, i, j, f); k > 0 {
						i = k
						continue
					}
				} else if tf&bUpper != 0 && fl&bUpper != 0 && j == i+1 {
					// An ALLCAPS word ("ID", "HTTP", "ERROR").
					k := j + 1
					for k < n && byteFlags[s[k]]&bUpper != 0 {
						k++
					}
					if (k == n || byteFlags[s[k]]&bEnd != 0) && (k-i <= innerRunMin || innerRunFrom(s, i, k) == k) {
						ups := k - i
						addPiece(f, ups, 0, false)
						f[fUpper]++
						f[fUpperLetters] += int32(ups)
						i = k
						continue
					}
				} else if tf&bDigit != 0 {
					k := j + 1
					for k < n && byteFlags[s[k]]&bDigit != 0 {
						k++
					}
					if k-i < 8 && (k == n || byteFlags[s[k]]&bEnd != 0) {
						// Shorter than any hex or base64 run.
						letters := j - i
						if fl&bUpper != 0 && letters > 1 {
							f[fTitle]++
						}
						f[shortWord[letters]]++
						d := int32(k - j)
						f[fDigitRun]++
						f[fDigit] += d
						f[fDigitGroup] += (d + 2) / 3
						i = k
						continue
					}
				}
			}
			if c <= '9' {
				// Fast path: a run of digits alone.
				j := i + 1
				for {
					if j+8 > n {
						for j < n && byteFlags[s[j]]&bDigit != 0 {
							j++
						}
						break
					}
					if m := digitMask(load64(s, j)); m != msb {
						j += bits.TrailingZeros64(^m&msb) >> 3
						break
					}
					j += 8
				}
				if j == n || byteFlags[s[j]]&bEnd != 0 {
					d := int32(j - i)
					f[fDigitRun]++
					f[fDigit] += d
					f[fDigitGroup] += (d + 2) / 3
					i = j
					continue
				}
			}
			i = wordRun(s, i, f, &cutEnd)
			continue
		}
		switch k {
		case kSpace:
			// Unreachable: spaces are handled above and never follow
			// themselves.
			i++
		case kNewline:
			j := i + 1
			for j < n && (s[j] == '\n' || s[j] == '\r') {
				j++
			}
			if i > 0 && byteKind[s[i-1]] == kPunct {
				f[fNewlinePunct]++
			} else {
				f[fNewlineRun]++
			}
			f[fNewlineExtra] += int32(j - i - 1)
			if j < n && (byteFlags[s[j]]&bLower != 0 || s[j] == 0xC3 && j+1 < n && s[j+1]&0xC0 == 0x80) {
				// A line wrapped inside a sentence: the word after the
				// newline has no leading space, and byte-pair vocabularies
				// hold fewer words in that form (French "\nsavoir" is
				// "s"+"avoir", " savoir" one token).
				f[fNewlineWord]++
			}
			i = j
		case kTab:
			j := i + 1
			for j < n && s[j] == '\t' {
				j++
			}
			f[fTabRun]++
			f[fTab] += int32(min(j-i, tabCap))
			if j < n && byteKind[s[j]] == kPunct {
				// Tab-indented JSON ("\t\t\"key\""): o200k_base lets one
				// tab or space lead a word, not punctuation.
				f[fTabPunct]++
			}
			i = j
		case kPunct:
			if l := shortPunctRun(s, i); l > 0 {
				// A run of two or three bytes ("\":", "),", "();"),
				// without the loop below: it repeats no byte often
				// enough for the run table or the alternation count.
				// Its counts, from the table of every such run, add up
				// in one register (see shortPunctTable).
				k := uint32(punctIndex[c]&31)<<5 | uint32(punctIndex[s[i+1]]&31)
				e := uint32(shortPunctNone)
				if l == 3 {
					e = uint32(punctIndex[s[i+2]] & 31)
				}
				short += shortPunct[k*shortPunctThird+e]
				shortN++
				if shortN == shortPunctFlush {
					flushShortPunct(f, short, shortN)
					short, shortN = 0, 0
				}
				i += l
				break
			}
			i = punctRun(s, i, f)
		case kCtrl:
			f[fCtrl]++
			i++
		default: // kHigh
			i, prev = nonASCII(s, i, f, prev, &st, &cutEnd)
			continue
		}
		prev = prevNone
	}
	flushShortPunct(f, short, shortN)
	if int(f[fAccent]-accents)*verbEndAccentBytes >= n && n > 0 {
		// French verb endings are a sign of French only in text dense
		// with accented letters ("wait" and "portrait" are English), and
		// looking for them only there costs other text nothing.
		f[fVerbEnd] += verbEnds(s)
	}
	if n > 0 && (rareSample(s) || int(f[fOtherLetter]+f[fOtherRepeat]-others)*mixedScriptBytes >= n && int(f[fHan]+f[fKana]-cjk)*mixedScriptBytes >= n) {
		// Words that are not words (see rareWordPairs): looked for in
		// text whose sample shows them, or that mixes CJK and the letters
		// of another script densely, which prose or code in one language
		// does not; the second pass costs other text nothing.
		_, rare := rareWordPairs(s, 0, n, math.MaxInt32)
		f[fRareBigram] += rare
	}
}

// The lead bytes of the two-byte UTF-8 sequences that may be Latin letters
// (U+00C0–U+024F); see latin2.
const (
	latin2First = 0xC3
	latin2Last  = 0xC9
)
