package coretest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"image"
	_ "image/gif"  // register GIF for image.DecodeConfig
	_ "image/jpeg" // register JPEG for image.DecodeConfig
	_ "image/png"  // register PNG for image.DecodeConfig
	"math"
	"reflect"
	"strings"
	"sync"
	"unsafe"

	"github.com/tiktoken-go/tokenizer"
	"google.golang.org/genai"
)

// Counter is a ground-truth token counter: it says how many prompt tokens a
// provider would bill for a request, given as its contents and its
// configuration (system instruction and tool declarations; nil for none).
// Implementations must be safe for concurrent use.
//
// Counters in this package are additive over contents: counting a request is
// the sum of its system instruction, its tool declarations and each of its
// contents, so the tokens of a slice of contents can be counted on their own
// with [CountContents].
type Counter interface {
	Count(contents []*genai.Content, config *genai.GenerateContentConfig) int
}

// CountContents returns the ground-truth tokens of contents alone (no system
// instruction, no tools) under c. A nil counter counts 0.
func CountContents(c Counter, contents []*genai.Content) int {
	if c == nil || len(contents) == 0 {
		return 0
	}
	return c.Count(contents, nil)
}

// Framing costs of the serialized request. They model the JSON envelope a
// provider receives around each message, call and declaration.
const (
	// SeedMessageOverheadBytes is the per-content framing, in bytes, used by
	// [SeedCounter] (role and envelope of one message).
	SeedMessageOverheadBytes = 16
	// SeedElementOverheadBytes is the framing, in bytes, of one function
	// call, function response or function declaration in [SeedCounter].
	SeedElementOverheadBytes = 8
	// MessageOverheadTokens is the per-content framing used by
	// [TokenizerCounter], as in OpenAI's chat format
	// (<|start|>role<|message|>...<|end|>).
	MessageOverheadTokens = 4
	// ElementOverheadTokens is the framing of one function call, function
	// response or function declaration in [TokenizerCounter].
	ElementOverheadTokens = 3
	// ImageBaseTokens and ImageTileTokens are OpenAI's high-detail image
	// rule used by [TokenizerCounter]: 85 + 170 per 512x512 tile after the
	// image is scaled to fit 2048x2048 and its short side to 768.
	ImageBaseTokens = 85
	// ImageTileTokens is the cost of one 512x512 tile; see [ImageBaseTokens].
	ImageTileTokens = 170
	// BlobBytesPerToken is the rule [TokenizerCounter] uses for inline data
	// that is not a decodable image (PDFs, audio, unknown images): one token
	// per 4 raw bytes, roughly what the text extracted from a document costs,
	// plus [BlobBaseTokens].
	BlobBytesPerToken = 4
	// BlobBaseTokens is the fixed cost of one non-image blob.
	BlobBaseTokens = 8
)

// sink receives the serialized pieces of a request.
type sink interface {
	text(s string)
	blob(mime string, data []byte)
	frame(message bool)
}

// walkRequest feeds every piece a provider would be sent to s.
func walkRequest(contents []*genai.Content, cfg *genai.GenerateContentConfig, s sink) {
	if cfg != nil {
		walkContent(cfg.SystemInstruction, s)
		for _, t := range cfg.Tools {
			walkTool(t, s)
		}
	}
	for _, c := range contents {
		walkContent(c, s)
	}
}

func walkContent(c *genai.Content, s sink) {
	if c == nil {
		return
	}
	s.frame(true)
	for _, p := range c.Parts {
		walkPart(p, s)
	}
}

func walkPart(p *genai.Part, s sink) {
	if p == nil {
		return
	}
	if p.Text != "" {
		s.text(p.Text)
	}
	if fc := p.FunctionCall; fc != nil {
		s.frame(false)
		s.text(fc.Name)
		s.text(compactJSON(fc.Args))
	}
	if fr := p.FunctionResponse; fr != nil {
		s.frame(false)
		s.text(fr.Name)
		s.text(compactJSON(fr.Response))
		for _, rp := range fr.Parts {
			if rp != nil && rp.InlineData != nil {
				s.blob(rp.InlineData.MIMEType, rp.InlineData.Data)
			}
		}
	}
	if b := p.InlineData; b != nil {
		s.blob(b.MIMEType, b.Data)
	}
	if f := p.FileData; f != nil {
		s.text(f.FileURI)
		s.text(f.MIMEType)
	}
	if e := p.ExecutableCode; e != nil {
		s.text(e.Code)
	}
	if r := p.CodeExecutionResult; r != nil {
		s.text(r.Output)
	}
}

func walkTool(t *genai.Tool, s sink) {
	if t == nil {
		return
	}
	for _, fd := range t.FunctionDeclarations {
		if fd == nil {
			continue
		}
		s.frame(false)
		s.text(fd.Name)
		s.text(fd.Description)
		if fd.Parameters != nil {
			s.text(compactJSON(fd.Parameters))
		}
		if fd.ParametersJsonSchema != nil {
			s.text(compactJSON(fd.ParametersJsonSchema))
		}
		if fd.Response != nil {
			s.text(compactJSON(fd.Response))
		}
		if fd.ResponseJsonSchema != nil {
			s.text(compactJSON(fd.ResponseJsonSchema))
		}
	}
	rest := *t
	rest.FunctionDeclarations = nil
	if js := compactJSON(&rest); js != "{}" && js != "null" {
		s.text(js)
	}
}

// ---------------------------------------------------------------------------
// JSON serialization with an identity cache.
//
// ADK rebuilds every request from the session's events, deep-copying each
// content: the maps of call arguments and responses are new at every step,
// but their strings share the events' bytes. A payload is therefore keyed
// by its shape, its numbers and the addresses and lengths of its strings,
// which a walk reads without touching the strings' bytes; the cache entry
// keeps the payload alive, so no address it names is reused for other
// bytes while the entry exists. Serializing the whole history at every step
// was most of the stress matrix's time.

