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
// script (Greek, Cyrillic, Arabic, ...) of a text whose random-looking words
// are counted: prose in one of those scripts that quotes an English term has
// few runes of the other, and a text that mixes them word by word has far
// more.
const mixedScriptBytes = 64

// Random-looking words: a word of randomWordMin lower-case ASCII letters or
// more with randomConsonants consonants in a row. Byte-pair vocabularies
// hold few pieces of such strings, and Gemma 3 splits them into pieces of
// one to three letters, where the word features count one or two: "gwvmmzw"
// is one word piece and five Gemma-3 tokens. English has few such runs
// ("strengths", "angstrom"), random letters many: three consonants in four
// letters. vowels holds the bits of a, e, i, o, u and y, by letter from
// 'a'.
const (
	randomWordMin    = 4
	randomConsonants = 4
	vowels           = 1 | 1<<('e'-'a') | 1<<('i'-'a') | 1<<('o'-'a') | 1<<('u'-'a') | 1<<('y'-'a')
)

// randomWordLetters returns the letters of the random-looking words of s:
// maximal runs of lower-case ASCII letters, of randomWordMin letters or
// more, with randomConsonants consonants in a row.
func randomWordLetters[T text](s T) int32 {
	var total int32
	n := len(s)
	for i := 0; i < n; {
		if byteFlags[s[i]]&bLower == 0 {
			i++
			continue
		}
		j, run, random := i, 0, false
		for ; j < n && byteFlags[s[j]]&bLower != 0; j++ {
			run = (run + 1) * int(1^vowels>>(s[j]-'a')&1)
			random = random || run >= randomConsonants
		}
		if random && j-i >= randomWordMin {
			total += int32(j - i)
		}
		i = j
	}
	return total
}
