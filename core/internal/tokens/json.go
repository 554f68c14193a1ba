package tokens

import (
	"slices"
	"sync"
	"unsafe"

	"google.golang.org/genai"
)

// The JSON writer: values written as the compact JSON a provider receives,
// with an explicit stack, bounded in depth and size.

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

func sortStrings(s []string) { slices.Sort(s) }
