package tokens

import (
	"encoding"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Lifting maps and structs: fields, tags and omitempty as encoding/json reads
// them, cached per type.

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

var fieldCache sync.Map

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
