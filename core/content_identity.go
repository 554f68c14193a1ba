package core

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"unsafe"

	"github.com/adk-contextguard/contextguard/core/internal/tokens"
	"google.golang.org/genai"
)

// ---------------------------------------------------------------------------
// Content identity (ARCHITECTURE.md, Counting)
// ---------------------------------------------------------------------------

// A content has two identities: the count cache's key, which names strings
// and byte slices by address (fast, valid within the process while the cache
// pins the content), and the fingerprint, which hashes them by value (stable
// across processes; persisted with the summary's watermark). Both come from
// walkContent, the one walk over every field a provider is sent, so a field
// cannot be covered by one and forgotten by the other. The reflection test in
// content_identity_test.go fails on any genai.Part field the walk misses.

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

// identity receives a content's identity from walkContent: by address into
// a keyer (the count cache's key), or by value into an FNV-64a hash (the
// fingerprint). One concrete type with two modes, rather than an interface,
// keeps the key's calls direct on the hot path.
type identity struct {
	byValue bool
	// sampled, with byValue, hashes strings, bytes and payloads by a
	// bounded sample of them instead of in full: a prefix mark
	// (prefix_count.go).
	sampled bool
	// sizing, with byValue, adds up the bytes of the strings and byte
	// slices a content holds in size instead of hashing them: what a
	// cache entry pinning it retains (session_memory_bound.go).
	sizing bool
	size   int
	k      keyer  // byValue false
	h      uint64 // FNV-64a state; byValue true
}

// FNV-64a, as hash/fnv computes it, without its allocation.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

func (s *identity) mark(m idMark) {
	if !s.byValue {
		s.k.add(uint64(m) + 0x100)
		return
	}
	if name := markNames[m]; name != "" {
		s.fpStr(name)
	}
}

// str adds a string: by address and length, or by value with its length.
func (s *identity) str(x string) {
	if !s.byValue {
		s.k.str(x)
		return
	}
	if s.sampled {
		s.sample(x)
		return
	}
	if s.sizing {
		s.size = satAdd(s.size, len(x))
		return
	}
	s.fpStr(x)
}

// blob adds bytes: by address and length, or their bytes (the fingerprint
// has always hashed inline data raw, without a length).
func (s *identity) blob(b []byte) {
	if !s.byValue {
		s.k.add(uint64(uintptr(unsafe.Pointer(unsafe.SliceData(b)))))
		s.k.add(uint64(len(b)))
		return
	}
	if s.sampled {
		s.sample(unsafe.String(unsafe.SliceData(b), len(b)))
		return
	}
	if s.sizing {
		s.size = satAdd(s.size, len(b))
		return
	}
	s.write(b)
}

// num adds a number, a boolean or a length.
func (s *identity) num(n uint64) {
	if !s.byValue {
		s.k.add(n)
		return
	}
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], n)
	s.write(b[:])
}

// value adds a JSON-like payload (call arguments, responses, metadata); false
// when the key cannot identify it and the content must not be cached.
func (s *identity) value(m map[string]any) bool {
	if !s.byValue {
		return s.k.value(m)
	}
	if s.sampled {
		s.sampleValue(m)
		return true
	}
	if s.sizing {
		s.size = satAdd(s.size, valueSize(m))
		return true
	}
	s.fpValue(m)
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
		s.num(boolBit(*b))
	}
}

// optFloat adds an optional number field.
func (s *identity) optFloat(m idMark, f *float64) {
	if f != nil {
		s.mark(m)
		s.num(math.Float64bits(*f))
	}
}

