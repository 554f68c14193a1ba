package tokens

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestImage_HugeSizesSaturate: image sizes come from headers anyone can
// write. Sizes near 2^31 (and up to the largest int) never overflow to a
// negative or small count: each family's count is at least that of an
// ordinary large image when it is square (Claude's count of a very thin
// image is rightly small: it is scaled to 1568 px on its long side), and at
// most maxMediaTokens.
func TestImage_HugeSizesSaturate(t *testing.T) {
	sizes := []struct {
		name string
		w, h int
	}{
		{"2^31-1 square", math.MaxInt32, math.MaxInt32},
		{"2^31 square", 1 << 31, 1 << 31},
		{"largest int square", math.MaxInt, math.MaxInt},
		{"largest int wide, one pixel high", math.MaxInt, 1},
		{"one pixel wide, 2^31-1 high", 1, math.MaxInt32},
		{"2^31-1 wide, 4000 high", math.MaxInt32, 4000},
	}
	for _, f := range []Family{O200k, Gemma3, Claude} {
		e := New(f)
		ordinary := e.Image(4000, 3000)
		for _, sz := range sizes {
			t.Run(f.String()+"/"+sz.name, func(t *testing.T) {
				n := e.Image(sz.w, sz.h)
				assert.Positive(t, n)
				assert.LessOrEqual(t, n, maxMediaTokens)
				if sz.w == sz.h {
					assert.GreaterOrEqual(t, n, ordinary, "a larger image is never cheaper")
				}
			})
		}
	}
}

func TestImage_GeminiTilesSaturate(t *testing.T) {
	e := New(Gemma3)
	tests := []struct {
		name string
		w, h int
		want int
	}{
		{"small", 384, 384, 258},
		{"one tile over", 769, 768, 2 * 258},
		{"2^31-1 square saturates", math.MaxInt32, math.MaxInt32, maxMediaTokens},
		{"largest int saturates", math.MaxInt, math.MaxInt, maxMediaTokens},
		{"thin and long", math.MaxInt32, 1, 258 * ((math.MaxInt32 + 767) / 768)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, e.Image(tt.w, tt.h))
		})
	}
}

func TestSaturatingHelpers(t *testing.T) {
	tests := []struct {
		name string
		got  int
		want int
	}{
		{"mul", satMul(258, 4), 1032},
		{"mul overflow", satMul(math.MaxInt, 3), maxMediaTokens},
		{"mul past the cap", satMul(1<<20, 1<<20), maxMediaTokens},
		{"mul negative", satMul(-5, 3), 0},
		{"add", satAdd(85, 170), 255},
		{"add overflow", satAdd(math.MaxInt, math.MaxInt), maxMediaTokens},
		{"ceil", satCeil(2.1), 3},
		{"ceil NaN", satCeil(math.NaN()), 0},
		{"ceil +Inf", satCeil(math.Inf(1)), maxMediaTokens},
		{"ceil huge", satCeil(1e300), maxMediaTokens},
		{"ceilDiv largest int", ceilDiv(math.MaxInt, 768), math.MaxInt/768 + 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { assert.Equal(t, tt.want, tt.got) })
	}
}

// craftedPNG is a PNG signature and IHDR chunk claiming w x h pixels.
func craftedPNG(w, h uint32) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := make([]byte, 17)
	copy(ihdr, "IHDR")
	binary.BigEndian.PutUint32(ihdr[4:], w)
	binary.BigEndian.PutUint32(ihdr[8:], h)
	ihdr[12], ihdr[13] = 8, 6 // 8-bit RGBA
	_ = binary.Write(&b, binary.BigEndian, uint32(13))
	b.Write(ihdr)
	_ = binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(ihdr))
	return b.Bytes()
}

// craftedGIF is a GIF header claiming w x h pixels.
func craftedGIF(w, h uint16) []byte {
	b := []byte("GIF89a")
	b = binary.LittleEndian.AppendUint16(b, w)
	b = binary.LittleEndian.AppendUint16(b, h)
	return append(b, 0, 0, 0, ',', 0, 0, 0, 0)
}

// craftedJPEG is a JPEG with a baseline SOF0 segment claiming w x h pixels.
func craftedJPEG(w, h uint16) []byte {
	b := []byte{0xFF, 0xD8, 0xFF, 0xC0, 0, 11, 8}
	b = binary.BigEndian.AppendUint16(b, h)
	b = binary.BigEndian.AppendUint16(b, w)
	b = append(b, 1, 1, 0x11, 0)
	return append(b, 0xFF, 0xDA, 0, 2) // start of scan: the header ends
}

// TestBlob_CraftedHeadersClaimingHugeSizes: an inline image whose header
// claims the largest size its format allows is counted as a large image,
// never as a negative or small one.
func TestBlob_CraftedHeadersClaimingHugeSizes(t *testing.T) {
	tests := []struct {
		name string
		mime string
		data []byte
		w, h int
	}{
		{"PNG 2^31-1 square", "image/png", craftedPNG(math.MaxInt32, math.MaxInt32), math.MaxInt32, math.MaxInt32},
		{"PNG 2^31-1 by 1", "image/png", craftedPNG(math.MaxInt32, 1), math.MaxInt32, 1},
		{"GIF 65535 square", "image/gif", craftedGIF(65535, 65535), 65535, 65535},
		{"JPEG 65535 square", "image/jpeg", craftedJPEG(65535, 65535), 65535, 65535},
	}
	for _, f := range []Family{O200k, Gemma3, Claude} {
		e := New(f)
		for _, tt := range tests {
			t.Run(f.String()+"/"+tt.name, func(t *testing.T) {
				w, h, ok := imageSize(tt.data)
				if assert.True(t, ok, "the header is read") {
					assert.Equal(t, [2]int{tt.w, tt.h}, [2]int{w, h})
				}
				n := e.Blob(tt.mime, tt.data)
				assert.Equal(t, e.Image(tt.w, tt.h), n)
				if tt.w == tt.h {
					assert.GreaterOrEqual(t, n, e.Image(1024, 1024))
				}
				assert.LessOrEqual(t, n, maxMediaTokens)
			})
		}
	}
}

// TestBlob_CraftedWAVDurationSaturates: a WAV header claiming four billion
// bytes at one byte a second is a very long clip, not an overflow.
func TestBlob_CraftedWAVDurationSaturates(t *testing.T) {
	wav := make([]byte, 44)
	copy(wav, "RIFF")
	copy(wav[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(wav[16:], 16)
	binary.LittleEndian.PutUint32(wav[28:], 1) // byte rate
	copy(wav[36:], "data")
	binary.LittleEndian.PutUint32(wav[40:], math.MaxUint32)
	for _, f := range []Family{O200k, Gemma3, Claude} {
		n := New(f).Blob("audio/wav", wav)
		assert.Greater(t, n, 1_000_000, f.String())
		assert.LessOrEqual(t, n, maxMediaTokens, f.String())
	}
}
