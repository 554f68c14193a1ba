package contentid

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"hash/crc32"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"unsafe"

	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/contentid/hashcount"
	"github.com/adk-contextguard/contextguard/core/internal/tokens"
)

// Fingerprints: a content's identity by value, the same in every process
// (ARCHITECTURE.md, Summary injection and the watermark).

// NilHash stands for a nil content or declaration in a chain or a config
// hash: no walk produces it.
const NilHash = 1

// Fingerprint is the same for the same role and parts in every process,
// whatever the map order or whether numbers came back from a database as
// float64.
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
// fingerprint's walk, long strings and byte slices through crcFold.
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
// basis xor salt.
func StringHash(salt uint64, x string) uint64 {
	s := identity{mode: sinkHash, h: fnvOffset ^ salt}
	s.fpStr(x)
	return s.h
}

// write hashes b with FNV-64a, never with crcFold, so that the small
// arrays its callers build stay on the stack.
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
	// maxFingerprintNodes bounds the values hashed for one payload (shared
	// sub-values can expand exponentially); past it the rest is hashed as
	// one "<truncated>" mark, at the same place in every process.
	maxFingerprintNodes = 1 << 21
	// liftNodes is what a typed container counts against it: reflection
	// costs far more per node, and this bounds its time.
	liftNodes = 32
	// pathScan is the depth up to which a container is looked for on the
	// path by a scan of the stack; deeper ones also go in a map.
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

// fpValue hashes a JSON-like value as its JSON round trip would be (keys
// sorted, numbers as float64, typed values lifted), so a content reloaded
// from a database hashes as stored; a cycle hashes as "<cycle>".
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

// fpWalk is one walk of fpValue: the containers open on the path (those
// past pathScan also in deep) and the nodes visited. Its methods take the
// identity rather than hold it, which would make it escape to the heap.
type fpWalk struct {
	stack []fpFrame
	deep  map[containerID]struct{}
	nodes int
}

// next hashes the innermost open container's next element, or closes it.
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

// lift is a typed value as a JSON round trip gives it (what a database
// hands back): the frame of the container it is, or the scalar. It lifts
// one level at a time, so every visit of a shared sub-value counts against
// maxFingerprintNodes and a cycle is found by identity on the path.
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
	keys := slices.AppendSeq(make([]string, 0, len(m)), maps.Keys(m)) // non-nil: an object
	slices.Sort(keys)
	return fpFrame{m: m, keys: keys}
}

// fpStringMap hashes a map[string]string, its keys sorted.
func (s *identity) fpStringMap(m map[string]string) {
	s.fpStr("{")
	for _, k := range slices.Sorted(maps.Keys(m)) {
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

// fastHashBytes is the length from which a chain hashes with crcFold (about
// 12 GB/s) instead of FNV-64a (3.5 GB/s): below it the call costs more.
const fastHashBytes = 64

// castagnoli is the CRC-32C table, computed with the CPU's instructions.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// crcFold folds b's length and two CRC-32s of it (Castagnoli and IEEE: an
// edit goes unseen with probability about 2^-64) into the FNV state h. It
// resists edits, not adversaries: a crafted collision only makes the
// estimate low until the provider's next count.
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
