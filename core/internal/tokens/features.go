package tokens

import "math/bits"

// Feature indices. A text is reduced to a vector of counts of these
// features in one pass over its bytes; the token estimate is the dot product
// of that vector with a per-family weight vector fitted by internal/tokenfit.
//
// The features follow how byte-pair tokenizers pre-split text: letter runs
// (split at camelCase boundaries), digit runs, punctuation runs, whitespace
// runs, and script classes for non-ASCII text. Long random-looking runs of
// [A-Za-z0-9+/] (base64) and hexadecimal runs are counted per byte instead of
// as pieces, because tokenizers break them into short, nearly random tokens.
const (
	fWord1        = iota // letter pieces of 1–2 letters
	fWord2               // letter pieces of 3–5 letters
	fWord3               // letter pieces of 6–8 letters
	fWord4               // letter pieces of 9–12 letters
	fWord5               // letter pieces of 13+ letters
	fWordExtra           // letters beyond the 12th in long pieces
	fTitle               // pieces of the form Upper+lower ("Title")
	fUpper               // ALLCAPS pieces of 2+ letters
	fUpperLetters        // letters in ALLCAPS pieces
	fGlued               // pieces that are not the first of their alphanumeric run
	fDigitWord           // letter pieces of 1–2 letters directly after a digit (counted instead of word1_2)
	fGluedTitle          // Title pieces inside a run (the humps of camelCase)
	fAccent              // Latin letters outside ASCII (é, ñ, ß, ...)
	fAccentWord          // letter pieces containing such letters
	fDigitRun            // runs of ASCII digits
	fDigitGroup          // ceil(len/3) summed over digit runs
	fDigit               // ASCII digits
	fPunct               // ASCII punctuation bytes that differ from the byte before
	fPunctRepeat         // ASCII punctuation bytes equal to the byte before ("----")
	fPipe                // '|' bytes (table borders; rarely merged with neighbours)
	fPunctRun            // runs of ASCII punctuation, except those counted by fPunctWord
	fPunctWord           // single punctuation bytes directly followed by a letter
	fSpaceDigit          // single spaces followed by a digit
	fSpaceRun            // runs of 2+ spaces
	fSpaceExtra          // spaces beyond the first in such runs
	fNewlineRun          // runs of \r and \n not directly after punctuation
	fNewlinePunct        // runs of \r and \n directly after ASCII punctuation
	fNewlineExtra        // newlines beyond the first in a run
	fTab                 // tab bytes
	fTabRun              // runs of tabs
	fHan                 // CJK ideographs
	fHanRun              // runs of CJK ideographs not directly after kana
	fHanRunKana          // runs of CJK ideographs directly after kana
	fHanHead             // the first four ideographs of every run (short runs tokenize worse)
	fHanSolo             // ideographs that do not complete a pair found in the Han pair table
	fKana                // Hiragana and Katakana
	fHangul              // Hangul syllables and jamo
	fCJKPunct            // CJK symbols and punctuation, full-width forms
	fOtherLetter         // letters of other scripts (Greek, Cyrillic, Arabic, Indic, ...)
	fOtherRun            // runs of such letters
	fUniPunct            // general punctuation U+2000–U+206F (quotes, dashes)
	fSymbol              // any other non-ASCII rune (symbols, emoji, box drawing)
	fBlob                // bytes in base64-like runs
	fBlobRun             // base64-like runs
	fHex                 // bytes in hexadecimal runs
	fHexRun              // hexadecimal runs
	fCtrl                // control bytes and invalid UTF-8
	fHanRare             // ideographs of CJK Extension B and beyond (U+20000–U+3FFFF)
	fAstral              // other runes outside the BMP that are not emoji (math alphanumerics, historic scripts)
	fPrivate             // UTF-8 bytes of private-use runes (U+E000–U+F8FF, planes 15 and 16) and of plane 14
	fCombining           // byte tokens of combining marks (see markTokens)
	fBoxTokens           // box-drawing and block runs, costed per run with the o200k run table
	fPunctLong           // ASCII punctuation runs of one byte (longPunct+ long), costed with the o200k run table
	fPunctAlt            // bytes of alternating two-byte punctuation patterns ("-=-=", "._._"), in long ones
	fCJKSplit            // ideographs and kana that are not a token alone (the split tables of hanpairs.go)
	fKanaSolo            // kana that do not complete a pair found in the kana pair table
	fElision             // apostrophes of elisions ("l'homme", "qu'il"), not of English contractions
	fTabPunct            // runs of tabs followed by ASCII punctuation (the last tab cannot join a word)
	fSnake               // single '_' between a letter or digit and a letter (snake_case), counted instead of punct and punct_word
	fSnakeUpper          // snake_case joints before an upper-case letter (counted by snake too)
	fVerbEnd             // French verb endings ("ait", "aient", "èrent" ending a word; see verbEnds), in text dense with accented letters
	fContraction         // English contractions ("'s", "'t", "'re", ...) after a letter, counted instead of punct and a piece
	fAccentRare          // non-ASCII Latin letters other than é, è, à and É (rarer inside vocabulary words)
	fNewlineWord         // runs of \r and \n followed directly by a lower-case ASCII letter or a rune of U+00C0–U+00FF (hard-wrapped prose)
	// NumFeatures is the length of a feature vector.
	NumFeatures
)

