// Package o200k is the exact ground truth of the test kits: the count of
// OpenAI's o200k_base tokenizer (github.com/tiktoken-go/tokenizer), and a
// [coretest.Counter] built on it. It is a package of its own because the
// tokenizer is a large download (16 MB unpacked, with its regular-expression
// engine): a test that asks for exact counts imports it, and a user whose
// tests do not never downloads it.
package o200k

import (
	"hash/maphash"
	"sync"

	"github.com/tiktoken-go/tokenizer"

	"github.com/adk-contextguard/contextguard/core/coretest"
)

var o200k = sync.OnceValues(func() (tokenizer.Codec, error) {
	return tokenizer.Get(tokenizer.O200kBase)
})

// tokenCacheLimit bounds the text bytes whose counts are cached; when it is
// exceeded the cache starts over.
const tokenCacheLimit = 512 << 20

type textKey struct {
	h uint64
	n int
}

// tokenCache caches o200k counts per distinct string for the whole process:
// the matrix generates the same payloads in many runs.
var tokenCache = struct {
	sync.Mutex
	m     map[textKey]int
	bytes int
}{m: map[textKey]int{}}

// hashSeed keys the count cache.
var hashSeed = maphash.MakeSeed()

// Count returns the exact o200k_base token count of s. Counts are cached
// per distinct string. Text the tokenizer rejects is counted as len/4.
func Count(s string) int {
	if s == "" {
		return 0
	}
	key := textKey{h: maphash.String(hashSeed, s), n: len(s)}
	tokenCache.Lock()
	n, ok := tokenCache.m[key]
	tokenCache.Unlock()
	if ok {
		return n
	}
	n = countChunked(s)
	tokenCache.Lock()
	if tokenCache.bytes+len(s) > tokenCacheLimit {
		tokenCache.m = map[textKey]int{}
		tokenCache.bytes = 0
	}
	tokenCache.m[key] = n
	tokenCache.bytes += len(s)
	tokenCache.Unlock()
	return n
}

// chunkSize is the size above which text is split before tokenization, at
// places where o200k's pre-tokenizer always starts a new piece, so the sum
// of the chunk counts equals the count of the whole text.
const chunkSize = 16 << 10

func countChunked(s string) int {
	codec, err := o200k()
	if err != nil {
		return (len(s) + 3) / 4
	}
	total := 0
	for len(s) > 0 {
		cut := len(s)
		if len(s) > chunkSize {
			cut = safeCut(s, chunkSize)
		}
		n, err := codec.Count(s[:cut])
		if err != nil {
			n = (cut + 3) / 4
		}
		total += n
		s = s[cut:]
	}
	return total
}

// safeCut returns an index >= from where s can be split without changing the
// o200k tokenization: right after a newline that is followed by a letter or
// digit (the newline run ends there and the next piece starts there), or
// before a single space between two ASCII letters (the word before ends
// there and " word" is one piece). If no such place exists, it returns
// len(s).
func safeCut(s string, from int) int {
	for i := from; i < len(s)-1; i++ {
		if s[i] == '\n' && isASCIIAlnum(s[i+1]) {
			return i + 1
		}
		if s[i] == ' ' && i > 0 && isASCIILetter(s[i-1]) && isASCIILetter(s[i+1]) {
			return i
		}
	}
	return len(s)
}

func isASCIILetter(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }

func isASCIIAlnum(c byte) bool {
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

// Counter returns a ground truth based on the exact o200k_base tokenizer:
// [coretest.TextCounter] with [Count], times factor (a provider factor: 1.0
// for GPT-like models, about 1.2 for Claude). A factor <= 0 counts as 1.
func Counter(factor float64) coretest.Counter {
	return coretest.TextCounter(counterName, Count, factor)
}

// counterName is the name the counter prints, which the stress matrix's
// tables and the test kits' output show.
const counterName = "TokenizerCounter"
