package contentid

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"hash/crc32"
	"reflect"
	"slices"
	"strconv"
	"unsafe"

	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/contentid/hashcount"
	"github.com/adk-contextguard/contextguard/core/internal/tokens"
)

// NilHash stands for a nil content or declaration in a chain or a config
// hash: no walk produces it.
const NilHash = 1

// Fingerprints: a content's identity by value, the same in every process
// (ARCHITECTURE.md, Summary injection and the watermark).

// Fingerprint identifies a content across ADK's rebuilds of the request: the
// same role and parts give the same value in every process, whatever the map
// order and whether numbers came back from a database as float64.
func Fingerprint(c *genai.Content) string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], Hash(c))
	return hex.EncodeToString(b[:])
}

// Hash is the fingerprint as a number: c's FNV-64a hash by value.
func Hash(c *genai.Content) uint64 {
	s := identity{mode: sinkHash, h: fnvOffset}
	if c == nil {
		s.fpStr("<nil>")
		return s.h
	}
	walkContent(c, &s)
	return s.h
}

// ChainHash is a content's hash by value for a prefix chain: the
// fingerprint's walk (every field a provider is sent, payloads canonical),
// long strings and byte slices through crcFold. It reads every byte, at
// memory speed. A nil content, which no walk produces, hashes as NilHash.
func ChainHash(c *genai.Content) uint64 {
	if c == nil {
		return NilHash
	}
	hashcount.Add()
	s := identity{mode: sinkChain, h: fnvOffset}
	walkContent(c, &s)
	return s.h
}

// HashBytes is the FNV-64a hash of b.
func HashBytes(b []byte) uint64 {
	s := identity{mode: sinkHash, h: fnvOffset}
	s.write(b)
	return s.h
}

// StringHash is the FNV-64a hash of x with its length, from the offset
// basis xor salt: a name's hash, the same in every process.
func StringHash(salt uint64, x string) uint64 {
	s := identity{mode: sinkHash, h: fnvOffset ^ salt}
	s.fpStr(x)
	return s.h
}

// write hashes b with FNV-64a. It never takes the fast path (blob does),
// so that the small arrays its callers build stay on the stack.
func (s *identity) write(b []byte) {
	h := s.h
	for _, c := range b {
		h ^= uint64(c)
		h *= fnvPrime
	}
	s.h = h
}

func (s *identity) writeString(x string) {
	if s.mode == sinkChain && len(x) >= fastHashBytes {
		s.h = crcFoldString(s.h, x)
		return
	}
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
	var w fpWalk
	w.open(s, v)
	for len(w.stack) > 0 {
		if w.nodes > maxFingerprintNodes {
			s.fpStr("<truncated>")
			return
		}
		w.next(s)
	}
}

// fpWalk is one walk of fpValue: the containers open on the path, those of
// them at depth pathScan or more (deep, looked up by identity rather than
// scanned), and the nodes visited so far. Its methods are given the
// identity they hash into rather than the walk holding it: held, it would
// escape to the heap with the walk's stack, one allocation for every
// content key of every call.
type fpWalk struct {
	stack []fpFrame
	deep  map[containerID]struct{}
	nodes int
}

// next hashes the next element of the innermost open container, or closes
// it.
func (w *fpWalk) next(s *identity) {
	f := &w.stack[len(w.stack)-1]
	switch {
	case f.keys != nil && f.i < len(f.keys):
		k := f.keys[f.i]
		f.i++
		s.fpStr(k)
		w.open(s, f.m[k])
	case f.keys == nil && f.i < len(f.a):
		f.i++
		w.open(s, f.a[f.i-1])
	default:
		if f.keys != nil {
			s.fpStr("}")
		} else {
			s.fpStr("]")
		}
		if len(w.stack) > pathScan && f.id != (containerID{}) {
			delete(w.deep, f.id)
		}
		w.stack = w.stack[:len(w.stack)-1]
	}
}

// open hashes a scalar, or the opening of a container it pushes.
func (w *fpWalk) open(s *identity, v any) {
	for {
		w.nodes++
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
			f = mapFrame(x)
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
			s.fpStringMap(x)
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
			var container bool
			if f, v, container = w.lift(v); !container {
				// A scalar, which Lift gives as JSON decoding does (a
				// string, float64, bool or nil): the loop's next turn
				// hashes it, as one node with the lift's.
				w.nodes--
				continue
			}
		}
		w.push(s, f)
		return
	}
}