// FeatureNames names the features, in index order. They are the keys of the
// weights files.
var FeatureNames = [NumFeatures]string{
	"word1_2", "word3_5", "word6_8", "word9_12", "word13p", "word_extra",
	"title", "upper", "upper_letters", "glued", "digit_word", "glued_title", "accent", "accent_word",
	"digit_run", "digit_group3", "digit", "punct", "punct_repeat", "pipe", "punct_run", "punct_word",
	"space_digit", "space_run", "space_extra", "newline_run", "newline_punct", "newline_extra",
	"tab", "tab_run", "han", "han_run", "han_run_kana", "han_head", "han_solo", "kana", "hangul", "cjk_punct", "other_letter",
	"other_run", "uni_punct", "symbol", "blob", "blob_run", "hex", "hex_run", "ctrl",
	"han_rare", "astral", "private", "combining", "box_tokens", "punct_long", "punct_alt",
	"cjk_split", "kana_solo", "elision", "tab_punct", "snake", "snake_upper", "verb_end", "contraction", "accent_rare", "newline_word",
}

// Byte flags of the ASCII class table.
const (
	bLower  = 1 << iota // a-z
	bUpper              // A-Z
	bDigit              // 0-9
	bHexL               // 0-9 a-f
	bHexU               // 0-9 A-F
	bSlashP             // '/' or '+', allowed inside an alphanumeric run
	bRun                // may continue an alphanumeric run
	bEnd                // ASCII byte that ends an alphanumeric run
)

// Byte kinds for the outer loop.
const (
	kWord = iota
	kSpace
	kNewline
	kTab
	kPunct
	kCtrl
	kHigh
)

var (
	byteFlags [256]uint8
	byteKind  [256]uint8
)

func init() {
	for i := 0; i < 256; i++ {
		c := byte(i)
		var f uint8
		k := uint8(kPunct)
		switch {
		case c >= 'a' && c <= 'z':
			f = bLower | bRun
			if c <= 'f' {
				f |= bHexL
			}
			k = kWord
		case c >= 'A' && c <= 'Z':
			f = bUpper | bRun
			if c <= 'F' {
				f |= bHexU
			}
			k = kWord
		case c >= '0' && c <= '9':
			f = bDigit | bHexL | bHexU | bRun
			k = kWord
		case c == '/' || c == '+':
			f = bSlashP | bRun
		case c == ' ':
			k = kSpace
		case c == '\n' || c == '\r':
			k = kNewline
		case c == '\t':
			k = kTab
		case c < 0x20 || c == 0x7f:
			k = kCtrl
		case c >= 0x80:
			k = kHigh
		}
		if c < 0x80 && f&bRun == 0 {
			f |= bEnd
		}
		byteFlags[i] = f
		byteKind[i] = k
	}
}

// text is the set of types the counter runs on.
type text interface{ ~string | ~[]byte }