func boolBit(b bool) uint64 {
	if b {
		return 1
	}
	return 0
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

func walkPart(p *genai.Part, s *identity) bool {
	s.str(p.Text)
	if p.Thought {
		s.mark(markThought)
	}
	if fc := p.FunctionCall; fc != nil {
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
	}
	if fr := p.FunctionResponse; fr != nil {
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
	}
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

// ---------------------------------------------------------------------------
// Fingerprints (ARCHITECTURE.md, Summary injection and the watermark)
// ---------------------------------------------------------------------------

// fingerprint identifies a content across ADK's rebuilds of the request: the
// same role and parts give the same value in every process, whatever the map
// order and whether numbers came back from a database as float64.
func fingerprint(c *genai.Content) string {
	s := identity{byValue: true, h: fnvOffset}
	fpContent(&s, c)
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], s.h)
	return hex.EncodeToString(b[:])
}

func fpContent(s *identity, c *genai.Content) {
	if c == nil {
		s.fpStr("<nil>")
		return
	}
	walkContent(c, s)
}

func (s *identity) write(b []byte) {
	h := s.h
	for _, c := range b {
		h ^= uint64(c)
		h *= fnvPrime
	}
	s.h = h
}

func (s *identity) writeString(x string) {
	h := s.h
	for i := 0; i < len(x); i++ {
		h ^= uint64(x[i])
		h *= fnvPrime
	}
	s.h = h
}

// fpStr hashes a string with its length.
func (s *identity) fpStr(x string) {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(len(x)))
	s.write(b[:])
	s.writeString(x)
}

// fpTagged hashes tag+x as fpStr would, without building the string.
func (s *identity) fpTagged(tag byte, x string) {
	var b [9]byte
	binary.BigEndian.PutUint64(b[:8], uint64(len(x))+1)
	b[8] = tag
	s.write(b[:])
	s.writeString(x)
}

// Bounds of the fingerprint's walk of a value.
const (
	// maxFingerprintNodes bounds the values hashed for one payload. Shared
	// sub-values can make a small value's expansion exponentially large;
	// past this many nodes (several MB of JSON, beyond any window) the rest
	// is hashed as one "<truncated>" mark, at the same place in every
	// process.
	maxFingerprintNodes = 1 << 21
	// liftNodes is what one typed container (lifted by reflection) counts
	// against maxFingerprintNodes: reflection costs far more per node than
	// a plain map or slice, so an exponentially shared typed value stops
	// after maxFingerprintNodes/liftNodes (65,536) lifts, in bounded time.
	liftNodes = 32
	// pathScan is the nesting depth up to which a container is looked for
	// on the path by a scan of the stack; deeper ones also go in a map.
	pathScan = 32
)

// fpFrame is a container being hashed.
type fpFrame struct {
	keys []string // sorted keys of an object; nil for an array
	m    map[string]any
	a    []any
	i    int
	id   containerID
}

// containerID identifies a map or slice by its data pointer and length.
type containerID struct {
	p uintptr
	n int
}

