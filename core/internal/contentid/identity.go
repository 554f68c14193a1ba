// Package contentid is a content's identity (ARCHITECTURE.md, Counting),
// and it imports nothing of the engine: a tape record and the count
// cache's key (strings by address, valid while they are kept alive), the
// fingerprint and the chain hash (by value, the same in every process).
// All come from walkContent, the one walk over every field a provider is
// sent; identity_test.go fails on any genai field it misses.
package contentid

import (
	"encoding/binary"
	"math"

	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/sat"
)

// sink is where walkContent sends a content's identity.
type sink uint8

const (
	sinkKey    sink = iota // by address into a Keyer: the count cache's key
	sinkHash               // by value into FNV-64a: the fingerprint
	sinkChain              // sinkHash, long strings and blobs through crcFold (ChainHash)
	sinkSize               // what a record would retain, blobs' bytes too (Size)
	sinkRecord             // appended to a Tape
	sinkVerify             // compared with a Tape
)

// identity receives a content's identity from walkContent: one type with a
// mode, rather than an interface, keeps the hot path's calls direct.
type identity struct {
	mode sink
	size int
	k    Keyer  // sinkKey
	h    uint64 // FNV-64a state: sinkHash, sinkChain
	tape *Tape  // sinkRecord
	v    *Check // sinkVerify: the records to compare
	at   Mark   // sinkVerify: the next record to compare
	bad  bool   // sinkVerify: a value differed
}

// FNV-64a, as hash/fnv computes it, without its allocation.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// mark names a field or a part's kind. Inline data and files were
// fingerprinted without one: their marks start with NUL, which the
// fingerprint skips, so persisted watermarks match.
func (s *identity) mark(name string) {
	switch s.mode {
	case sinkHash, sinkChain:
		if name[0] != 0 {
			s.fpStr(name)
		}
	default:
		s.word(StringHash(0, name))
	}
}

// str adds a string: by address on a tape or key, else by value.
func (s *identity) str(x string) {
	if s.mode == sinkHash || s.mode == sinkChain {
		s.fpStr(x)
	} else {
		s.tapeStr(x)
	}
}

// blob adds bytes by value: raw in the fingerprint (as it always hashed
// them), as crcFold on a tape or key (ADK copies them for every call).
func (s *identity) blob(b []byte) {
	switch s.mode {
	case sinkHash:
		s.write(b)
	case sinkChain:
		if len(b) >= fastHashBytes {
			s.h = crcFold(s.h, b)
		} else {
			s.write(b)
		}
	case sinkSize:
		s.size = sat.Add(s.size, len(b))
	default:
		s.word(crcFold(fnvOffset, b))
	}
}

// num adds a number, a boolean or a length.
func (s *identity) num(n uint64) {
	switch s.mode {
	case sinkHash, sinkChain:
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], n)
		s.write(b[:])
	default:
		s.word(n)
	}
}

// value adds a JSON-like payload; false when a tape cannot record it.
func (s *identity) value(m map[string]any) bool {
	if s.mode == sinkHash || s.mode == sinkChain {
		s.fpValue(m)
		return true
	}
	return s.tapeValue(m)
}

// optStr adds a string field that is sent only when set.
func (s *identity) optStr(m, x string) {
	if x != "" {
		s.mark(m)
		s.str(x)
	}
}

// optBool adds an optional boolean field.
func (s *identity) optBool(m string, b *bool) {
	if b != nil {
		s.mark(m)
		var bit uint64
		if *b {
			bit = 1
		}
		s.num(bit)
	}
}

// optFloat adds an optional number field.
func (s *identity) optFloat(m string, f *float64) {
	if f != nil {
		s.mark(m)
		s.num(math.Float64bits(*f))
	}
}

// walkContent gives s every field of c that a provider is sent; false when
// s cannot identify a value. Fields come in the order the fingerprint
// always hashed them, those added since after it, each only when set, so
// persisted fingerprints still match.
func walkContent(c *genai.Content, s *identity) bool {
	s.str(c.Role)
	for _, p := range c.Parts {
		if p != nil && !walkPart(p, s) {
			return false
		}
	}
	return true
}

// walkPart gives s every field of p, in a fixed order.
func walkPart(p *genai.Part, s *identity) bool {
	s.str(p.Text)
	if p.Thought {
		s.mark("<thought>")
	}
	if fc := p.FunctionCall; fc != nil && !walkCall(fc, s) {
		return false
	}
	if fr := p.FunctionResponse; fr != nil && !walkResponse(fr, s) {
		return false
	}
	walkMedia(p, s)
	return walkToolParts(p, s)
}

