package tokens

import "math/bits"

// Words: camelCase, snake_case and Latin words split into the pieces
// byte-pair tokenizers make of them.

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
	if innerRun(s, i, j) < j {
		return 0 // cut before a run of one letter, by wordRun
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
	accents, rare, repeats := int32(0), int32(0), int32(0)
	// The costs of the repeated letters in the two families (latinRepeat).
	var repO, repG int32
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
		if j >= i+2 && s[j-2] == c && s[j-1] == s[j+1] && c <= latinRepeatLast {
			// The same test of runs of one letter as pieces.
			k := latinRepeatCost(c, s[j+1])
			repO += int32(k & 0xF)
			repG += int32(k >> 4)
			repeats++
			j += 2
			continue
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
	if innerRun(s, i, j) < j {
		return 0 // cut before a run of one letter, by wordRun
	}
	if byteFlags[s[i]]&bUpper != 0 {
		// A capital followed by letters, as pieces sees it.
		f[fTitle]++
	}
	f[fAccentRare] += rare
	f[fLatinRepeat] += repO
	f[fLatinRepeatG] += repG
	// Each two-byte letter is one letter of two bytes, and the repeated
	// ones are not part of the piece.
	addPiece(f, j-i-int(accents)-2*int(repeats), accents, false)
	return j
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

// mixedScriptBytes is the most bytes per rune of each of CJK and of another
// script (Greek, Cyrillic, Arabic, ...) of a text whose rare letter pairs
// are counted whatever the sample says (see rareWordPairs): random words
// mixed word by word with many scripts are too few per byte in each for the
// sample, and prose in one of those scripts that quotes an English term has
// few runes of the other.
const mixedScriptBytes = 64

// Words that are not words: random letters strung into words ("gwvmmzw
// xq ubtk") cost a byte-pair tokenizer a token for every two or three
// letters, where the word features count one or two a word: both families
// cut them at the letter pairs that real words seldom hold (rareBigram),
// about one token more for each. Such pairs are counted in a second pass
// over the words of s, which runs only when a sample of s shows them
// often. The sample is rareSampleWindows windows spread over s, one more
// for every rareSampleStride bytes, each the words that start in the
// rareSampleBytes bytes from its start until they hold rareSamplePairs
// pairs of letters (so that text whose Latin words are few among other
// scripts is sampled as well as prose); it shows them often when at least
// rareSampleMin of its pairs are rare, and at least one in rareSampleShare.
// Real text has 0.6 percent of its pairs rare, random letters 47 percent.
// Texts shorter than rareSampleSkip bytes are not sampled: the pairs of a
// few words cost too few tokens to matter, and the sample would be most of
// the text.
const (
	rareSampleWindows = 4
	rareSampleBytes   = 128
	rareSamplePairs   = 24
	rareSampleStride  = 2048
	rareSampleMin     = 3
	rareSampleShare   = 5
	rareSampleSkip    = 256
)

// rareWordPairs returns the letter pairs and the rare ones (rareBigram) of
// the words of s that start in s[from:to], in order until they hold limit
// pairs: maximal runs of ASCII letters between bytes that are neither
// ASCII letters nor digits, a capital or a lower-case letter followed by
// lower-case letters. A run with a capital after its first letter, or
// glued to digits, is not such a word (base64, hex, identifiers), and a run
// that starts before from is left to the window before. A word that goes on
// past to is counted whole.
func rareWordPairs[T text](s T, from, to int, limit int32) (pairs, rare int32) {
	n := len(s)
	i := from
	if i > 0 && byteFlags[s[i-1]]&(bLower|bUpper|bDigit) != 0 {
		// Inside a run: skip to its end, or to the window's, as a run
		// that goes on past it starts no word here. Skipping past the
		// window read a run as long as the text once per window.
		for i < to && byteFlags[s[i]]&(bLower|bUpper|bDigit) != 0 {
			i++
		}
	}
	for i < to && pairs < limit {
		if byteFlags[s[i]]&(bLower|bUpper|bDigit) == 0 {
			i++
			continue
		}
		j := i + 1
		var p, r int32
		for j < n && byteFlags[s[j]]&bLower != 0 {
			r += int32(rareBigram[s[j-1]&31] >> (s[j] & 31) & 1)
			p++
			j++
		}
		if byteFlags[s[i]]&bDigit == 0 && (j == n || byteFlags[s[j]]&(bLower|bUpper|bDigit) == 0) {
			pairs += p
			rare += r
			i = j
			continue
		}
		// Not a word: skip the rest of the run.
		for j < n && byteFlags[s[j]]&(bLower|bUpper|bDigit) != 0 {
			j++
		}
		i = j
	}
	return pairs, rare
}

// rareSample reports whether the sample of s (see rareSampleWindows) shows
// rare letter pairs often enough for the second pass.
func rareSample[T text](s T) bool {
	n := len(s)
	if n < rareSampleSkip {
		return false
	}
	w := rareSampleWindows + n/rareSampleStride
	var pairs, rare int32
	for k := range w {
		// The window starts in the middle of the k-th of w equal parts.
		a := (2*k + 1) * n / (2 * w)
		p, r := rareWordPairs(s, a, min(n, a+rareSampleBytes), rareSamplePairs)
		pairs += p
		rare += r
	}
	return rare >= rareSampleMin && rare*rareSampleShare >= pairs
}

// rareBigram holds, for each ASCII letter (indexed by its low five bits, so
// that a capital is its lower-case letter), the set of letters (bits by
// their low five bits) that rarely follow it inside the words of real text:
// the pairs that make up less than 1 in 10,000 of the pairs of letters
// inside the lower-case words of the fit corpus (internal/tokenfit/
// accuracy/testdata/corpus) without its random-data types (base64, ids, metrics, cjk_data,
// unusual). They are 315 of the 676 pairs and 0.6 percent of the pairs of
// that text, and random letters draw them 47 percent of the time. A doubled
// letter is never rare here, so that a word of one letter paired with
// itself counts nothing.
var rareBigram = [32]uint32{
	0,
	0x00028100, // a: hoq
	0x05d36980, // b: ghkmnpqtvwxz
	0x05ca4480, // c: gjnqsvwxz
	0x05c36500, // d: hjmnpqvwxz
	0x00000400, // e: j
	0x07c34d80, // f: ghjknpqvwxyz
	0x05c32c5c, // g: bcdfjkmpqvwxz
	0x07ca5cd8, // h: cdfgjklnqsvwxyz
	0x02a00100, // i: huwy
	0x07d77bdc, // j: bcdfghiklmnpqrtvwxyz
	0x07d7b55c, // k: bcdfhjlmopqrtvwxyz
	0x05876d8c, // l: bcghjkmnpqrwxz
	0x07c60dc8, // m: cfghjkqrvwxyz
	0x05860504, // n: bhjqrwxz
	0x00020100, // o: hq
	0x05c244c4, // p: bfgjnqvwxz
	0x07ddfffe, // q: abcdefghijklmnoprstvwxyz
	0x05000500, // r: hjxz
	0x05420c44, // s: bfjkqvxz
	0x04426c04, // t: bjkmnqvz
	0x02820d00, // u: hjkqwy
	0x07bf7ddc, // v: bcdfghjklmnpqrstuwxyz
	0x07733cdc, // w: bcdfgjklmpqtuvxyz
	0x06eefdd4, // x: bdfghjklmnoqrsuvwyz
	0x05e61ddc, // y: bcdfghjklqruvwxz
	0x01ff7ddc, // z: bcdfghjklmnpqrstuvwx
}
