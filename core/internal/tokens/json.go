package tokens

import (
	"bytes"
	"encoding"
	"encoding/base64"
	"encoding/json"
	"math"
	"math/bits"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
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
	// liftCharge is what one typed container (lifted by reflection) costs
	// of maxValueBytes besides the bytes it writes. Reflection costs two
	// orders of magnitude more per node than a plain map or slice, so a
	// value whose shared typed sub-values expand exponentially stops after
	// maxValueBytes/liftCharge (65,536) lifts, in bounded time.
	liftCharge = 256
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
	// limit is the length of buf at which the current walk stops.
	limit int
	// charged is what typed containers cost the current walk beyond their
	// bytes (liftCharge each).
	charged int
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
	defer func(l, c int) { w.limit, w.charged = l, c }(w.limit, w.charged)
	w.limit, w.charged = limit, 0
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
		if len(w.buf)+w.charged > limit {
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
		if w.leaf(v) {
			return false
		}
		// A typed value: one level lifted into the shapes above, its
		// elements lifted in turn as the walk reaches them, so shared
		// sub-values are written (and paid) each time and cycles through
		// typed containers are found by their identity.
		w.charged += liftCharge
		l := Lift(v, w.limit-len(w.buf)-w.charged, false)
		switch x := l.V.(type) {
		case map[string]any:
			f = jsonFrame{kind: frameObject, m: x, n: len(x), id: containerID{p: l.P, n: l.N}}
		case []any:
			f = jsonFrame{kind: frameArray, a: x, n: len(x), id: containerID{p: l.P, n: l.N}}
		default:
			w.leaf(l.V)
			return false
		}
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
// []map[string]any; it reports false, writing nothing, for another type.
func (w *jsonWriter) leaf(v any) bool {
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
			return true
		}
		w.buf = append(w.buf, '"')
		w.buf = base64.StdEncoding.AppendEncode(w.buf, x)
		w.buf = append(w.buf, '"')
	case []string:
		if x == nil {
			w.buf = append(w.buf, "null"...)
			return true
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
			return true
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
		return false
	}
	return true
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

// ---------------------------------------------------------------------------
// Typed values
// ---------------------------------------------------------------------------

// Lifted is one level of a typed value in the plain JSON shapes: see Lift.
type Lifted struct {
	// V is nil, a string, a bool, a number (float64 when the lift was for
	// a round trip; otherwise int64, uint64, float32 or float64), a
	// json.RawMessage (only when not for a round trip), a map[string]any or
	// a []any. The elements of a map or slice are the typed value's own
	// elements, still typed: the caller lifts them when it reaches them.
	V any
	// P and N identify the container V was lifted from (its pointer, and
	// its length or a negative kind tag), so that a walk finds a cycle
	// through typed containers on its path; P is 0 for none.
	P uintptr
	N int
}

// Kinds of a typed container's identity in Lifted.N, apart from a slice's
// length (never negative).
const (
	liftPointer = -1
)

// maxMarshalerNodes bounds the reflection walk that sizes a value with a
// MarshalJSON or MarshalText method before the method is called; a larger
// value is lifted by its exported fields instead.
const maxMarshalerNodes = 1 << 14

// maxPointerHops bounds a chain of pointers to pointers (a pointer that
// points to itself would otherwise be followed forever).
const maxPointerHops = 64

var (
	marshalerType     = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
	timeType          = reflect.TypeFor[time.Time]()
	numberType        = reflect.TypeFor[json.Number]()
	rawType           = reflect.TypeFor[json.RawMessage]()
)

// Lift converts one level of v, a value of any Go type, into the shapes a
// JSON round trip gives, following encoding/json's rules (exported struct
// fields, json tags with "-", omitempty, omitzero and string, embedded
// structs, []byte as base64, map keys of string, integer or TextMarshaler
// types, MarshalJSON and MarshalText methods). It never hands a container
// to encoding/json: the elements of the container it returns are left as
// they are, so a walk that lifts each typed value it reaches pays for every
// visit of a shared sub-value under its own budget, and finds cycles by the
// identity Lift reports. At most max elements of a container are lifted
// (the walk stops before it reaches the rest). roundTrip gives numbers as
// the float64 that decoding gives, and a JSON method's output decoded.
// Values encoding/json rejects (channels, functions, complex numbers,
// unsupported map keys) are nil.
func Lift(v any, limit int, roundTrip bool) Lifted {
	limit = min(max(limit, 0), math.MaxInt-1)
	return lift(reflect.ValueOf(v), limit, roundTrip)
}

func lift(rv reflect.Value, limit int, roundTrip bool) Lifted {
	for hops := 0; ; hops++ {
		if !rv.IsValid() {
			return Lifted{}
		}
		if out, ok := liftMethod(rv, limit, roundTrip); ok {
			return out
		}
		switch rv.Kind() {
		case reflect.Interface:
			if rv.IsNil() || hops > maxPointerHops {
				return Lifted{}
			}
			rv = rv.Elem()
			continue
		case reflect.Pointer:
			if rv.IsNil() || hops > maxPointerHops {
				return Lifted{}
			}
			p := rv.Pointer()
			rv = rv.Elem()
			if rv.Kind() == reflect.Struct {
				out := liftStruct(rv, roundTrip)
				out.P, out.N = p, liftPointer
				return out
			}
			continue
		}
		break
	}
	switch rv.Kind() {
	case reflect.String:
		if rv.Type() == numberType {
			return liftNumber(rv.String(), roundTrip)
		}
		return Lifted{V: rv.String()}
	case reflect.Bool:
		return Lifted{V: rv.Bool()}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if roundTrip {
			return Lifted{V: float64(rv.Int())}
		}
		return Lifted{V: rv.Int()}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if roundTrip {
			return Lifted{V: float64(rv.Uint())}
		}
		return Lifted{V: rv.Uint()}
	case reflect.Float32:
		f := float32(rv.Float())
		if roundTrip {
			// Decoding the shortest float32 form gives this float64.
			g, _ := strconv.ParseFloat(strconv.FormatFloat(float64(f), 'g', -1, 32), 64)
			return Lifted{V: g}
		}
		return Lifted{V: f}
	case reflect.Float64:
		return Lifted{V: rv.Float()}
	case reflect.Struct:
		return liftStruct(rv, roundTrip)
	case reflect.Map:
		return liftMap(rv, limit, roundTrip)
	case reflect.Slice:
		if rv.IsNil() {
			return Lifted{}
		}
		if rv.Type().Elem().Kind() == reflect.Uint8 && !elemHasMethod(rv.Type().Elem()) {
			return Lifted{V: base64.StdEncoding.EncodeToString(rv.Bytes())}
		}
		n := rv.Len()
		out := Lifted{V: liftElems(rv, min(n, limit+1), roundTrip)}
		if n > 0 {
			out.P, out.N = rv.Pointer(), n
		}
		return out
	case reflect.Array:
		return Lifted{V: liftElems(rv, min(rv.Len(), limit+1), roundTrip)}
	}
	return Lifted{} // channels, functions, complex numbers, unsafe pointers
}

// elemHasMethod reports whether a byte slice's element type has a JSON
// method, which makes encoding/json write the slice as an array.
func elemHasMethod(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return t.Implements(marshalerType) || pt.Implements(marshalerType) ||
		t.Implements(textMarshalerType) || pt.Implements(textMarshalerType)
}

// liftElems returns the first n elements of a slice or array.
func liftElems(rv reflect.Value, n int, roundTrip bool) []any {
	a := make([]any, n)
	for i := range n {
		a[i] = elem(rv.Index(i), roundTrip)
	}
	return a
}

// elem is a container's element as the walk receives it. An addressable
// element whose pointer has a JSON method is given as that pointer, as
// encoding/json calls the method on it. For a round trip, a float32 is
// given as the float64 decoding its JSON gives (the walk would otherwise
// widen it exactly).
func elem(e reflect.Value, roundTrip bool) any {
	if !e.CanInterface() {
		return nil
	}
	if roundTrip && e.Kind() == reflect.Float32 {
		return lift(e, 0, true).V
	}
	if e.CanAddr() && e.Kind() != reflect.Pointer && e.Kind() != reflect.Interface {
		pt := reflect.PointerTo(e.Type())
		if !e.Type().Implements(marshalerType) && !e.Type().Implements(textMarshalerType) &&
			(pt.Implements(marshalerType) || pt.Implements(textMarshalerType)) {
			return e.Addr().Interface()
		}
	}
	return e.Interface()
}

func liftNumber(s string, roundTrip bool) Lifted {
	if s == "" {
		s = "0"
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return Lifted{}
	}
	if roundTrip {
		return Lifted{V: f}
	}
	return Lifted{V: json.RawMessage(s)}
}

// liftMethod lifts a value with a MarshalJSON or MarshalText method by its
// output, when the value is small enough for the method to be trusted.
func liftMethod(rv reflect.Value, limit int, roundTrip bool) (Lifted, bool) {
	t := rv.Type()
	if t.Kind() == reflect.Pointer && rv.IsNil() {
		return Lifted{}, false // encoding/json writes null
	}
	if t == rawType {
		b := rv.Bytes()
		if len(b) == 0 {
			return Lifted{}, true
		}
		return liftJSON(slices.Clone(b), roundTrip), true
	}
	isJSON := t.Implements(marshalerType)
	if !isJSON && !t.Implements(textMarshalerType) || !rv.CanInterface() {
		return Lifted{}, false
	}
	if t != timeType && !smallValue(rv, min(limit, maxMarshalerNodes)) {
		return Lifted{}, false
	}
	if isJSON {
		b, err := rv.Interface().(json.Marshaler).MarshalJSON()
		if err != nil || !json.Valid(b) {
			return Lifted{}, true
		}
		return liftJSON(b, roundTrip), true
	}
	b, err := rv.Interface().(encoding.TextMarshaler).MarshalText()
	if err != nil {
		return Lifted{}, true
	}
	return Lifted{V: string(b)}, true
}

// liftJSON lifts a JSON document: decoded for a round trip, else compacted.
func liftJSON(b []byte, roundTrip bool) Lifted {
	if roundTrip {
		var v any
		if json.Unmarshal(b, &v) != nil {
			return Lifted{}
		}
		return Lifted{V: v}
	}
	var c bytes.Buffer
	if json.Compact(&c, b) != nil {
		return Lifted{}
	}
	return Lifted{V: json.RawMessage(c.Bytes())}
}

// smallValue reports whether the reflection walk of rv, every field,
// element and pointer followed (shared ones each time, a cycle until the
// budget runs out), visits at most max values.
func smallValue(rv reflect.Value, max int) bool {
	stack := []reflect.Value{rv}
	for n := 0; len(stack) > 0; n++ {
		if n > max {
			return false
		}
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch v.Kind() {
		case reflect.Pointer, reflect.Interface:
			if !v.IsNil() {
				stack = append(stack, v.Elem())
			}
		case reflect.Struct:
			for i := range v.NumField() {
				stack = append(stack, v.Field(i))
			}
		case reflect.Slice, reflect.Array:
			if v.Len() > max-n {
				return false
			}
			if k := v.Type().Elem().Kind(); k <= reflect.Complex128 || k == reflect.String {
				n += v.Len()
				continue
			}
			for i := range v.Len() {
				stack = append(stack, v.Index(i))
			}
		case reflect.Map:
			if v.Len() > max-n {
				return false
			}
			it := v.MapRange()
			for it.Next() {
				stack = append(stack, it.Key(), it.Value())
			}
		case reflect.String:
			n += v.Len() >> 6
		}
	}
	return true
}

// liftMap lifts a map whose keys encoding/json accepts.
func liftMap(rv reflect.Value, limit int, roundTrip bool) Lifted {
	if rv.IsNil() {
		return Lifted{}
	}
	kt := rv.Type().Key()
	textKey := kt.Kind() != reflect.String && (kt.Implements(textMarshalerType) || reflect.PointerTo(kt).Implements(textMarshalerType))
	switch kt.Kind() {
	case reflect.String, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
	default:
		if !textKey {
			return Lifted{}
		}
	}
	m := make(map[string]any, min(rv.Len(), limit+1))
	it := rv.MapRange()
	for it.Next() {
		if len(m) > limit {
			break
		}
		k := it.Key()
		var key string
		switch {
		case kt.Kind() == reflect.String:
			key = k.String()
		case textKey:
			if k.Kind() == reflect.Pointer && k.IsNil() {
				continue
			}
			tm, ok := k.Interface().(encoding.TextMarshaler)
			if !ok {
				continue
			}
			b, err := tm.MarshalText()
			if err != nil {
				continue
			}
			key = string(b)
		case k.CanInt():
			key = strconv.FormatInt(k.Int(), 10)
		default:
			key = strconv.FormatUint(k.Uint(), 10)
		}
		m[key] = elem(it.Value(), roundTrip)
	}
	return Lifted{V: m, P: rv.Pointer()}
}

// liftStruct lifts a struct by its encoded fields.
func liftStruct(rv reflect.Value, roundTrip bool) Lifted {
	fields := structFields(rv.Type())
	m := make(map[string]any, len(fields))
	for i := range fields {
		f := &fields[i]
		fv, err := rv.FieldByIndexErr(f.index)
		if err != nil {
			continue // through a nil embedded pointer
		}
		if f.omitEmpty && emptyValue(fv) || f.omitZero && zeroValue(fv) {
			continue
		}
		if f.quoted {
			if s, ok := quotedField(fv, roundTrip); ok {
				m[f.name] = s
				continue
			}
		}
		m[f.name] = elem(fv, roundTrip)
	}
	return Lifted{V: m}
}

// quotedField is a field with the ",string" option: its scalar value as a
// JSON string.
func quotedField(fv reflect.Value, roundTrip bool) (string, bool) {
	for fv.Kind() == reflect.Pointer {
		if fv.IsNil() {
			return "", false
		}
		fv = fv.Elem()
	}
	switch fv.Kind() {
	case reflect.String:
		b, _ := json.Marshal(fv.String())
		return string(b), true
	case reflect.Bool:
		return strconv.FormatBool(fv.Bool()), true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(fv.Int(), 10), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.FormatUint(fv.Uint(), 10), true
	case reflect.Float32, reflect.Float64:
		w := jsonWriter{}
		bits := 64
		if fv.Kind() == reflect.Float32 {
			bits = 32
		}
		w.float(fv.Float(), bits)
		return string(w.buf), true
	}
	return "", false
}

func emptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

type isZeroer interface{ IsZero() bool }

func zeroValue(v reflect.Value) bool {
	if v.Kind() == reflect.Pointer && v.IsNil() {
		return true
	}
	if v.CanInterface() {
		if z, ok := v.Interface().(isZeroer); ok {
			return z.IsZero()
		}
	}
	return v.IsZero()
}

// structField is a field encoding/json writes.
type structField struct {
	name                        string
	index                       []int
	tagged                      bool
	omitEmpty, omitZero, quoted bool
}

var fieldCache sync.Map // reflect.Type → []structField

// structFields lists the fields encoding/json writes for t, in its order,
// with its rules for embedded structs: the shallowest field of a name wins,
// a tagged one over untagged ones at the same depth, and a name still
// ambiguous is dropped.
func structFields(t reflect.Type) []structField {
	if f, ok := fieldCache.Load(t); ok {
		return f.([]structField)
	}
	type queued struct {
		t     reflect.Type
		index []int
	}
	var all []structField
	depthOf := map[string]int{}
	var current []queued
	next := []queued{{t: t}}
	visited := map[reflect.Type]bool{}
	for depth := 0; len(next) > 0; depth++ {
		current, next = next, nil
		for _, q := range current {
			if visited[q.t] {
				continue
			}
			visited[q.t] = true
			for i := range q.t.NumField() {
				sf := q.t.Field(i)
				ft := sf.Type
				if sf.Anonymous {
					if ft.Kind() == reflect.Pointer {
						ft = ft.Elem()
					}
					if !sf.IsExported() && ft.Kind() != reflect.Struct {
						continue
					}
				} else if !sf.IsExported() {
					continue
				}
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				index := append(slices.Clone(q.index), i)
				if name == "" && sf.Anonymous && ft.Kind() == reflect.Struct {
					next = append(next, queued{t: ft, index: index})
					continue
				}
				f := structField{name: name, index: index, tagged: name != ""}
				if f.name == "" {
					f.name = sf.Name
				}
				for o := range strings.SplitSeq(opts, ",") {
					switch o {
					case "omitempty":
						f.omitEmpty = true
					case "omitzero":
						f.omitZero = true
					case "string":
						f.quoted = true
					}
				}
				if d, ok := depthOf[f.name]; !ok || d == depth {
					depthOf[f.name] = depth
					all = append(all, f)
				}
			}
		}
	}
	// Keep, for each name, its one dominant field.
	var out []structField
	for i, f := range all {
		var same []int
		for j, g := range all {
			if g.name == f.name && len(g.index) == len(f.index) {
				same = append(same, j)
			}
		}
		if len(same) == 1 {
			out = append(out, f)
			continue
		}
		tagged := -1
		n := 0
		for _, j := range same {
			if all[j].tagged {
				tagged, n = j, n+1
			}
		}
		if n == 1 && tagged == i {
			out = append(out, f)
		}
	}
	slices.SortStableFunc(out, func(a, b structField) int { return slices.Compare(a.index, b.index) })
	fieldCache.Store(t, out)
	return out
}
