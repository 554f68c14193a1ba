package coretest

import (
	"bytes"
	"fmt"
	"hash/maphash"
	"image"
	"math"
	"strings"
	"sync"

	"github.com/tiktoken-go/tokenizer"
	"google.golang.org/genai"
)

// The exact ground truth: the o200k tokenizer's count of a request, times a
// provider's factor (TokenizerCounter).

var o200k = sync.OnceValues(func() (tokenizer.Codec, error) {
	return tokenizer.Get(tokenizer.O200kBase)
})

// tokenCacheLimit bounds the text bytes whose counts are cached; when it is
// exceeded the cache starts over.
const tokenCacheLimit = 512 << 20

type textKey struct {
	h uint64
	n int
}

// tokenCache caches o200k counts per distinct string for the whole process:
// the matrix generates the same payloads in many runs.
var tokenCache = struct {
	sync.Mutex
	m     map[textKey]int
	bytes int
}{m: map[textKey]int{}}

// O200kCount returns the exact o200k_base token count of s. Counts are cached
// per distinct string. Text the tokenizer rejects is counted as len/4.
func O200kCount(s string) int {
	if s == "" {
		return 0
	}
	key := textKey{h: maphash.String(hashSeed, s), n: len(s)}
	tokenCache.Lock()
	n, ok := tokenCache.m[key]
	tokenCache.Unlock()
	if ok {
		return n
	}
	n = countChunked(s)
	tokenCache.Lock()
	if tokenCache.bytes+len(s) > tokenCacheLimit {
		tokenCache.m = map[textKey]int{}
		tokenCache.bytes = 0
	}
	tokenCache.m[key] = n
	tokenCache.bytes += len(s)
	tokenCache.Unlock()
	return n
}

// chunkSize is the size above which text is split before tokenization, at
// places where o200k's pre-tokenizer always starts a new piece, so the sum
// of the chunk counts equals the count of the whole text.
const chunkSize = 16 << 10

func countChunked(s string) int {
	codec, err := o200k()
	if err != nil {
		return (len(s) + 3) / 4
	}
	total := 0
	for len(s) > 0 {
		cut := len(s)
		if len(s) > chunkSize {
			cut = safeCut(s, chunkSize)
		}
		n, err := codec.Count(s[:cut])
		if err != nil {
			n = (cut + 3) / 4
		}
		total += n
		s = s[cut:]
	}
	return total
}

// safeCut returns an index >= from where s can be split without changing the
// o200k tokenization: right after a newline that is followed by a letter or
// digit (the newline run ends there and the next piece starts there), or
// before a single space between two ASCII letters (the word before ends
// there and " word" is one piece). If no such place exists, it returns
// len(s).
func safeCut(s string, from int) int {
	for i := from; i < len(s)-1; i++ {
		if s[i] == '\n' && isASCIIAlnum(s[i+1]) {
			return i + 1
		}
		if s[i] == ' ' && i > 0 && isASCIILetter(s[i-1]) && isASCIILetter(s[i+1]) {
			return i
		}
	}
	return len(s)
}

func isASCIILetter(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }

func isASCIIAlnum(c byte) bool {
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

type tokenizerCounter struct{ factor float64 }

// TokenizerCounter returns a ground truth based on the exact o200k_base
// tokenizer: the tokens of the same serialized pieces [SeedCounter] measures,
// plus [MessageOverheadTokens] per content and [ElementOverheadTokens] per
// call, response and declaration, times factor (a provider factor: 1.0 for
// GPT-like models, about 1.2 for Claude). Inline images are counted from
// their dimensions with OpenAI's high-detail rule ([ImageTokens]), never from
// their bytes; other blobs with [BlobBytesPerToken]. A factor <= 0 counts
// as 1.
func TokenizerCounter(factor float64) Counter {
	if factor <= 0 || math.IsNaN(factor) || math.IsInf(factor, 0) {
		factor = 1
	}
	return tokenizerCounter{factor: factor}
}

type tokenSink struct{ n int }

func (t *tokenSink) text(s string) { t.n += O200kCount(s) }

func (t *tokenSink) blob(mime string, data []byte) { t.n += BlobTokens(mime, data) }

func (t *tokenSink) frame(message bool) {
	if message {
		t.n += MessageOverheadTokens
	} else {
		t.n += ElementOverheadTokens
	}
}

// Count implements [Counter].
func (c tokenizerCounter) Count(contents []*genai.Content, config *genai.GenerateContentConfig) int {
	var t tokenSink
	walkRequest(contents, config, &t)
	return int(math.Round(float64(t.n) * c.factor))
}

// String names the counter.
func (c tokenizerCounter) String() string { return fmt.Sprintf("TokenizerCounter(%.2f)", c.factor) }

// BlobTokens returns what [TokenizerCounter] charges for one inline blob:
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