// fpValue hashes a JSON-like value by value: map keys sorted, numbers of
// any Go type as the float64 a JSON round trip gives, typed values (structs,
// []string, ...) as their JSON round trip, so a content reloaded from a
// database hashes as it did when it was stored. The walk keeps its own
// stack (any depth is hashed in full), hashes a reference back to a
// container on its path as "<cycle>", and stops at maxFingerprintNodes.
func (s *identity) fpValue(v any) {
	var stack []fpFrame
	var deep map[containerID]struct{} // path containers at depth ≥ pathScan
	nodes := 0
	onPath := func(id containerID) bool {
		for i := range min(len(stack), pathScan) {
			if stack[i].id == id {
				return true
			}
		}
		_, ok := deep[id]
		return ok
	}
	// open hashes a scalar, or the opening of a container it pushes.
	var open func(v any)
	open = func(v any) {
		nodes++
		var f fpFrame
		switch x := v.(type) {
		case nil:
			s.fpStr("null")
			return
		case string:
			s.fpTagged('s', x)
			return
		case bool:
			s.fpStr(strconv.FormatBool(x))
			return
		case map[string]any:
			f = fpFrame{m: x, keys: make([]string, 0, len(x))}
			for k := range x {
				f.keys = append(f.keys, k)
			}
			slices.Sort(f.keys)
			if len(x) > 0 {
				f.id = containerID{p: uintptr(*(*unsafe.Pointer)(unsafe.Pointer(&x)))}
			}
		case []any:
			f = fpFrame{a: x}
			if len(x) > 0 {
				f.id = containerID{p: uintptr(unsafe.Pointer(&x[0])), n: len(x)}
			}
		case []string:
			s.fpStr("[")
			for _, e := range x {
				s.fpTagged('s', e)
			}
			s.fpStr("]")
			return
		case map[string]string:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			s.fpStr("{")
			for _, k := range keys {
				s.fpStr(k)
				s.fpTagged('s', x[k])
			}
			s.fpStr("}")
			return
		case json.Number:
			if f, err := x.Float64(); err == nil {
				s.fpStr(strconv.FormatFloat(f, 'g', -1, 64))
			} else {
				s.fpStr("?")
			}
			return
		default:
			if n, ok := asFloat(v); ok {
				s.fpStr(strconv.FormatFloat(n, 'g', -1, 64))
				return
			}
			// A typed value hashes as the value a JSON round trip gives
			// (what a database-backed session hands back). It is lifted
			// into those shapes one level at a time, never handed whole to
			// encoding/json: its elements are lifted as the walk reaches
			// them, so every visit of a shared sub-value counts against
			// maxFingerprintNodes, and a cycle through typed containers is
			// found by their identity on the path.
			nodes += liftNodes - 1
			l := tokens.Lift(v, max(maxFingerprintNodes-nodes, 0), true)
			switch x := l.V.(type) {
			case map[string]any:
				f = fpFrame{m: x, keys: make([]string, 0, len(x))}
				for k := range x {
					f.keys = append(f.keys, k)
				}
				slices.Sort(f.keys)
				if l.P != 0 && (len(x) > 0 || l.N < 0) {
					f.id = containerID{p: l.P, n: l.N}
				}
			case []any:
				f = fpFrame{a: x}
				if l.P != 0 && len(x) > 0 {
					f.id = containerID{p: l.P, n: l.N}
				}
			default:
				nodes--
				open(x) // a scalar
				return
			}
		}
		if f.id != (containerID{}) && onPath(f.id) {
			s.fpStr("<cycle>")
			return
		}
		if len(stack) >= pathScan && f.id != (containerID{}) {
			if deep == nil {
				deep = make(map[containerID]struct{})
			}
			deep[f.id] = struct{}{}
		}
		if f.keys != nil {
			s.fpStr("{")
		} else {
			s.fpStr("[")
		}
		stack = append(stack, f)
	}
	open(v)
	for len(stack) > 0 {
		f := &stack[len(stack)-1]
		if nodes > maxFingerprintNodes {
			s.fpStr("<truncated>")
			return
		}
		switch {
		case f.keys != nil && f.i < len(f.keys):
			k := f.keys[f.i]
			f.i++
			s.fpStr(k)
			open(f.m[k])
		case f.keys == nil && f.i < len(f.a):
			f.i++
			open(f.a[f.i-1])
		default:
			if f.keys != nil {
				s.fpStr("}")
			} else {
				s.fpStr("]")
			}
			if len(stack) > pathScan && f.id != (containerID{}) {
				delete(deep, f.id)
			}
			stack = stack[:len(stack)-1]
		}
	}
}

// asFloat is a Go number as the float64 JSON decoding gives.
func asFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case float32:
		return float64(n), true
	case int:
		return float64(n), true
	case int8:
		return float64(n), true
	case int16:
		return float64(n), true
	case int32:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint:
		return float64(n), true
	case uint8:
		return float64(n), true
	case uint16:
		return float64(n), true
	case uint32:
		return float64(n), true
	case uint64:
		return float64(n), true
	}
	return 0, false
}