// SWAR constants: the low and the high bit of every byte of a word.
const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// load64 returns s[i:i+8] as a little-endian word; the compiler turns it
// into a single load.
func load64[T text](s T, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// lowerMask returns a word with the high bit set in each byte of x that is
// a lower-case ASCII letter. Clearing the high bits first keeps the sums
// from carrying into the next byte.
func lowerMask(x uint64) uint64 {
	y := x &^ msb
	return (y + (0x80-'a')*lsb) &^ (y + (0x7f-'z')*lsb) &^ x & msb
}

// digitMask returns a word with the high bit set in each byte of x that is
// an ASCII digit.
func digitMask(x uint64) uint64 {
	y := x &^ msb
	return (y + (0x80-'0')*lsb) &^ (y + (0x7f-'9')*lsb) &^ x & msb
}

// rangeMask returns a word with the high bit set in each byte of x that is
// in [lo, hi]. All bytes of x must be ASCII.
func rangeMask(x uint64, lo, hi byte) uint64 {
	return (x + uint64(0x80-lo)*lsb) &^ (x + uint64(0x7f-hi)*lsb) & msb
}

// shortWord maps the length of a letter piece of up to 8 letters to its
// feature.
var shortWord = [9]uint8{fWord1, fWord1, fWord1, fWord2, fWord2, fWord2, fWord3, fWord3, fWord3}

// decodeRune decodes the UTF-8 sequence at s[i]. Invalid or truncated
// sequences yield (-1, 1). It does not reject overlong forms or surrogates:
// the result only steers an estimate.
func decodeRune[T text](s T, i int) (rune, int) {
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
		if i+2 < n && s[i+1]&0xC0 == 0x80 && s[i+2]&0xC0 == 0x80 {
			return rune(c&0x0F)<<12 | rune(s[i+1]&0x3F)<<6 | rune(s[i+2]&0x3F), 3
		}
	case c < 0xF5:
		if i+3 < n && s[i+1]&0xC0 == 0x80 && s[i+2]&0xC0 == 0x80 && s[i+3]&0xC0 == 0x80 {
			return rune(c&0x07)<<18 | rune(s[i+1]&0x3F)<<12 | rune(s[i+2]&0x3F)<<6 | rune(s[i+3]&0x3F), 4
		}
	}
	return -1, 1
}

// isLatinLetter reports whether r is a non-ASCII Latin letter.
func isLatinLetter(r rune) bool {
	return (r >= 0xC0 && r <= 0x24F && r != 0xD7 && r != 0xF7) || (r >= 0x1E00 && r <= 0x1EFF)
}

// The combining diacritical marks (U+0300–U+036F). Tokenizers keep marks
// inside words, but byte-pair vocabularies hold a dozen of them at most:
// the others are split into their bytes, and the letter after a mark starts
// a new token. So a mark ends a letter piece, and is costed apart.
const (
	combiningFirst = 0x300
	combiningLast  = 0x36F
)

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

// The script table caches scriptOf for the Basic Multilingual Plane in
// blocks of 16 runes, all of whose bounds but one (U+FF66) are multiples of
// 16: one load instead of a chain of up to 40 comparisons.
const (
	scriptBlockBits = 4
	// sMixed marks a block whose runes are not all of one script class.
	sMixed = 0xFF
)

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

// Box-drawing (U+2500–U+257F) and block elements (U+2580–U+259F).
const (
	boxFirst = 0x2500
	boxLast  = 0x259F
)

// longPunct is the length from which a run of one ASCII punctuation byte
// ("=====", "-----") is costed with punctRunLen instead of byte counts:
// tokenizers hold long runs of common rule characters in one token, and of
// rare ones in short tokens, which no per-byte weight can describe.
const longPunct = 4

// longAlt is the number of bytes repeating the byte two before (and not the
// one before) from which a punctuation run counts them as fPunctAlt instead
// of fPunct: "-=-=-=", "._._._" and "<><><>" are rules and art, tokenized as
// repeated pairs, while short ones ("->", "();") are code.
const longAlt = 4

// punctRunLen holds, for each ASCII punctuation byte c, the longest run of c
// of a power-of-two length such that the runs of c of 1, 2, 4, ... up to it
// are all single o200k_base tokens (byte-pair merges build long runs by
// doubling). boxRunLen holds the same for the runes U+2500–U+259F, 0 meaning
// that the rune alone is not a token (it costs two, and runs of it do not
// merge). Written by go run ./internal/tokenfit
// -runtables, which the fit checks.
var (
	punctRunLen = [128]uint8{
		'!': 16, '"': 4, '#': 64, '$': 4, '%': 32, '&': 2, '\'': 4, '(': 4, ')': 4, '*': 64, '+': 32,
		',': 4, '-': 64, '.': 64, '/': 64, ':': 16, ';': 16, '<': 8, '=': 64, '>': 8, '?': 8,
		'@': 8, '[': 2, '\\': 4, ']': 2, '^': 8, '_': 64, '`': 2, '{': 2, '|': 4, '}': 2, '~': 32,
	}
	boxRunLen = [boxLast - boxFirst + 1]uint8{
		0x00: 16, 0x01: 8, 0x02: 1, 0x03: 1, 0x1C: 1, 0x23: 1, 0x50: 8, 0x51: 1, 0x57: 1, 0x5D: 1,
		0x80: 1, 0x84: 2, 0x88: 4, 0x8B: 1, 0x91: 1, 0x92: 1, 0x93: 1,
	}
)

