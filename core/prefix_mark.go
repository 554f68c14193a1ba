package core

import (
	"encoding/json"
	"math"

	"google.golang.org/genai"
)

// The prefix record's sampled mark: six contents hashed by their shape,
// lengths and ends, about 100 ns each whatever their size (ARCHITECTURE.md,
// Counting).

// Seeds that keep the hashes of different things apart: a mark, a config
// hash, and the cache keys of instructions and of declarations (whose
// identity keys come from different walks and could otherwise collide).
const (
	markSeed        = 0x70726566 // "pref"
	configSeed      = 0x636f6e66 // "conf"
	instructionSeed = 0x696e7374 // "inst"
	declarationSeed = 0x6465636c // "decl"
	// nilMark stands for a nil content or declaration, which no walk
	// produces.
	nilMark = 1
)

// prefixSamples is how many contents a prefix mark samples.
const prefixSamples = 6

// samplePositions are the contents of cs[:n] a prefix mark samples: the
// first, the quarters and the last two (see the comment at the top).
func samplePositions(n int) [prefixSamples]int {
	return [prefixSamples]int{0, n / 4, n / 2, n * 3 / 4, max(n-2, 0), n - 1}
}

// prefixMarks is the mark of cs[:n]: n and the sampled contents.
func prefixMarks(cs []*genai.Content, n int) uint64 {
	k := keyer{h: uint64(n) ^ markSeed}
	if n <= 0 || n > len(cs) {
		return k.h
	}
	for _, i := range samplePositions(n) {
		k.add(uint64(i))
		k.add(contentMark(cs[i]))
	}
	return k.h
}

// contentMark is a content's sampled mark: the walk of the fingerprint
// (walkContent, so no field a provider is sent is left out), with strings,
// bytes and payloads sampled.
func contentMark(c *genai.Content) uint64 {
	if c == nil {
		return nilMark
	}
	s := identity{byValue: true, sampled: true, h: fnvOffset}
	walkContent(c, &s)
	return s.h
}

// sample hashes a string's length and its first and last sampleBytes bytes.
func (s *identity) sample(x string) { s.h = sampleString(s.h, x) }

// sampleValue hashes a payload's sample.
func (s *identity) sampleValue(m map[string]any) { s.h = sampleOf(s.h, m, true) }

// sampleString is FNV-64a over a string's length and its first and last
// sampleBytes bytes.
func sampleString(h uint64, x string) uint64 {
	h = fnvUint64(h, uint64(len(x)))
	if len(x) <= 2*sampleBytes {
		return fnvString(h, x)
	}
	return fnvString(fnvString(h, x[:sampleBytes]), x[len(x)-sampleBytes:])
}

// sampleOf is FNV-64a over a payload's sample: scalars as the fingerprint
// reads them (numbers as the float64 a database returns), strings sampled,
// and, at the top, the entries of a map of at most maxSampledKeys keys,
// combined in any order; nested containers by their size.
func sampleOf(h uint64, v any, top bool) uint64 {
	switch x := v.(type) {
	case nil:
		return fnvUint64(h, 1)
	case string:
		return sampleString(fnvUint64(h, 2), x)
	case bool:
		return fnvUint64(h, 3+boolBit(x))
	case map[string]any:
		h = fnvUint64(fnvUint64(h, 5), uint64(len(x)))
		if !top || len(x) > maxSampledKeys {
			return h
		}
		var sum uint64
		for key, e := range x {
			sum += mix(sampleOf(sampleString(fnvOffset, key), e, false))
		}
		return fnvUint64(h, sum)
	case []any:
		return fnvUint64(fnvUint64(h, 6), uint64(len(x)))
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return fnvUint64(h, 8)
		}
		return fnvUint64(fnvUint64(h, 7), math.Float64bits(f))
	}
	if f, ok := asFloat(v); ok {
		return fnvUint64(fnvUint64(h, 7), math.Float64bits(f))
	}
	// A typed value: a database returns it as a map, whose mark differs,
	// and the record then does not match (a full count).
	return fnvUint64(h, 9)
}

// fnvString is FNV-64a over x's bytes, from h.
func fnvString(h uint64, x string) uint64 {
	for i := 0; i < len(x); i++ {
		h ^= uint64(x[i])
		h *= fnvPrime
	}
	return h
}

// fnvUint64 is FNV-64a over n's 8 bytes, big-endian, from h.
func fnvUint64(h, n uint64) uint64 {
	for shift := 56; shift >= 0; shift -= 8 {
		h ^= (n >> shift) & 0xff
		h *= fnvPrime
	}
	return h
}
