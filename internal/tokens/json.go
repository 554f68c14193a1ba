package tokens

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"
	"unsafe"

	"google.golang.org/genai"
)

// Limits of the JSON writer. The values it walks come from tools, users and
// session state, so nothing about their depth, size or shape is trusted.
const (
	// maxDepth bounds the recursion of the schema writer (tool schemas are
	// the developer's, not the user's); deeper schemas are written as null.
	// Values are walked with an explicit stack and have no depth limit.
	maxDepth = 256
	// trackDepth is the nesting depth from which the value walk remembers
	// the containers on its path, to find cycles. Shallower containers are
	// not tracked, which keeps the common case free of map operations: a
	// cycle always nests past this depth, where it is found.
	trackDepth = 64
	// maxValueBytes bounds the JSON written for one value. Shared
	// sub-values can make the encoding of a small value exponentially long;
	// past this size (about 4M tokens, above every model's window) the walk
	// stops and the value counts as what it has written, which is already
	// more than any request can hold.
	maxValueBytes = 16 << 20
)

// jsonWriter appends the compact JSON encoding of values to buf, byte for
// byte as encoding/json.Marshal would for the common dynamic types (sorted
// map keys, HTML-safe escaping, the same float formatting).
type jsonWriter struct {
	buf   []byte
	keys  []string    // scratch stack for sorting map keys
	stack []jsonFrame // containers being written, innermost last
	// path holds the tracked containers of stack, to find cycles.
	path map[containerID]struct{}
	// schemas are the *genai.Schema being written, outermost first.
	schemas []*genai.Schema
	// safe is set while a value with a cycle is rewritten, every container
	// tracked and each reference back to one on the path written as null.
	safe bool
}

// containerID identifies a map or slice by its data pointer and length.
type containerID struct {
	p uintptr
	n int
}

// Kinds of jsonFrame.
const (
	frameObject   = iota // map[string]any; keys sorted in keys[keys:]
	frameArray           // []any
	frameMapArray        // []map[string]any
)

// jsonFrame is a container being written.
type jsonFrame struct {
	kind    uint8
	tracked bool // id is in path
	m       map[string]any
	a       []any
	am      []map[string]any
	keys    int // start of the object's sorted keys in jsonWriter.keys
	i, n    int // next element, element count
	id      containerID
}

var writerPool = sync.Pool{New: func() any { return &jsonWriter{buf: make([]byte, 0, 4096)} }}

func getWriter() *jsonWriter { return writerPool.Get().(*jsonWriter) }

func putWriter(w *jsonWriter) {
	if cap(w.buf) > 1<<22 || cap(w.stack) > 1<<12 {
		return // do not keep huge buffers alive
	}
	w.buf = w.buf[:0]
	clear(w.keys)
	w.keys = w.keys[:0]
	clear(w.stack)
	w.stack = w.stack[:0]
	clear(w.path)
	clear(w.schemas)
	w.schemas = w.schemas[:0]
	w.safe = false
	writerPool.Put(w)
}

// AppendJSON appends the compact JSON encoding of v to dst: the bytes
// encoding/json.Marshal writes, for a value of any depth. Where Marshal
// fails, it still writes the value: a reference back to a container the
// value is nested in (a cycle) as null, a number JSON cannot hold (NaN, ±Inf)
// or a typed value Marshal rejects as null. Its output is bounded: a value
// whose shared sub-values expand past maxValueBytes is cut there.
func AppendJSON(dst []byte, v any) []byte {
	w := getWriter()
	w.value(v, 0)
	dst = append(dst, w.buf...)
	putWriter(w)
	return dst
}

// value writes v, which sits depth containers deep, as compact JSON. The
// walk keeps its own stack, so nesting of any depth is written in full.
// encoding/json rejects a value with a cycle; here the value is written
// again with each reference back to a container on its path as null, so it
// counts as what a provider would be sent if the cycle were cut.
func (w *jsonWriter) value(v any, depth int) {
	start := len(w.buf)
	if !w.walk(v, depth) {
		return
	}
	w.buf = w.buf[:start]
	w.safe = true
	w.walk(v, depth)
	w.safe = false
}

// walk writes v; it stops and reports true on finding a cycle, unless safe.
func (w *jsonWriter) walk(v any, depth int) (cycle bool) {
	limit := len(w.buf) + maxValueBytes
	base := len(w.stack)
	defer w.unwind(base)
	if w.open(v, depth) {
		return true
	}
	for len(w.stack) > base {
		f := &w.stack[len(w.stack)-1]
		if f.i == f.n {
			w.close()
			continue
		}
		if len(w.buf) > limit {
			return false // counted as written so far; see maxValueBytes
		}
		if f.i > 0 {
			w.buf = append(w.buf, ',')
		}
		var child any
		switch f.kind {
		case frameObject:
			k := w.keys[f.keys+f.i]
			w.str(k)
			w.buf = append(w.buf, ':')
			child = f.m[k]
		case frameArray:
			child = f.a[f.i]
		default:
			child = f.am[f.i]
		}
		f.i++ // before open, which may move the stack
		if w.open(child, depth+len(w.stack)-base) {
			return true
		}
	}
	return false
}