// PunctRunLen returns the entry of the run table for the ASCII punctuation
// byte or box-drawing rune r, and whether r has one. It is exported for the
// fit program, which checks the tables against the vocabulary.
func PunctRunLen(r rune) (int, bool) {
	switch {
	case r < 0x80 && byteKind[r] == kPunct:
		return int(punctRunLen[r]), true
	case r >= boxFirst && r <= boxLast:
		return int(boxRunLen[r-boxFirst]), true
	}
	return 0, false
}

// runTokens is the cost of a run of n copies of a character whose run table
// entry is l: whole tokens of l copies, and the rest in power-of-two pieces.
func runTokens(n, l int32) int32 {
	if l == 0 {
		return 2 * n
	}
	return n/l + int32(bits.OnesCount32(uint32(n%l)))
}

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
	n := len(s)
	i := 0
	// The class of the previous rune, for the run features of scripts.
	prev := prevNone
	hanLen := 0 // length so far of the current run of ideographs
	// The previous ideograph, and whether it may still pair with the next
	// one (it is not the second of a pair already counted).
	var hanPrev rune
	hanOpen := false
	// The same for kana, with the kana pair table.
	var kanaPrev rune
	kanaOpen := false
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
			// Fast path, inline: a plain ASCII word (lower case, or one
			// capital then lower case) that the next byte cannot continue.
			if fl := byteFlags[c]; fl&(bLower|bUpper) != 0 {
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
					if k == n || byteFlags[s[k]]&bEnd != 0 {
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
			i = wordRun(s, i, f)
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
			f[fTab] += int32(j - i)
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
				rep := b2i(s[i+1] == c)
				pipes := b2i(c == '|') + b2i(s[i+1] == '|')
				if l == 3 {
					rep += b2i(s[i+2] == s[i+1])
					pipes += b2i(s[i+2] == '|')
				}
				f[fPunct] += int32(l) - rep
				f[fPunctRepeat] += rep
				f[fPipe] += pipes
				f[fPunctRun]++
				i += l
				break
			}
			j := i + 1
			rep := int32(0)
			pipes := int32(0)
			if c == '|' {
				pipes++
			}
			// same counts the bytes equal to the one before in the
			// current run of one byte; long runs are costed by the table.
			same, long, alt := int32(0), int32(0), int32(0)
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
					continue
				}
				if j-i >= 2 && s[j] == s[j-2] {
					alt++
				}
				if same >= longPunct-1 {
					rep -= same
					long += same + 1
					f[fPunctLong] += runTokens(same+1, int32(punctRunLen[s[j-1]]))
				}
				same = 0
				if s[j] == '|' {
					pipes++
				}
				j++
			}
			if same >= longPunct-1 {
				rep -= same
				long += same + 1
				f[fPunctLong] += runTokens(same+1, int32(punctRunLen[s[j-1]]))
			}
			if alt < longAlt {
				alt = 0
			}
			f[fPunctAlt] += alt
			f[fPipe] += pipes
			f[fPunct] += int32(j-i) - rep - long - alt
			f[fPunctRepeat] += rep
			if j-i == 1 && j < n && byteFlags[s[j]]&(bLower|bUpper) != 0 {
				f[fPunctWord]++
			} else {
				f[fPunctRun]++
			}
			i = j
		case kCtrl:
			f[fCtrl]++
			i++
		default: // kHigh
			// Fast path for the three-byte runes of CJK text, which is
			// mostly runs of them: Han ideographs of U+4E00–U+9FFF (lead
			// bytes E4–E9), kana and CJK punctuation of U+3000–U+30FF
			// (E3 80–83), Hangul syllables (EA–ED) and full-width
			// punctuation of U+FF00–U+FF65 (EF BC, EF BD 80–A5). The loop
			// walks such runs, mixed as Japanese mixes kana and kanji,
			// without the dispatch above; any other rune leaves it.
			if c >= 0xE3 && c <= 0xEF {
				start := i
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
						prev = prevNone
					case r >= KanaFirst && r <= KanaLast:
						f[fKana]++
						f[fCJKSplit] += kanaSplitBit(r)
						if prev == prevKana && kanaOpen && isKanaPair(kanaPrev, r) {
							kanaOpen = false
						} else {
							f[fKanaSolo]++
							kanaOpen = true
						}
						kanaPrev = r
						prev = prevKana
					case r >= 0xAC00 && r <= 0xD7AF:
						f[fHangul]++
						prev = prevNone
					default:
						goto done
					}
					i += 3
				}
			done:
				if i > start {
					continue
				}
			}
			if c >= latin2First && c <= latin2Last {
				// A word that starts with an accented letter ("à", "été").
				if k := latinWord(s, i, i, f); k > 0 {
					i = k
					prev = prevNone
					continue
				}
			}
			r, size := decodeRune(s, i)
			if r < 0 {
				f[fCtrl]++
				i++
				prev = prevNone
				continue
			}
			if isLatinLetter(r) {
				i = wordRun(s, i, f)
				prev = prevNone
				continue
			}
			next := prevNone
			switch scriptOfRune(r) {
			case sHan:
				f[fHan]++
				if r >= HanSplitFirst && r <= HanSplitLast {
					f[fCJKSplit] += hanSplitBit(r)
				}
				if prev != prevHan {
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
				next = prevHan
			case sKana:
				// Only kana outside U+3040–U+30FF, or truncated, reach
				// here: none is in the pair table.
				f[fKana]++
				f[fKanaSolo]++
				kanaOpen = false
				next = prevKana
			case sHangul:
				f[fHangul]++
			case sCJKPunct:
				f[fCJKPunct]++
			case sOther:
				f[fOtherLetter]++
				if prev != prevOther {
					f[fOtherRun]++
				}
				next = prevOther
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
				j := i + 3
				for j+2 < n && s[j] == c && s[j+1] == s[i+1] && s[j+2] == s[i+2] {
					j += 3
				}
				f[fBoxTokens] += runTokens(int32(j-i)/3, int32(boxRunLen[r-boxFirst]))
				size = j - i
			default:
				f[fSymbol]++
			}
			prev = next
			i += size
			continue
		}
		prev = prevNone
	}
	if int(f[fAccent]-accents)*verbEndAccentBytes >= n && n > 0 {
		// French verb endings are a sign of French only in text dense
		// with accented letters ("wait" and "portrait" are English), and
		// looking for them only there costs other text nothing.
		f[fVerbEnd] += verbEnds(s)
	}
}

