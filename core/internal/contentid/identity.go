// Package contentid is a content's identity (ARCHITECTURE.md, Counting),
// and it imports nothing of the engine. A content has two identities: the
// count cache's key, which names strings and byte slices by address (fast,
// valid within the process while the cache pins the content), and the
// fingerprint, which hashes them by value (stable across processes;
// persisted with the summary's watermark). Both come from walkContent, the
// one walk over every field a provider is sent, so a field cannot be
// covered by one and forgotten by the other. The reflection test in
// identity_test.go fails on any genai.Part field the walk misses.
package contentid

import (
	"encoding/binary"
	"math"

	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/sat"
)

// idMark names a field, or the kind of a part, in the identity stream.
type idMark uint8

const (
	markThought idMark = iota + 1
	markCall
	markResponse
	markInline
	markFile
	markCallID
	markCallContinue
	markPartialArg
	markArgBool
	markArgPath
	markArgNull
	markArgNumber
	markArgString
	markArgContinue
	markResponseID
	markResponseContinue
	markScheduling
	markResponsePart
	markResponseInline
	markResponseFile
	markDisplayName
	markMIME
	markCode
	markLanguage
	markResult
	markOutcome
	markCodeID
	markSignature
	markVideo
	markFPS
	markMediaResolution
	markLevel
	markNumTokens
	markToolCall
	markToolResponse
	markToolID
	markMetadata
	numMarks
)

// markNames are the marks as the fingerprint writes them. The first marks
// are written as the fingerprint always wrote them ("" for none), so a
// content using only the fields fingerprinted before keeps its fingerprint
// and a persisted watermark still matches; the fields added since are each
// written only when set, after a mark of their own.
var markNames = [numMarks]string{
	markThought: "<thought>", markCall: "<call>", markResponse: "<response>",
	markInline: "", markFile: "",
	markCallID: "<call-id>", markCallContinue: "<call-continue>", markPartialArg: "<partial-arg>",
	markArgBool: "<arg-bool>", markArgPath: "<arg-path>", markArgNull: "<arg-null>",
	markArgNumber: "<arg-number>", markArgString: "<arg-string>", markArgContinue: "<arg-continue>",
	markResponseID: "<response-id>", markResponseContinue: "<response-continue>",
	markScheduling: "<scheduling>", markResponsePart: "<response-part>",
	markResponseInline: "<response-inline>", markResponseFile: "<response-file>",
	markDisplayName: "<display-name>", markMIME: "<mime>",
	markCode: "<code>", markLanguage: "<language>", markResult: "<result>", markOutcome: "<outcome>",
	markCodeID: "<code-id>", markSignature: "<signature>",
	markVideo: "<video>", markFPS: "<fps>",
	markMediaResolution: "<media-resolution>", markLevel: "<level>", markNumTokens: "<num-tokens>",
	markToolCall: "<tool-call>", markToolResponse: "<tool-response>", markToolID: "<tool-id>",
	markMetadata: "<metadata>",
}

// sink is where walkContent sends a content's identity.
type sink uint8

const (
	sinkKey    sink = iota // by address into a Keyer: the count cache's key
	sinkHash               // by value into FNV-64a: the fingerprint
	sinkChain              // sinkHash, long strings and blobs through crcFold (ChainHash)
	sinkSize               // the bytes of the strings and blobs (Size)
	sinkRecord             // appended to a Tape
	sinkVerify             // compared with a Tape
)

// identity receives a content's identity from walkContent. One concrete
// type with a mode, rather than an interface, keeps the calls direct on
// the hot path.
type identity struct {
	mode sink
	size int
	k    Keyer  // sinkKey
	h    uint64 // FNV-64a state: sinkHash, sinkChain
	tape *Tape  // sinkRecord, sinkVerify
	at   Mark   // sinkVerify: the next record to compare
	bad  bool   // sinkVerify: a value differed
}

// FNV-64a, as hash/fnv computes it, without its allocation.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// markWord is a mark as the key and the tape take it.
func markWord(m idMark) uint64 { return uint64(m) + 0x100 }

func (s *identity) mark(m idMark) {
	switch s.mode {
	case sinkHash, sinkChain:
		if name := markNames[m]; name != "" {
			s.fpStr(name)
		}
	case sinkKey, sinkRecord, sinkVerify:
		s.word(markWord(m))
	}
}

// str adds a string: by address and length, or by value with its length.
func (s *identity) str(x string) {
	switch s.mode {
	case sinkHash, sinkChain:
		s.fpStr(x)
	case sinkSize:
		s.size = sat.Add(s.size, len(x))
	default:
		s.tapeStr(x)
	}
}

// blob adds bytes: by address and length, by value (the fingerprint has
// always hashed inline data raw, without a length), or, on a tape, as
// crcFold of them: ADK copies byte slices for every call.
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
	case sinkKey, sinkRecord, sinkVerify:
		s.word(n)
	}
}

// value adds a JSON-like payload (call arguments, responses, metadata); false
// when the key or the tape cannot identify it.
func (s *identity) value(m map[string]any) bool {
	switch s.mode {
	case sinkHash, sinkChain:
		s.fpValue(m)
	case sinkSize:
		s.size = sat.Add(s.size, valueSize(m))
	default:
		return s.tapeValue(m)
	}
	return true
}

// optStr adds a string field that is sent only when set.
func (s *identity) optStr(m idMark, x string) {
	if x != "" {
		s.mark(m)
		s.str(x)
	}
}