// walkCall gives s a function call, its streamed arguments included.
func walkCall(fc *genai.FunctionCall, s *identity) bool {
	s.mark("<call>")
	s.str(fc.Name)
	if !s.value(fc.Args) {
		return false
	}
	s.optStr("<call-id>", fc.ID)
	s.optBool("<call-continue>", fc.WillContinue)
	for _, a := range fc.PartialArgs {
		s.mark("<partial-arg>")
		if a == nil {
			continue
		}
		s.optBool("<arg-bool>", a.BoolValue)
		s.optStr("<arg-path>", a.JsonPath)
		s.optStr("<arg-null>", a.NULLValue)
		s.optFloat("<arg-number>", a.NumberValue)
		s.optStr("<arg-string>", a.StringValue)
		s.optBool("<arg-continue>", a.WillContinue)
	}
	return true
}

// walkResponse gives s a function response, its images and files included.
func walkResponse(fr *genai.FunctionResponse, s *identity) bool {
	s.mark("<response>")
	s.str(fr.Name)
	if !s.value(fr.Response) {
		return false
	}
	s.optStr("<response-id>", fr.ID)
	s.optBool("<response-continue>", fr.WillContinue)
	s.optStr("<scheduling>", string(fr.Scheduling))
	for _, rp := range fr.Parts {
		s.mark("<response-part>")
		if rp == nil {
			continue
		}
		if d := rp.InlineData; d != nil {
			s.mark("<response-inline>")
			s.str(d.MIMEType)
			s.num(uint64(len(d.Data)))
			s.blob(d.Data)
			s.optStr("<display-name>", d.DisplayName)
		}
		if f := rp.FileData; f != nil {
			s.mark("<response-file>")
			s.str(f.FileURI)
			s.str(f.MIMEType)
			s.optStr("<display-name>", f.DisplayName)
		}
	}
	return true
}

// walkMedia gives s p's media, code, signature and video fields.
func walkMedia(p *genai.Part, s *identity) {
	if d := p.InlineData; d != nil {
		s.mark("\x00inline")
		s.str(d.MIMEType)
		s.blob(d.Data)
		s.optStr("<display-name>", d.DisplayName)
	}
	if f := p.FileData; f != nil {
		s.mark("\x00file")
		s.str(f.FileURI)
		s.optStr("<mime>", f.MIMEType)
		s.optStr("<display-name>", f.DisplayName)
	}
	if x := p.ExecutableCode; x != nil {
		s.mark("<code>")
		s.str(x.Code)
		s.optStr("<language>", string(x.Language))
		s.optStr("<code-id>", x.ID)
	}
	if r := p.CodeExecutionResult; r != nil {
		s.mark("<result>")
		s.str(r.Output)
		s.optStr("<outcome>", string(r.Outcome))
		s.optStr("<code-id>", r.ID)
	}
	if len(p.ThoughtSignature) > 0 {
		s.mark("<signature>")
		s.num(uint64(len(p.ThoughtSignature)))
		s.blob(p.ThoughtSignature)
	}
	if v := p.VideoMetadata; v != nil {
		s.mark("<video>")
		s.num(uint64(v.StartOffset))
		s.num(uint64(v.EndOffset))
		s.optFloat("<fps>", v.FPS)
	}
	if r := p.MediaResolution; r != nil {
		s.mark("<media-resolution>")
		s.optStr("<level>", string(r.Level))
		if r.NumTokens != nil {
			s.mark("<num-tokens>")
			s.num(uint64(*r.NumTokens))
		}
	}
}

// walkToolParts gives s p's built-in tool call and response and metadata.
func walkToolParts(p *genai.Part, s *identity) bool {
	if tc := p.ToolCall; tc != nil {
		s.mark("<tool-call>")
		s.str(string(tc.ToolType))
		if !s.value(tc.Args) {
			return false
		}
		s.optStr("<tool-id>", tc.ID)
	}
	if tr := p.ToolResponse; tr != nil {
		s.mark("<tool-response>")
		s.str(string(tr.ToolType))
		if !s.value(tr.Response) {
			return false
		}
		s.optStr("<tool-id>", tr.ID)
	}
	if len(p.PartMetadata) > 0 {
		s.mark("<metadata>")
		if !s.value(p.PartMetadata) {
			return false
		}
	}
	return true
}