// open writes a scalar or leaf value, or writes the opening bracket of a
// container and pushes it. It reports a cycle found outside safe mode; in
// safe mode the repeated container is written as null.
func (w *jsonWriter) open(v any, depth int) (cycle bool) {
	f := jsonFrame{}
	switch x := v.(type) {
	case map[string]any:
		if x == nil {
			w.buf = append(w.buf, "null"...)
			return false
		}
		f = jsonFrame{kind: frameObject, m: x, n: len(x), id: containerID{p: mapPointer(x)}}
	case []any:
		if x == nil {
			w.buf = append(w.buf, "null"...)
			return false
		}
		f = jsonFrame{kind: frameArray, a: x, n: len(x)}
		if len(x) > 0 {
			f.id = containerID{p: uintptr(unsafe.Pointer(&x[0])), n: len(x)}
		}
	case []map[string]any:
		if x == nil {
			w.buf = append(w.buf, "null"...)
			return false
		}
		f = jsonFrame{kind: frameMapArray, am: x, n: len(x)}
		if len(x) > 0 {
			f.id = containerID{p: uintptr(unsafe.Pointer(&x[0])), n: len(x)}
		}
	default:
		w.leaf(v)
		return false
	}
	if f.n > 0 && (w.safe || depth >= trackDepth) {
		if _, seen := w.path[f.id]; seen {
			if !w.safe {
				return true
			}
			w.buf = append(w.buf, "null"...)
			return false
		}
		if w.path == nil {
			w.path = make(map[containerID]struct{})
		}
		w.path[f.id] = struct{}{}
		f.tracked = true
	}
	if f.kind == frameObject {
		f.keys = len(w.keys)
		for k := range f.m {
			w.keys = append(w.keys, k)
		}
		sortStrings(w.keys[f.keys:])
		w.buf = append(w.buf, '{')
	} else {
		w.buf = append(w.buf, '[')
	}
	w.stack = append(w.stack, f)
	return false
}

// close writes the closing bracket of the innermost container and pops it.
func (w *jsonWriter) close() {
	f := &w.stack[len(w.stack)-1]
	if f.kind == frameObject {
		w.buf = append(w.buf, '}')
	} else {
		w.buf = append(w.buf, ']')
	}
	w.pop()
}

// pop drops the innermost container, releasing its keys and its place on
// the path.
func (w *jsonWriter) pop() {
	f := &w.stack[len(w.stack)-1]
	if f.kind == frameObject {
		clear(w.keys[f.keys:])
		w.keys = w.keys[:f.keys]
	}
	if f.tracked {
		delete(w.path, f.id)
	}
	*f = jsonFrame{}
	w.stack = w.stack[:len(w.stack)-1]
}

// unwind pops the containers a stopped walk left above base.
func (w *jsonWriter) unwind(base int) {
	for len(w.stack) > base {
		w.pop()
	}
}

// mapPointer is the address of a map's header, its identity.
func mapPointer(m map[string]any) uintptr {
	return uintptr(*(*unsafe.Pointer)(unsafe.Pointer(&m)))
}