// lift is a typed value as the value a JSON round trip gives (what a
// database-backed session hands back): the frame of the container it is,
// or, when it is a scalar (container false), that scalar. It is lifted
// into those shapes one level at a time, never handed whole to
// encoding/json: its elements are lifted as the walk reaches them, so
// every visit of a shared sub-value counts against maxFingerprintNodes,
// and a cycle through typed containers is found by their identity on the
// path.
func (w *fpWalk) lift(v any) (f fpFrame, scalar any, container bool) {
	w.nodes += liftNodes - 1
	l := tokens.Lift(v, max(maxFingerprintNodes-w.nodes, 0), true)
	switch x := l.V.(type) {
	case map[string]any:
		f = mapFrame(x)
		if l.P != 0 && (len(x) > 0 || l.N < 0) {
			f.id = containerID{p: l.P, n: l.N}
		}
		return f, nil, true
	case []any:
		f = fpFrame{a: x}
		if l.P != 0 && len(x) > 0 {
			f.id = containerID{p: l.P, n: l.N}
		}
		return f, nil, true
	default:
		return fpFrame{}, x, false
	}
}

// push opens the container of frame f, or hashes "<cycle>" when it is
// already open on the path.
func (w *fpWalk) push(s *identity, f fpFrame) {
	if f.id != (containerID{}) && w.onPath(f.id) {
		s.fpStr("<cycle>")
		return
	}
	if len(w.stack) >= pathScan && f.id != (containerID{}) {
		if w.deep == nil {
			w.deep = make(map[containerID]struct{})
		}
		w.deep[f.id] = struct{}{}
	}
	if f.keys != nil {
		s.fpStr("{")
	} else {
		s.fpStr("[")
	}
	w.stack = append(w.stack, f)
}

// onPath reports whether the container id is open on the path.
func (w *fpWalk) onPath(id containerID) bool {
	for i := range min(len(w.stack), pathScan) {
		if w.stack[i].id == id {
			return true
		}
	}
	_, ok := w.deep[id]
	return ok
}

// mapFrame is the frame of an object, its keys sorted.
func mapFrame(m map[string]any) fpFrame {
	f := fpFrame{m: m, keys: make([]string, 0, len(m))}
	for k := range m {
		f.keys = append(f.keys, k)
	}
	slices.Sort(f.keys)
	return f
}

// fpStringMap hashes a map[string]string, its keys sorted.
func (s *identity) fpStringMap(m map[string]string) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	s.fpStr("{")
	for _, k := range keys {
		s.fpStr(k)
		s.fpTagged('s', m[k])
	}
	s.fpStr("}")
}

// asFloat is a Go number as the float64 JSON decoding gives. Only the
// predeclared number types are numbers here: a named one may marshal
// otherwise, and is lifted.
func asFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case float32:
		return float64(n), true
	case int, int8, int16, int32, int64:
		return float64(reflect.ValueOf(n).Int()), true
	case uint, uint8, uint16, uint32, uint64:
		return float64(reflect.ValueOf(n).Uint()), true
	}
	return 0, false
}

// fastHashBytes is the length from which the content hash of a prefix chain
// hashes a string or byte slice with the CPU's CRC instructions instead of
// FNV-64a byte by byte: FNV runs at about 3.5 GB/s, the two CRC-32s at
// about 12 GB/s together, and below some tens of bytes the call costs more
// than it saves.
const fastHashBytes = 64

// castagnoli is the CRC-32C table; hash/crc32 uses the CPU's instructions
// for it (SSE4.2 on amd64, CRC32 on arm64).
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// crcFold folds b's length and two CRC-32s of it (Castagnoli and IEEE,
// together a 64-bit check that misses an edit with probability about
// 2^-64 unless it is crafted) into the FNV state h. Like FNV, it is not
// meant to resist an adversary: the prefix record guards against edits,
// not against attacks on the estimate (a crafted collision only makes the
// estimate low until the provider's next count).
func crcFold(h uint64, b []byte) uint64 {
	c := uint64(crc32.Update(0, castagnoli, b))<<32 | uint64(crc32.ChecksumIEEE(b))
	return fnvUint64(fnvUint64(h, uint64(len(b))), c)
}

// crcFoldString is crcFold over a string's bytes, without copying them.
func crcFoldString(h uint64, x string) uint64 {
	return crcFold(h, unsafe.Slice(unsafe.StringData(x), len(x)))
}

// fnvUint64 is FNV-64a over n's 8 bytes, big-endian, from h.
func fnvUint64(h, n uint64) uint64 {
	for shift := 56; shift >= 0; shift -= 8 {
		h ^= (n >> shift) & 0xff
		h *= fnvPrime
	}
	return h
}
