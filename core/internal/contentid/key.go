package contentid

import (
	"math"
	"reflect"
	"unsafe"

	"google.golang.org/genai"
)

// The count cache's key of a content: the identity of its strings and its
// shape, read without touching a byte (ARCHITECTURE.md, Counting).

// Mix is the splitmix64 finalizer: a cheap, well-distributed 64-bit mixer.
func Mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// What a key mixes in besides the values themselves: a tag before each
// value, one per kind, so that values of different kinds (nil and false, a
// number and a string, an object and an array) never key alike (int and
// int64 share one: both carry the same number); and a seed per Keyer, so
// that a content's, a declaration's and a map entry's keys stay apart, and
// so do equal values at different depths (depth is added to
// keySeedValue). The values are arbitrary; only their being distinct
// matters, and they must not change while a process runs.
const (
	tagNoSchema   = 1 // a declaration's schema that is not set
	tagNilPayload = 9 // a call's arguments or a response's value that is nil
	tagNil        = 10
	tagString     = 11
	tagTrue       = 12
	tagFalse      = 13
	tagFloat      = 14
	tagInt        = 15
	tagObject     = 16
	tagArray      = 17
	tagStrings    = 18
	tagInt64      = 19 // a tape's; the key adds int64 as tagInt

	keySeedContent = 0x5bd1e995
	keySeedDecl    = 0x1f3d5b79
	keySeedValue   = 17
	keySeedEntry   = 23
)

// Keyer folds values into a 64-bit key, each mixed in after the last: the
// count cache's key of a content, and the chains and config hashes the
// engine builds from such keys.
type Keyer struct{ h uint64 }

// NewKeyer starts a key from seed, which keeps keys of different things
// apart.
func NewKeyer(seed uint64) Keyer { return Keyer{h: seed} }

// Add mixes v into the key.
func (k *Keyer) Add(v uint64) { k.h = Mix(k.h ^ v + 0x9e3779b97f4a7c15) }

// Sum is the key of what was added so far.
func (k Keyer) Sum() uint64 { return k.h }

func (k *Keyer) str(s string) {
	k.Add(uint64(uintptr(unsafe.Pointer(unsafe.StringData(s)))))
	k.Add(uint64(len(s)))
}

// Key is the identity key of c, from the walk the fingerprint makes
// too (walkContent): strings and byte slices by address and length, shape,
// numbers and map keys by value. ok is false when c holds values whose
// changes the key cannot see, and must not be cached.
func Key(c *genai.Content) (uint64, bool) {
	s := identity{mode: sinkKey, k: Keyer{h: keySeedContent}}
	if !walkContent(c, &s) {
		return 0, false
	}
	return s.k.h, true
}

// DeclKey is the identity key of a function declaration: its strings by
// address, and its schemas (*genai.Schema, *jsonschema.Schema, map[string]any
// or any other pointer-shaped value) by address and, for maps, length. Tools
// build their schemas once and do not change them afterwards, so walking a
// schema on every call would only cost time; a schema edited in place after
// registration keeps its old count until the cache drops it. ok is false for
// schema values that are not pointer-shaped.
func DeclKey(d *genai.FunctionDeclaration) (uint64, bool) {
	k := Keyer{h: keySeedDecl}
	k.str(d.Name)
	k.str(d.Description)
	k.Add(uint64(uintptr(unsafe.Pointer(d.Parameters))))
	k.Add(uint64(uintptr(unsafe.Pointer(d.Response))))
	for _, v := range [2]any{d.ParametersJsonSchema, d.ResponseJsonSchema} {
		switch x := v.(type) {
		case nil:
			k.Add(tagNoSchema)
		case map[string]any:
			k.Add(uint64(reflect.ValueOf(x).Pointer()))
			k.Add(uint64(len(x)))
		default:
			rv := reflect.ValueOf(v)
			if rv.Kind() != reflect.Pointer {
				return 0, false
			}
			k.Add(uint64(rv.Pointer()))
		}
	}
	return k.h, true
}

// value adds a map-valued payload to the key.
func (k *Keyer) value(m map[string]any) bool {
	if m == nil {
		k.Add(tagNilPayload)
		return true
	}
	budget := maxKeyNodes
	vk, ok := valueKey(m, 0, &budget)
	k.Add(vk)
	return ok
}

// valueKey keys a JSON-like value by its shape, numbers, booleans and the
// addresses of its strings. Map entries are combined order-independently.
// budget is the number of values the walk may still visit.
func valueKey(v any, depth int, budget *int) (uint64, bool) {
	*budget--
	if depth > maxKeyDepth || *budget < 0 {
		return 0, false
	}
	k := Keyer{h: uint64(depth) + keySeedValue}
	switch x := v.(type) {
	case nil:
		k.Add(tagNil)
	case string:
		k.Add(tagString)
		k.str(x)
	case bool:
		if x {
			k.Add(tagTrue)
		} else {
			k.Add(tagFalse)
		}
	case float64:
		k.Add(tagFloat)
		k.Add(math.Float64bits(x))
	case int:
		k.Add(tagInt)
		k.Add(uint64(x))
	case int64:
		k.Add(tagInt)
		k.Add(uint64(x))
	case map[string]any:
		k.Add(tagObject)
		var sum uint64
		for key, val := range x {
			e := Keyer{h: keySeedEntry}
			e.str(key)
			vk, ok := valueKey(val, depth+1, budget)
			if !ok {
				return 0, false
			}
			e.Add(vk)
			sum += e.h
		}
		k.Add(sum)
		k.Add(uint64(len(x)))
	case []any:
		k.Add(tagArray)
		for _, val := range x {
			vk, ok := valueKey(val, depth+1, budget)
			if !ok {
				return 0, false
			}
			k.Add(vk)
		}
		k.Add(uint64(len(x)))
	case []string:
		k.Add(tagStrings)
		for _, s := range x {
			k.str(s)
		}
		k.Add(uint64(len(x)))
	default:
		// Other types (structs, typed maps, byte slices) may change in ways
		// the walk cannot see: the content is not cached at all.
		return 0, false
	}
	return k.h, true
}

// Bounds of the key's walk of a value. Past either, the content is not
// cached, which only costs a recount. They also bound the walk of a value
// with a cycle (its depth is unbounded) or with shared sub-values (its
// expansion can be exponential in its size): the walk stops at the first
// bound it meets.
const (
	// maxKeyDepth bounds the nesting walked.
	maxKeyDepth = 64
	// maxKeyNodes bounds the values walked for one payload, far above what
	// tool results hold.
	maxKeyNodes = 1 << 20
)
