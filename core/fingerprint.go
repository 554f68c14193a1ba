package core

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strconv"
	"unsafe"

	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/tokens"
)

// Fingerprints: a content's identity by value, the same in every process
// (ARCHITECTURE.md, Summary injection and the watermark).

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
	if s.fast && len(x) >= fastHashBytes {
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
