package contentid

import (
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"
)

// identityLeaf is one field reached from genai.Content, with a builder of
// values that differ only in that field.
type identityLeaf struct {
	name string
	// variants is how many pairwise different values build makes.
	variants int
	// build returns a value of the walked type whose containers on the way
	// to the field are allocated and whose field holds variant v (0: zero).
	build func(v int) reflect.Value
}

// identityLeaves walks t (structs, through pointers and slices) down to its
// scalar, byte-slice and map fields. A field of a kind it does not know
// fails the test, so a new genai type is noticed too.
func identityLeaves(t *testing.T, typ reflect.Type, name string) []identityLeaf {
	t.Helper()
	switch typ.Kind() {
	case reflect.Struct:
		var out []identityLeaf
		for i := range typ.NumField() {
			f := typ.Field(i)
			if !f.IsExported() {
				continue
			}
			for _, l := range identityLeaves(t, f.Type, name+"."+f.Name) {
				out = append(out, identityLeaf{name: l.name, variants: l.variants, build: func(v int) reflect.Value {
					s := reflect.New(typ).Elem()
					s.Field(i).Set(l.build(v))
					return s
				}})
			}
		}
		return out
	case reflect.Pointer:
		if typ.Elem().Kind() != reflect.Struct {
			scalar := scalarLeaf(t, typ.Elem(), name)
			return []identityLeaf{{name: name, variants: scalar.variants + 1, build: func(v int) reflect.Value {
				if v == 0 {
					return reflect.Zero(typ)
				}
				p := reflect.New(typ.Elem())
				p.Elem().Set(scalar.build(v - 1))
				return p
			}}}
		}
		var out []identityLeaf
		for _, l := range identityLeaves(t, typ.Elem(), name) {
			out = append(out, identityLeaf{name: l.name, variants: l.variants, build: func(v int) reflect.Value {
				p := reflect.New(typ.Elem())
				p.Elem().Set(l.build(v))
				return p
			}})
		}
		return out
	case reflect.Slice:
		if typ.Elem().Kind() == reflect.Uint8 {
			return []identityLeaf{{name: name, variants: 3, build: func(v int) reflect.Value {
				if v == 0 {
					return reflect.Zero(typ)
				}
				return reflect.ValueOf([]byte{byte(v), 0x42})
			}}}
		}
		var out []identityLeaf
		for _, l := range identityLeaves(t, typ.Elem(), name+"[]") {
			out = append(out, identityLeaf{name: l.name, variants: l.variants, build: func(v int) reflect.Value {
				s := reflect.MakeSlice(typ, 1, 1)
				s.Index(0).Set(l.build(v))
				return s
			}})
		}
		return out
	case reflect.Map:
		require.Equal(t, reflect.TypeOf(map[string]any(nil)), typ, "%s: a map type the test does not know", name)
		return []identityLeaf{{name: name, variants: 3, build: func(v int) reflect.Value {
			if v == 0 {
				return reflect.Zero(typ)
			}
			return reflect.ValueOf(map[string]any{"key": strings.Repeat("v", v)})
		}}}
	}
	return []identityLeaf{scalarLeaf(t, typ, name)}
}

// scalarLeaf is a string, bool or number field: zero, then one or two other
// values.
func scalarLeaf(t *testing.T, typ reflect.Type, name string) identityLeaf {
	t.Helper()
	set := func(v int) reflect.Value {
		x := reflect.New(typ).Elem()
		if v == 0 {
			return x
		}
		switch typ.Kind() {
		case reflect.String:
			x.SetString(strings.Repeat("s", v))
		case reflect.Bool:
			x.SetBool(true)
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			x.SetInt(int64(v))
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			x.SetUint(uint64(v))
		case reflect.Float32, reflect.Float64:
			x.SetFloat(float64(v) + 0.5)
		}
		return x
	}
	switch typ.Kind() {
	case reflect.Bool:
		return identityLeaf{name: name, variants: 2, build: set}
	case reflect.String, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return identityLeaf{name: name, variants: 3, build: set}
	}
	t.Fatalf("%s: field of kind %s: teach walkContent and this test about it", name, typ.Kind())
	return identityLeaf{}
}

// TestContentIdentity_CoversEveryField: for every field of genai.Content
// and of the types nested in it (genai.Part and everything under it), two
// contents that differ only in that field have different cache keys and
// fingerprints, and neither matches the other's tape record. A field genai
// adds later fails here until the identity covers it. No field is exempt:
// every field genai defines may be sent.
func TestContentIdentity_CoversEveryField(t *testing.T) {
	leaves := identityLeaves(t, reflect.TypeOf(genai.Content{}), "Content")
	require.Greater(t, len(leaves), 40, "the walk reaches the nested types")
	for _, l := range leaves {
		t.Run(l.name, func(t *testing.T) {
			contents := make([]*genai.Content, l.variants)
			for v := range contents {
				contents[v] = l.build(v).Addr().Interface().(*genai.Content)
			}
			for i := range contents {
				for j := i + 1; j < len(contents); j++ {
					ki, ok := Key(contents[i])
					require.True(t, ok)
					kj, ok := Key(contents[j])
					require.True(t, ok)
					assert.NotEqual(t, ki, kj, "cache key: variant %d and %d", i, j)
					assert.NotEqual(t, Fingerprint(contents[i]), Fingerprint(contents[j]), "fingerprint: variant %d and %d", i, j)
					var tp Tape
					require.True(t, tp.Record(contents[i]))
					assert.True(t, match(&tp, contents[i], Mark{}, tp.End()), "tape: variant %d matches its record", i)
					assert.False(t, match(&tp, contents[j], Mark{}, tp.End()), "tape: variant %d and %d", i, j)
				}
			}
		})
	}
}
