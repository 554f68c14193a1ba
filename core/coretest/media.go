package coretest

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"math"
	"sync"
)

// Media: inline PNG images and PDF documents of a given size, deterministic
// per seed.

// PNG returns a deterministic PNG image of the given dimensions, a smooth
// gradient overlaid with noise so that it compresses poorly and is large
// (roughly 2 bytes per pixel). Non-positive dimensions are treated as 1.
func PNG(width, height int, seed int64) []byte {
	width, height = max(width, 1), max(height, 1)
	r := newRand(seed, uint64(width)<<20|uint64(height))
	img := image.NewNRGBA(image.Rect(0, 0, width, height))
	for y := 0; y < height; y++ {
		for x := 0; x < width; x++ {
			n := r.Uint32()
			img.SetNRGBA(x, y, color.NRGBA{
				R: uint8(x*255/width) ^ uint8(n&0x3f),
				G: uint8(y*255/height) ^ uint8((n>>8)&0x3f),
				B: uint8((x+y)*127/(width+height)) ^ uint8((n>>16)&0x3f),
				A: 255,
			})
		}
	}
	var buf bytes.Buffer
	_ = png.Encode(&buf, img) // encoding to memory cannot fail
	return buf.Bytes()
}

type pngKey struct {
	size int
	seed int64
}

var pngCache sync.Map

// PNGOfSize returns a deterministic PNG of about size bytes (within about
// 10%), with a 4:3 aspect ratio. Results are cached; callers must not modify
// the returned slice.
func PNGOfSize(size int, seed int64) []byte {
	size = max(size, 100)
	if v, ok := pngCache.Load(pngKey{size, seed}); ok {
		return v.([]byte)
	}
	// First guess at ~2.2 bytes per pixel, then correct once or twice.
	px := float64(size) / 2.2
	var out []byte
	for range 3 {
		w := max(int(math.Sqrt(px*4/3)), 1)
		h := max(w*3/4, 1)
		out = PNG(w, h, seed)
		ratio := float64(size) / float64(len(out))
		if math.Abs(ratio-1) < 0.05 {
			break
		}
		px = float64(w*h) * ratio
	}
	pngCache.Store(pngKey{size, seed}, out)
	return out
}

// PDF returns deterministic bytes of exactly size bytes (at least a minimal
// header) shaped like a PDF document with one compressed-looking stream.
func PDF(size int, seed int64) []byte {
	head := "%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n2 0 obj\n<< /Type /Pages /Kids [3 0 R] /Count 1 >>\nendobj\n3 0 obj\n<< /Length 0 /Filter /FlateDecode >>\nstream\n"
	tail := "\nendstream\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n"
	body := max(size-len(head)-len(tail), 0)
	out := make([]byte, 0, len(head)+body+len(tail))
	out = append(out, head...)
	raw := make([]byte, body)
	fillRandom(newRand(seed, 0x5044), raw)
	out = append(out, raw...)
	return append(out, tail...)
}
