package tokens

import (
	"bytes"
	"encoding"
	"encoding/base64"
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strconv"
	"time"
)

// Lifting Go values into JSON-shaped values (maps, slices, strings, numbers),
// bounded, as encoding/json would marshal them.

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

// reflect.Type → []structField
