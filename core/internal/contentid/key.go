package contentid

import (
	"reflect"
	"unsafe"

	"google.golang.org/genai"
)

// Mix is the splitmix64 finalizer: a cheap, well-distributed 64-bit mixer.
func Mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// Tags a record writes before each value, so values of different kinds
// never match, and seeds that keep keys of different things apart.
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
	tagInt64      = 19

	keySeedContent = 0x5bd1e995
	keySeedDecl    = 0x1f3d5b79
	keySeedEntry   = 23
)

// Keyer folds values into a 64-bit key, each mixed in after the last: the
// count cache's keys, and the chains and config hashes built from them.
type Keyer struct{ h uint64 }

// NewKeyer starts a key from seed.
func NewKeyer(seed uint64) Keyer { return Keyer{h: seed} }

// Add mixes v into the key.
func (k *Keyer) Add(v uint64) { k.h = Mix(k.h ^ v + 0x9e3779b97f4a7c15) }

// Sum is the key of what was added so far.
func (k Keyer) Sum() uint64 { return k.h }

func (k *Keyer) str(s string) {
	k.Add(uint64(uintptr(unsafe.Pointer(unsafe.StringData(s)))))
	k.Add(uint64(len(s)))
}

// Key is the count cache's key of c: what Tape.Record would record, hashed
// (strings by address), a map's entries in any order. ok is false when the
// tape cannot record c, which must then not be cached.
func Key(c *genai.Content) (uint64, bool) {
	s := identity{mode: sinkKey, k: Keyer{h: keySeedContent}}
	if c == nil || !s.tapeContent(c) {
		return 0, false
	}
	return s.k.h, true
}

// DeclKey is the identity key of a function declaration: its strings and
// schemas by address, as tools build their schemas once (one edited in
// place keeps its old count until the cache drops it); ok is false for a
// schema that is not pointer-shaped.
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

// Bounds of a record's walk of a payload, past which the content is not
// recorded (nor cached, which only costs a recount). They also bound a
// value with a cycle or with shared sub-values (exponential expansion).
const (
	maxKeyDepth = 64
	maxKeyNodes = 1 << 20
)
