package tokens

// Bytes: eight bytes at a time, the masks that classify them, and rune
// decoding without allocation.

// text is the set of types the counter runs on.
type text interface{ ~string | ~[]byte }

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
// sequences yield (-1, 1), and so do overlong forms and code points past
// U+10FFFF, which no encoder writes: a word must not take E0 83 A0 for 'à'.
// It does not reject surrogates: the result only steers an estimate.
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
	p := uint8(0)
	for c := range punctIndex {
		punctIndex[c] = 0xFF
		if byteKind[c] == kPunct && c < 0x80 {
			punctIndex[c] = p
			p++
		}
	}
	fillShortPunct()
}