// leaf writes a value that is not a map[string]any, []any or
// []map[string]any.
func (w *jsonWriter) leaf(v any) {
	switch x := v.(type) {
	case nil:
		w.buf = append(w.buf, "null"...)
	case string:
		w.str(x)
	case bool:
		w.buf = strconv.AppendBool(w.buf, x)
	case float64:
		w.float(x, 64)
	case float32:
		w.float(float64(x), 32)
	case int:
		w.buf = strconv.AppendInt(w.buf, int64(x), 10)
	case int8:
		w.buf = strconv.AppendInt(w.buf, int64(x), 10)
	case int16:
		w.buf = strconv.AppendInt(w.buf, int64(x), 10)
	case int32:
		w.buf = strconv.AppendInt(w.buf, int64(x), 10)
	case int64:
		w.buf = strconv.AppendInt(w.buf, x, 10)
	case uint:
		w.buf = strconv.AppendUint(w.buf, uint64(x), 10)
	case uint8:
		w.buf = strconv.AppendUint(w.buf, uint64(x), 10)
	case uint16:
		w.buf = strconv.AppendUint(w.buf, uint64(x), 10)
	case uint32:
		w.buf = strconv.AppendUint(w.buf, uint64(x), 10)
	case uint64:
		w.buf = strconv.AppendUint(w.buf, x, 10)
	case json.Number:
		if x == "" {
			w.buf = append(w.buf, '0')
		} else {
			w.buf = append(w.buf, x...)
		}
	case json.RawMessage:
		if len(x) == 0 {
			w.buf = append(w.buf, "null"...)
		} else {
			w.buf = append(w.buf, x...)
		}
	case []byte:
		if x == nil {
			w.buf = append(w.buf, "null"...)
			return
		}
		w.buf = append(w.buf, '"')
		w.buf = base64.StdEncoding.AppendEncode(w.buf, x)
		w.buf = append(w.buf, '"')
	case []string:
		if x == nil {
			w.buf = append(w.buf, "null"...)
			return
		}
		w.buf = append(w.buf, '[')
		for i, e := range x {
			if i > 0 {
				w.buf = append(w.buf, ',')
			}
			w.str(e)
		}
		w.buf = append(w.buf, ']')
	case map[string]string:
		if x == nil {
			w.buf = append(w.buf, "null"...)
			return
		}
		base := len(w.keys)
		for k := range x {
			w.keys = append(w.keys, k)
		}
		keys := w.keys[base:]
		sortStrings(keys)
		w.buf = append(w.buf, '{')
		for i, k := range keys {
			if i > 0 {
				w.buf = append(w.buf, ',')
			}
			w.str(k)
			w.buf = append(w.buf, ':')
			w.str(x[k])
		}
		w.buf = append(w.buf, '}')
		clear(w.keys[base:])
		w.keys = w.keys[:base]
	default:
		// Other types (structs, typed maps and slices, pointers): fall back
		// to encoding/json, which finds their cycles itself. Values it
		// cannot encode count as null.
		b, err := json.Marshal(x)
		if err != nil {
			w.buf = append(w.buf, "null"...)
			return
		}
		w.buf = append(w.buf, b...)
	}
}

// float formats f like encoding/json: shortest representation, exponent
// form outside [1e-6, 1e21), "e-07" cleaned to "e-7". NaN and infinities,
// which encoding/json rejects, are written as null.
func (w *jsonWriter) float(f float64, bits int) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		w.buf = append(w.buf, "null"...)
		return
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	w.buf = strconv.AppendFloat(w.buf, f, format, -1, bits)
	if format == 'e' {
		n := len(w.buf)
		if n >= 4 && w.buf[n-4] == 'e' && w.buf[n-3] == '-' && w.buf[n-2] == '0' {
			w.buf[n-2] = w.buf[n-1]
			w.buf = w.buf[:n-1]
		}
	}
}

const hexDigits = "0123456789abcdef"

// str writes s as a JSON string with encoding/json's escaping: ", \ and
// control characters escaped, <, > and & as \u003c etc., U+2028 and U+2029
// escaped, and invalid UTF-8 replaced by \ufffd.
func (w *jsonWriter) str(s string) {
	b := append(w.buf, '"')
	start := 0
	for i := 0; i < len(s); {
		// Skip eight bytes at a time while none needs escaping, then to
		// the first that may. Non-ASCII text goes rune by rune below.
		for i+8 <= len(s) && s[i] < utf8.RuneSelf {
			// Any byte below 0x20 or above 0x7f, or equal to '\\', '"' or
			// '&' (0x22 | 4 == 0x26), '<' or '>' (0x3c | 2 == 0x3e)? The
			// zero-byte tests are exact as a whole, which is all we need.
			x := load64(s, i)
			v1 := x ^ '\\'*lsb
			v2 := (x | 0x04*lsb) ^ '&'*lsb
			v3 := (x | 0x02*lsb) ^ '>'*lsb
			// The lowest flagged byte is always a true one: false
			// positives only come from borrows out of a true one below.
			if m := ((x-0x20*lsb)&^x | (v1-lsb)&^v1 | (v2-lsb)&^v2 | (v3-lsb)&^v3 | x) & msb; m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		// Valid two- and three-byte sequences other than U+2028 and U+2029
		// are copied as they are; the rest is decoded.
		if c >= 0xC2 && c <= 0xDF && i+1 < len(s) && s[i+1]&0xC0 == 0x80 {
			i += 2
			continue
		}
		if c&0xF0 == 0xE0 && i+2 < len(s) && s[i+2]&0xC0 == 0x80 {
			lo, hi := byte(0x80), byte(0xBF)
			switch c {
			case 0xE0:
				lo = 0xA0
			case 0xED:
				hi = 0x9F
			case 0xE2:
				hi = 0xBF
				if s[i+1] == 0x80 && (s[i+2] == 0xA8 || s[i+2] == 0xA9) {
					hi = 0 // U+2028 or U+2029: decoded and escaped below
				}
			}
			if c1 := s[i+1]; c1 >= lo && c1 <= hi {
				i += 3
				continue
			}
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	w.buf = append(b, '"')
}

func sortStrings(s []string) { slices.Sort(s) }