// jsonCacheLimit bounds the bytes held by the serialization cache; when it is
// exceeded the cache starts over.
const jsonCacheLimit = 256 << 20

// maxIdentityDepth bounds the identity walk; deeper (or cyclic) payloads are
// serialized every time, which only costs time.
const maxIdentityDepth = 64

type jsonEntry struct {
	keep any // keeps the keyed value, and the strings it names, alive
	s    string
}

var jsonCache = struct {
	sync.Mutex
	m     map[uint64]jsonEntry
	bytes int
}{m: map[uint64]jsonEntry{}}

var hashSeed = maphash.MakeSeed()

// compactJSON returns v as the compact JSON a provider would receive (no
// HTML escaping). JSON-like payloads are cached by identity (see above),
// other pointers by address.
func compactJSON(v any) string {
	if v == nil {
		return "null"
	}
	key, ok := payloadIdentity(v)
	if !ok {
		return marshalCompact(v)
	}
	jsonCache.Lock()
	e, hit := jsonCache.m[key]
	jsonCache.Unlock()
	if hit {
		return e.s
	}
	s := marshalCompact(v)
	jsonCache.Lock()
	if jsonCache.bytes+len(s) > jsonCacheLimit {
		jsonCache.m = map[uint64]jsonEntry{}
		jsonCache.bytes = 0
	}
	jsonCache.m[key] = jsonEntry{keep: v, s: s}
	jsonCache.bytes += len(s)
	jsonCache.Unlock()
	return s
}

// payloadIdentity keys v; ok is false for values it cannot key.
func payloadIdentity(v any) (uint64, bool) {
	switch v.(type) {
	case map[string]any, []any:
		return identityWalk(v, 0)
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return 0, false
	}
	// Pointers (tool schemas) are built once by their tool and not changed.
	return mixID(uint64(rv.Pointer()) ^ uint64(maphash.String(hashSeed, rv.Type().String()))), true
}

// mixID is the splitmix64 finalizer.
func mixID(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

func strID(s string) uint64 {
	return mixID(uint64(uintptr(unsafe.Pointer(unsafe.StringData(s))))*31 + uint64(len(s)))
}

// identityWalk keys a JSON-like value; map entries are combined
// order-independently.
func identityWalk(v any, depth int) (uint64, bool) {
	if depth > maxIdentityDepth {
		return 0, false
	}
	switch x := v.(type) {
	case nil:
		return 1, true
	case string:
		return mixID(2 ^ strID(x)), true
	case bool:
		if x {
			return 3, true
		}
		return 4, true
	case float64:
		return mixID(5 ^ math.Float64bits(x)), true
	case int:
		return mixID(6 ^ uint64(x)), true
	case int64:
		return mixID(7 ^ uint64(x)), true
	case map[string]any:
		sum := uint64(len(x))
		for k, val := range x {
			h, ok := identityWalk(val, depth+1)
			if !ok {
				return 0, false
			}
			sum += mixID(strID(k) ^ h*0x9e3779b97f4a7c15)
		}
		return mixID(8 ^ sum), true
	case []any:
		h := uint64(9) ^ uint64(len(x))
		for _, val := range x {
			e, ok := identityWalk(val, depth+1)
			if !ok {
				return 0, false
			}
			h = mixID(h ^ e)
		}
		return h, true
	}
	return 0, false
}

func marshalCompact(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Unserializable values (a cycle, a channel) are sent by no
		// provider; count the error so they still cost something, without
		// walking them again.
		return fmt.Sprintf("<unserializable %T: %v>", v, err)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// ---------------------------------------------------------------------------
// SeedCounter.

type seedCounter struct{ ratio float64 }

// SeedCounter returns the seeds' ground truth: the serialized size of the
// request in bytes, divided by 4, times ratio.
//
// The serialized size is the sum of: text parts; function call name and
// compact JSON arguments; function response name and compact JSON payload;
// inline data as the length of its base64 encoding plus its MIME type; file
// data URI and MIME type; the system instruction; tool declarations (name,
// description, compact JSON schemas); plus [SeedMessageOverheadBytes] per
// content and [SeedElementOverheadBytes] per call, response and declaration.
// A ratio <= 0 counts as 1.
func SeedCounter(ratio float64) Counter {
	if ratio <= 0 || math.IsNaN(ratio) || math.IsInf(ratio, 0) {
		ratio = 1
	}
	return seedCounter{ratio: ratio}
}

type byteSink struct{ n int }

func (b *byteSink) text(s string) { b.n += len(s) }
func (b *byteSink) blob(mime string, data []byte) {
	b.n += len(mime) + base64.StdEncoding.EncodedLen(len(data))
}
func (b *byteSink) frame(message bool) {
	if message {
		b.n += SeedMessageOverheadBytes
	} else {
		b.n += SeedElementOverheadBytes
	}
}

// SerializedBytes returns the serialized size of a request (its contents
// and configuration) as [SeedCounter] defines it.
func SerializedBytes(contents []*genai.Content, config *genai.GenerateContentConfig) int {
	var b byteSink
	walkRequest(contents, config, &b)
	return b.n
}

// Count implements [Counter].
func (c seedCounter) Count(contents []*genai.Content, config *genai.GenerateContentConfig) int {
	return int(float64(SerializedBytes(contents, config)) / 4 * c.ratio)
}

// String names the counter.
func (c seedCounter) String() string { return fmt.Sprintf("SeedCounter(%.2f)", c.ratio) }

// ---------------------------------------------------------------------------
// TokenizerCounter.

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

func (t *tokenSink) text(s string)                 { t.n += O200kCount(s) }
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