// optBool adds an optional boolean field.
func (s *identity) optBool(m idMark, b *bool) {
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
func (s *identity) optFloat(m idMark, f *float64) {
	if f != nil {
		s.mark(m)
		s.num(math.Float64bits(*f))
	}
}

// walkContent gives s every field of c that a provider is sent. It returns
// false when s cannot identify a value (only the key can fail). Fields are
// given in the order the fingerprint always hashed them, each field added
// since then after it and only when set: see markNames.
func walkContent(c *genai.Content, s *identity) bool {
	s.str(c.Role)
	for _, p := range c.Parts {
		if p != nil && !walkPart(p, s) {
			return false
		}
	}
	return true
}

// walkPart writes every field of p into s, in a fixed order: its text and
// thought mark, its function call and response, its media and code, and
// the tool parts and metadata. It returns false when a value cannot be
// walked (identity.value).
func walkPart(p *genai.Part, s *identity) bool {
	s.str(p.Text)
	if p.Thought {
		s.mark(markThought)
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

// walkCall writes a function call: its name, arguments, ID and the
// arguments streamed in parts.
func walkCall(fc *genai.FunctionCall, s *identity) bool {
	s.mark(markCall)
	s.str(fc.Name)
	if !s.value(fc.Args) {
		return false
	}
	s.optStr(markCallID, fc.ID)
	s.optBool(markCallContinue, fc.WillContinue)
	for _, a := range fc.PartialArgs {
		s.mark(markPartialArg)
		if a == nil {
			continue
		}
		s.optBool(markArgBool, a.BoolValue)
		s.optStr(markArgPath, a.JsonPath)
		s.optStr(markArgNull, a.NULLValue)
		s.optFloat(markArgNumber, a.NumberValue)
		s.optStr(markArgString, a.StringValue)
		s.optBool(markArgContinue, a.WillContinue)
	}
	return true
}

// walkResponse writes a function response: its name, value, ID,
// scheduling and the images and files it carries.
func walkResponse(fr *genai.FunctionResponse, s *identity) bool {
	s.mark(markResponse)
	s.str(fr.Name)
	if !s.value(fr.Response) {
		return false
	}
	s.optStr(markResponseID, fr.ID)
	s.optBool(markResponseContinue, fr.WillContinue)
	s.optStr(markScheduling, string(fr.Scheduling))
	for _, rp := range fr.Parts {
		s.mark(markResponsePart)
		if rp == nil {
			continue
		}
		if d := rp.InlineData; d != nil {
			s.mark(markResponseInline)
			s.str(d.MIMEType)
			s.num(uint64(len(d.Data)))
			s.blob(d.Data)
			s.optStr(markDisplayName, d.DisplayName)
		}
		if f := rp.FileData; f != nil {
			s.mark(markResponseFile)
			s.str(f.FileURI)
			s.str(f.MIMEType)
			s.optStr(markDisplayName, f.DisplayName)
		}
	}
	return true
}

// walkMedia writes p's inline data and file, code and its result, thought
// signature, video metadata and media resolution.
func walkMedia(p *genai.Part, s *identity) {
	if d := p.InlineData; d != nil {
		s.mark(markInline)
		s.str(d.MIMEType)
		s.blob(d.Data)
		s.optStr(markDisplayName, d.DisplayName)
	}
	if f := p.FileData; f != nil {
		s.mark(markFile)
		s.str(f.FileURI)
		s.optStr(markMIME, f.MIMEType)
		s.optStr(markDisplayName, f.DisplayName)
	}
	if x := p.ExecutableCode; x != nil {
		s.mark(markCode)
		s.str(x.Code)
		s.optStr(markLanguage, string(x.Language))
		s.optStr(markCodeID, x.ID)
	}
	if r := p.CodeExecutionResult; r != nil {
		s.mark(markResult)
		s.str(r.Output)
		s.optStr(markOutcome, string(r.Outcome))
		s.optStr(markCodeID, r.ID)
	}
	if len(p.ThoughtSignature) > 0 {
		s.mark(markSignature)
		s.num(uint64(len(p.ThoughtSignature)))
		s.blob(p.ThoughtSignature)
	}
	if v := p.VideoMetadata; v != nil {
		s.mark(markVideo)
		s.num(uint64(v.StartOffset))
		s.num(uint64(v.EndOffset))
		s.optFloat(markFPS, v.FPS)
	}
	if r := p.MediaResolution; r != nil {
		s.mark(markMediaResolution)
		s.optStr(markLevel, string(r.Level))
		if r.NumTokens != nil {
			s.mark(markNumTokens)
			s.num(uint64(*r.NumTokens))
		}
	}
}

// walkToolParts writes p's built-in tool call and response and its
// metadata.
func walkToolParts(p *genai.Part, s *identity) bool {
	if tc := p.ToolCall; tc != nil {
		s.mark(markToolCall)
		s.str(string(tc.ToolType))
		if !s.value(tc.Args) {
			return false
		}
		s.optStr(markToolID, tc.ID)
	}
	if tr := p.ToolResponse; tr != nil {
		s.mark(markToolResponse)
		s.str(string(tr.ToolType))
		if !s.value(tr.Response) {
			return false
		}
		s.optStr(markToolID, tr.ID)
	}
	if len(p.PartMetadata) > 0 {
		s.mark(markMetadata)
		if !s.value(p.PartMetadata) {
			return false
		}
	}
	return true
}
