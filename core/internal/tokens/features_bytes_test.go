package tokens

import (
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDecodeRune(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		wantRune rune
		wantSize int
	}{
		{"ASCII", "a", 'a', 1},
		{"two bytes", "é", 'é', 2},
		{"three bytes", "你", '你', 3},
		{"four bytes", "🌍", '🌍', 4},
		{"the last code point", "\U0010FFFF", 0x10FFFF, 4},
		{"a lone continuation byte", "\x80", -1, 1},
		{"an overlong two-byte form", "\xc1\xa0", -1, 1},
		{"an overlong three-byte form of 'à'", "\xe0\x83\xa0", -1, 1},
		{"the first three-byte form", "\xe0\xa0\x80", 0x800, 3},
		{"an overlong four-byte form", "\xf0\x8f\xbf\xbf", -1, 1},
		{"the first four-byte form", "\xf0\x90\x80\x80", 0x10000, 4},
		{"past U+10FFFF", "\xf4\x90\x80\x80", -1, 1},
		{"a lead byte no encoder writes", "\xf5\x80\x80\x80", -1, 1},
		{"a truncated sequence", "\xe4\xb8", -1, 1},
		{"a surrogate, kept as documented", "\xed\xa0\x80", 0xD800, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, size := decodeRune(tt.in, 0)
			assert.Equal(t, tt.wantRune, r)
			assert.Equal(t, tt.wantSize, size)
			r, size = decodeRune([]byte(tt.in), 0)
			assert.Equal(t, tt.wantRune, r, "as a byte slice")
			assert.Equal(t, tt.wantSize, size, "as a byte slice")
		})
	}
}

// TestDecodeRune_AgreesWithUTF8 compares the decoder with unicode/utf8 on
// every lead and second byte, with valid, boundary and invalid bytes after
// them: they agree on every sequence but the surrogates, which the decoder
// keeps (they only steer an estimate).
func TestDecodeRune_AgreesWithUTF8(t *testing.T) {
	tails := []string{"", "\x80", "\xbf", "A", "\x80\x80", "\xbf\xbf", "\x80A"}
	checked := 0
	for c0 := range 256 {
		for c1 := range 256 {
			for _, tail := range tails {
				s := string([]byte{byte(c0), byte(c1)}) + tail
				r, size := decodeRune(s, 0)
				want, wantSize := utf8.DecodeRuneInString(s)
				switch {
				case want == utf8.RuneError && wantSize == 1 && r >= 0xD800 && r <= 0xDFFF:
					require.Equal(t, 3, size, "%q: a surrogate takes its three bytes", s)
				case want == utf8.RuneError && wantSize == 1:
					require.Equal(t, rune(-1), r, "%q: invalid for unicode/utf8", s)
					require.Equal(t, 1, size, "%q", s)
				default:
					require.Equal(t, want, r, "%q", s)
					require.Equal(t, wantSize, size, "%q", s)
				}
				checked++
			}
		}
	}
	assert.Equal(t, 256*256*len(tails), checked)
}

// A word never takes an overlong form for a letter: E0 83 A0 (an overlong
// 'à') after digits counts as three invalid bytes, and no accent.
func TestCount_OverlongFormIsNotALetter(t *testing.T) {
	f := Count("0000000000\xe0\x83\xa0")
	assert.Equal(t, int32(3), f[fCtrl])
	assert.Zero(t, f[fAccent])
	assert.Zero(t, f[fAccentRare])
	assert.Equal(t, f, Count("0000000000\x80\x80\x80"), "the same counts as three lone continuation bytes")
}
