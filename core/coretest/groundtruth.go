package coretest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/maphash"
	_ "image/gif"  // register GIF for image.DecodeConfig
	_ "image/jpeg" // register JPEG for image.DecodeConfig
	_ "image/png"  // register PNG for image.DecodeConfig
	"math"
	"reflect"
	"strings"
	"sync"
	"unsafe"

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
	// [TextCounter], as in OpenAI's chat format
	// (<|start|>role<|message|>...<|end|>).
	MessageOverheadTokens = 4
	// ElementOverheadTokens is the framing of one function call, function
	// response or function declaration in [TextCounter].
	ElementOverheadTokens = 3
	// ImageBaseTokens and ImageTileTokens are OpenAI's high-detail image
	// rule used by [TextCounter]: 85 + 170 per 512x512 tile after the
	// image is scaled to fit 2048x2048 and its short side to 768.
	ImageBaseTokens = 85
	// ImageTileTokens is the cost of one 512x512 tile; see [ImageBaseTokens].
	ImageTileTokens = 170
	// BlobBytesPerToken is the rule [TextCounter] uses for inline data
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