// maxHumps is the most Title pieces after the first piece of a camelCase
// word that camelWord counts; longer words are rare, and left to wordRun.
const maxHumps = 8

// lowerEnd returns the index of the first byte from s[j] on that is not a
// lower-case ASCII letter, looking at eight bytes at a time.
func lowerEnd[T text](s T, j int) int {
	n := len(s)
	for j+8 <= n {
		if m := lowerMask(load64(s, j)); m != msb {
			return j + bits.TrailingZeros64(^m&msb)>>3
		}
		j += 8
	}
	for j < n && byteFlags[s[j]]&bLower != 0 {
		j++
	}
	return j
}

// camelWord counts the camelCase word ("getValue", "RuneCountInString")
// whose first piece is s[i:j], lower-case letters or a capital and
// lower-case letters, and whose next pieces, from s[j], are Title pieces, if
// it then ends: at the end of s or at an ASCII byte that ends an
// alphanumeric run. It adds the features that wordRun and pieces would add
// for that run and returns the index after it. For any other run it adds
// nothing and returns 0, leaving the run to wordRun.
func camelWord[T text](s T, i, j int, f *Features) int {
	n := len(s)
	first := j - i
	var humps [maxHumps]int
	h := 0
	for {
		// s[j] is a capital and s[j+1] a lower-case letter.
		if h == maxHumps {
			return 0
		}
		k := lowerEnd(s, j+2)
		humps[h] = k - j
		h++
		j = k
		if j == n || byteFlags[s[j]]&bEnd != 0 {
			break
		}
		if byteFlags[s[j]]&bUpper == 0 || j+1 == n || byteFlags[s[j+1]]&bLower == 0 {
			return 0 // a digit, ALLCAPS, a non-ASCII letter, '/' or '+'
		}
	}
	if byteFlags[s[i]]&bUpper != 0 {
		f[fTitle]++
	}
	addShort(f, first)
	for _, letters := range humps[:h] {
		f[fTitle]++
		f[fGluedTitle]++
		f[fGlued]++
		addShort(f, letters)
	}
	return j
}

