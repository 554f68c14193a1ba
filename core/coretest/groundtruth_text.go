package coretest

import (
	"bytes"
	"fmt"
	"image"
	"math"
	"strings"

	"google.golang.org/genai"
)

// A tokenizer's ground truth: its count of a request's serialized pieces,
// times a provider's factor (TextCounter).

type textCounter struct {
	name   string
	count  func(text string) int
	factor float64
}

// TextCounter returns a ground truth based on a tokenizer's count of a text
// (count, safe for concurrent use; the exact o200k_base one is in package
// o200k): the tokens of the same serialized pieces [SeedCounter] measures,
// plus [MessageOverheadTokens] per content and [ElementOverheadTokens] per
// call, response and declaration, times factor (a provider factor: 1.0 for
// GPT-like models, about 1.2 for Claude). Inline images are counted from
// their dimensions with OpenAI's high-detail rule ([ImageTokens]), never from
// their bytes; other blobs with [BlobBytesPerToken]. A factor <= 0 counts
// as 1, a nil count as [TextTokens]. The counter prints as name(factor).
func TextCounter(name string, count func(text string) int, factor float64) Counter {
	if factor <= 0 || math.IsNaN(factor) || math.IsInf(factor, 0) {
		factor = 1
	}
	if count == nil {
		count = TextTokens
	}
	return textCounter{name: name, count: count, factor: factor}
}

// TextTokens is a tokenizer's count of s estimated from its length: one
// token per [BlobBytesPerToken] bytes, rounded up. The [GeminiServer]
// answers the tokens of its replies with it.
func TextTokens(s string) int {
	return (len(s) + BlobBytesPerToken - 1) / BlobBytesPerToken
}

type tokenSink struct {
	n     int
	count func(string) int
}

func (t *tokenSink) text(s string) {
	if s != "" {
		t.n += t.count(s)
	}
}

func (t *tokenSink) blob(mime string, data []byte) { t.n += BlobTokens(mime, data) }

func (t *tokenSink) frame(message bool) {
	if message {
		t.n += MessageOverheadTokens
	} else {
		t.n += ElementOverheadTokens
	}
}

// Count implements [Counter].
func (c textCounter) Count(contents []*genai.Content, config *genai.GenerateContentConfig) int {
	t := tokenSink{count: c.count}
	walkRequest(contents, config, &t)
	return int(math.Round(float64(t.n) * c.factor))
}

// String names the counter.
func (c textCounter) String() string { return fmt.Sprintf("%s(%.2f)", c.name, c.factor) }

// BlobTokens returns what [TextCounter] charges for one inline blob:
// [ImageTokens] for images whose dimensions can be decoded, otherwise
// [BlobBaseTokens] + len(data)/[BlobBytesPerToken].
func BlobTokens(mime string, data []byte) int {
	if strings.HasPrefix(mime, "image/") || mime == "" {
		if cfg, _, err := image.DecodeConfig(bytes.NewReader(data)); err == nil {
			return ImageTokens(cfg.Width, cfg.Height)
		}
	}
	return BlobBaseTokens + (len(data)+BlobBytesPerToken-1)/BlobBytesPerToken
}

// ImageTokens is OpenAI's high-detail image rule: scale the image to fit in
// 2048x2048, then so its shortest side is at most 768, and charge
// [ImageBaseTokens] + [ImageTileTokens] per 512x512 tile. Non-positive
// dimensions cost [ImageBaseTokens].
func ImageTokens(width, height int) int {
	if width <= 0 || height <= 0 {
		return ImageBaseTokens
	}
	w, h := float64(width), float64(height)
	if m := math.Max(w, h); m > 2048 {
		w, h = w*2048/m, h*2048/m
	}
	if m := math.Min(w, h); m > 768 {
		w, h = w*768/m, h*768/m
	}
	tiles := int(math.Ceil(w/512)) * int(math.Ceil(h/512))
	return ImageBaseTokens + ImageTileTokens*tiles
}