// addShort adds a letter piece that is the first of its run, with a table
// lookup for the common short ones.
func addShort(f *Features, letters int) {
	if letters <= 8 {
		f[shortWord[letters]]++
		return
	}
	addPiece(f, letters, 0, false)
}

// The lead bytes of the two-byte UTF-8 sequences that may be Latin letters
// (U+00C0–U+024F); see latin2.
const (
	latin2First = 0xC3
	latin2Last  = 0xC9
)

// latin2 reports whether the bytes c, d are a two-byte sequence of a Latin
// letter as isLatinLetter sees it: U+00C0–U+024F except × and ÷.
func latin2(c, d byte) bool {
	if d&0xC0 != 0x80 {
		return false
	}
	switch {
	case c == 0xC3:
		return d != 0x97 && d != 0xB7 // × and ÷
	case c >= 0xC4 && c <= 0xC8:
		return true
	case c == 0xC9:
		return d <= 0x8F // up to U+024F
	}
	return false
}

// latinWord counts the word that starts at s[i] with an optional ASCII
// capital and lower-case ASCII letters up to s[j], and goes on with two-byte
// Latin letters and lower-case ASCII letters, if it then ends: at the end of
// s or at an ASCII byte that ends an alphanumeric run. It adds the features
// that wordRun and pieces would add for such a run (one piece, whose
// non-ASCII letters are accents) and returns the index after it. For any
// other run it adds nothing and returns 0, leaving the run to wordRun.
func latinWord[T text](s T, i, j int, f *Features) int {
	n := len(s)
	accents, rare := int32(0), int32(0)
	for j < n {
		c := s[j]
		if c < 0x80 {
			fl := byteFlags[c]
			if fl&bLower != 0 {
				j = lowerEnd(s, j+1)
				continue
			}
			if fl&bEnd != 0 {
				break
			}
			return 0 // a capital, a digit, '/' or '+': not one plain piece
		}
		if j+1 >= n || !latin2(c, s[j+1]) {
			return 0
		}
		// The same test of rare accents as pieces.
		if c != 0xC3 || s[j+1] != 0xA9 && s[j+1] != 0xA8 && s[j+1] != 0xA0 && s[j+1] != 0x89 {
			rare++
		}
		accents++
		j += 2
	}
	if accents == 0 {
		return 0 // not reached from countFeatures, which calls at a Latin letter
	}
	if byteFlags[s[i]]&bUpper != 0 {
		// A capital followed by letters, as pieces sees it.
		f[fTitle]++
	}
	f[fAccentRare] += rare
	// Each two-byte letter is one letter of two bytes.
	addPiece(f, j-i-int(accents), accents, false)
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

// isElision reports whether the apostrophe at s[i], followed by a letter,
// elides a vowel as French and Italian do ("l'homme", "d'une", "qu'il",
// "c'est"): it follows a piece of one or two ASCII letters and is not an
// English contraction ("I'm", "I've", "I'll", "I'd"). Byte-pair vocabularies
// learnt mostly from English split the words of such languages into more
// pieces than English words of the same length; elisions are the cheapest
// sign of them.
func isElision[T text](s T, i int) bool {
	if i == 0 || byteFlags[s[i-1]]&(bLower|bUpper) == 0 ||
		i >= 3 && byteFlags[s[i-2]]&(bLower|bUpper) != 0 && byteFlags[s[i-3]]&(bLower|bUpper) != 0 {
		return false
	}
	// The letters after the apostrophe.
	j := i + 1
	for j < len(s) && j-i <= 3 && byteFlags[s[j]]&(bLower|bUpper) != 0 {
		j++
	}
	switch string(s[i+1 : j]) {
	case "s", "t", "m", "d", "re", "ve", "ll", "S", "T", "M", "D", "RE", "VE", "LL":
		return false
	}
	return true
}

// verbEndAccentBytes is the most bytes per accented letter of a text whose
// French verb endings are counted: French prose has one accented letter in
// 15 to 25 bytes, English text that quotes a French name or two far fewer.
const verbEndAccentBytes = 64

// verbEnds counts the French verb endings of s: "ait", "aient" and "èrent"
// after a letter (an ASCII letter or any non-ASCII byte) and before the end
// of s or an ASCII byte that is not a letter or digit. These are endings of
// the imperfect and the past historic of narrative prose, which vocabularies
// learnt mostly from English split off their stems ("raisonn"+"ait",
// "souffl"+"èrent") unless the verb is very common. It looks for the 't'
// eight bytes at a time.
func verbEnds[T text](s T) int32 {
	var c int32
	n := len(s)
	i := 3
	for ; i+9 <= n; i += 8 {
		// Bytes i..i+7 are tested against the byte one after and the
		// bytes one to three before, loaded in the same lanes. A 't' not before a lower-case letter, which ends most words
		// with a 't' in none of eight bytes: skip them at once.
		m := byteEq(load64(s, i), 't') &^ lowerMask(load64(s, i+1))
		if m == 0 {
			continue
		}
		x1, x2, x3 := load64(s, i-1), load64(s, i-2), load64(s, i-3)
		// Such a 't' after "ai" or after "ien"/"ren"; verbEndAt checks
		// every candidate.
		m &= byteEq(x1, 'i')&byteEq(x2, 'a') | byteEq(x1, 'n')&byteEq(x2, 'e')&(byteEq(x3, 'i')|byteEq(x3, 'r'))
		for ; m != 0; m &= m - 1 {
			c += verbEndAt(s, i+bits.TrailingZeros64(m)>>3)
		}
	}
	for ; i < n; i++ {
		c += verbEndAt(s, i)
	}
	return c
}

// byteEq returns a word with the high bit set in each byte of x equal to b,
// and maybe in bytes after one (a borrow): a filter, not an exact test.
func byteEq(x uint64, b byte) uint64 {
	y := x ^ uint64(b)*lsb
	return (y - lsb) &^ y & msb
}

// verbEndAt returns 1 if s[p] is the 't' of a verb ending (see verbEnds).
func verbEndAt[T text](s T, p int) int32 {
	if s[p] != 't' || p+1 < len(s) && s[p+1] < 0x80 && byteFlags[s[p+1]]&(bLower|bUpper|bDigit) != 0 {
		return 0
	}
	letter := func(c byte) bool { return c >= 0x80 || byteFlags[c]&(bLower|bUpper) != 0 }
	switch {
	case p >= 3 && s[p-1] == 'i' && s[p-2] == 'a':
		return b2i(letter(s[p-3]))
	case p >= 5 && s[p-1] == 'n' && s[p-2] == 'e' && s[p-3] == 'i' && s[p-4] == 'a':
		return b2i(letter(s[p-5]))
	case p >= 6 && s[p-1] == 'n' && s[p-2] == 'e' && s[p-3] == 'r' && s[p-4] == 0xA8 && s[p-5] == 0xC3:
		return b2i(letter(s[p-6]))
	}
	return 0
}

// b2i returns 1 for true and 0 for false.
func b2i(b bool) int32 {
	if b {
		return 1
	}
	return 0
}

// contractionLen returns the length of the English contraction suffix
// ("s", "t", "m", "d", "re", "ve", "ll", in any case) that starts at s[j]
// after an apostrophe and ends before a byte that is not an ASCII letter nor
// a non-ASCII byte, or 0.
func contractionLen[T text](s T, j int) int {
	e := j
	for e < len(s) && e-j < 3 && byteFlags[s[e]]&(bLower|bUpper) != 0 {
		e++
	}
	if e < len(s) && (s[e] >= 0x80 || byteFlags[s[e]]&(bLower|bUpper) != 0) {
		return 0
	}
	switch e - j {
	case 1:
		switch s[j] | 0x20 {
		case 's', 't', 'm', 'd':
			return 1
		}
	case 2:
		a, b := s[j]|0x20, s[j+1]|0x20
		if a == 'r' && b == 'e' || a == 'v' && b == 'e' || a == 'l' && b == 'l' {
			return 2
		}
	}
	return 0
}

// wordRun consumes the alphanumeric run starting at s[i] (ASCII letters and
// digits, non-ASCII Latin letters, and embedded '/' and '+'), adds its
// features and returns the index after it.
func wordRun[T text](s T, i int, f *Features) int {
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

// FeatureIndex returns the index of the named feature, or -1.
func FeatureIndex(name string) int {
	for i, n := range FeatureNames {
		if n == name {
			return i
		}
	}
	return -1
}
