package core

import (
	"runtime"
	"sync"
	"sync/atomic"

	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/contentid"
)

// Incremental counting (ARCHITECTURE.md, Counting). ADK rebuilds the request from
// the append-only event log every step, deep-copying each content, so all
// but the newest contents are the same as in the previous call. The copies
// are new structs and maps, but their strings share the session events'
// bytes. A content is therefore identified, without reading its bytes, by
// the addresses and lengths of its strings plus its shape, numbers and map
// keys; the cache entry keeps the content alive, so no address it names can
// be reused for other bytes while the entry exists. Any change to a content
// (a new string, an added key, another number) changes its key, so a stale
// count is never served. Inline data (of the part or of a function
// response's parts) is keyed by the address and length of its bytes, which
// the pinned entry keeps alive; the key and the fingerprint come from the one
// walk of core/internal/contentid.

// countCache holds the per-content counts of one session.
type countCache struct {
	entries map[uint64]*countEntry
	decls   map[uint64]*declEntry
	fps     map[uint64]uncountedFingerprint
	gen     uint32
	live    int // entries touched in the current generation
	// bytes is what the entries retain, about (contentRetained).
	bytes int
}

// declEntry is the cached count of one tool declaration. Declarations are
// rebuilt by ADK every step, but their strings and schema values are the
// tool's own.
type declEntry struct {
	pin    *genai.FunctionDeclaration
	tokens int
	gen    uint32
}

type countEntry struct {
	pin    *genai.Content // keeps the strings named by the key alive
	role   string
	parts  int
	tokens int
	fp     string // fingerprint, computed on first use
	gen    uint32
	size   int // bytes retained by pinning the content (contentRetained)
	// pruned is the content's tool-result-pruned copy, built on first use
	// (WithToolResultPruning).
	pruned *prunedContent
	// prunedRecall is the same copy for a request that declares the recall
	// tool, whose placeholders say how to recall the result.
	prunedRecall *prunedContent
}

// Bounds of one session's count cache.
const (
	// maxCacheEntries bounds the contents' entries; past it, entries not
	// used by the latest request are dropped.
	maxCacheEntries = 4096
	// minSweepEntries is the size below which the cache is not swept for
	// entries the latest request did not use: a short session's few stale
	// entries cost less than the pass.
	minSweepEntries = 64
	// maxDeclEntries bounds the tool declarations' entries: an agent has
	// tens of tools, and a quarter of the contents' bound leaves room for
	// many agents of a session and their tools' changes.
	maxDeclEntries = maxCacheEntries / 4
)

func newCountCache() *countCache {
	return &countCache{entries: make(map[uint64]*countEntry), decls: make(map[uint64]*declEntry), fps: make(map[uint64]uncountedFingerprint)}
}

// begin starts a new request: entries not touched since the previous
// request are dropped once the cache holds more than twice what a request
// uses, which bounds it by the size of the session's history.
func (c *countCache) begin() {
	if len(c.entries) > max(2*c.live, minSweepEntries) || len(c.entries) > maxCacheEntries {
		c.dropUntouched()
	}
	if len(c.decls) > maxDeclEntries {
		for k, e := range c.decls {
			if e.gen != c.gen {
				delete(c.decls, k)
			}
		}
	}
	c.gen++
	c.live = 0
}

// entry returns the cache entry of x, counting it with e on a miss; nil when
// x cannot be cached.
func (c *countCache) entry(e tokenEstimator, salt uint64, x *genai.Content) *countEntry {
	k, ok := contentid.Key(x)
	if !ok {
		return nil
	}
	k ^= salt
	if ent, ok := c.entries[k]; ok && ent.role == x.Role && ent.parts == len(x.Parts) {
		if ent.gen != c.gen {
			ent.gen = c.gen
			c.live++
		}
		return ent
	}
	ent := &countEntry{pin: x, role: x.Role, parts: len(x.Parts), tokens: e.Content(x), gen: c.gen}
	c.add(k, ent)
	return ent
}

// cachedEstimator counts contents through a session's cache.
type cachedEstimator struct {
	tokenEstimator
	cache *countCache
	salt  uint64 // separates estimators sharing a session's cache
}

func (ce cachedEstimator) Content(x *genai.Content) int {
	if x == nil {
		return 0
	}
	if ent := ce.cache.entry(ce.tokenEstimator, ce.salt, x); ent != nil {
		return ent.tokens
	}
	return ce.tokenEstimator.Content(x)
}

func (ce cachedEstimator) Declaration(d *genai.FunctionDeclaration) int {
	if d == nil {
		return 0
	}
	k, ok := contentid.DeclKey(d)
	if !ok {
		return ce.tokenEstimator.Declaration(d)
	}
	k ^= ce.salt
	if ent, hit := ce.cache.decls[k]; hit {
		ent.gen = ce.cache.gen
		return ent.tokens
	}
	ent := &declEntry{pin: d, tokens: ce.tokenEstimator.Declaration(d), gen: ce.cache.gen}
	ce.cache.decls[k] = ent
	return ent.tokens
}

// parallelMinMisses is the number of uncounted contents from which a
// request's first count is spread over the CPUs: below it, starting
// goroutines costs about what it saves.
const parallelMinMisses = 16

// maxWorkers bounds the goroutines spread starts: counting and hashing run
// at memory speed, and more cores than this only contend for its
// bandwidth.
const maxWorkers = 8

// spreads reports whether spread would run n items in parallel: at least
// parallelMinMisses of them, and more than one CPU.
func spreads(n int) bool {
	return n >= parallelMinMisses && runtime.GOMAXPROCS(0) > 1
}

// spread runs f(0), ..., f(n-1) on up to maxWorkers goroutines and reports
// whether it ran them: when spreads(n) is false it runs nothing and returns
// false, for the caller's sequential path. The calls of f must be
// independent.
func spread(n int, f func(i int)) bool {
	if !spreads(n) {
		return false
	}
	workers := min(runtime.GOMAXPROCS(0), maxWorkers)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				f(i)
			}
		}()
	}
	wg.Wait()
	return true
}

// prefetch counts, in parallel, the contents of cs the cache has not seen,
// when most of them are new (the first call of a session in this process:
// after a restart, or on a replica that has not served it yet). In steady
// state, when one content is new per call, it costs a length check.
// Counting is a pure function of a content and estimators are safe for
// concurrent use, so the counts are the ones content would compute.
func (ce cachedEstimator) prefetch(cs []*genai.Content) {
	if len(cs) < parallelMinMisses || len(ce.cache.entries) >= len(cs)/2 {
		return
	}
	type miss struct {
		key uint64
		x   *genai.Content
		n   int
	}
	var misses []miss
	for _, x := range cs {
		if x == nil {
			continue
		}
		k, ok := contentid.Key(x)
		if !ok {
			continue
		}
		k ^= ce.salt
		if _, hit := ce.cache.entries[k]; !hit {
			misses = append(misses, miss{key: k, x: x})
		}
	}
	if !spread(len(misses), func(i int) { misses[i].n = ce.tokenEstimator.Content(misses[i].x) }) {
		return
	}
	for _, m := range misses {
		if _, hit := ce.cache.entries[m.key]; hit {
			continue // the same content twice in one request
		}
		ce.cache.add(m.key, &countEntry{pin: m.x, role: m.x.Role, parts: len(m.x.Parts), tokens: m.n, gen: ce.cache.gen})
	}
}

// fingerprint is the content's fingerprint, cached with its count when the
// content was counted, else in the cache's few fingerprints of contents
// that are not counted (the last content a summary covers lies in the
// prefix a matching prefix record spares counting: prefix_count.go).
func (ce cachedEstimator) fingerprint(x *genai.Content) string {
	if x == nil {
		return contentid.Fingerprint(x)
	}
	k, ok := contentid.Key(x)
	if !ok {
		return contentid.Fingerprint(x)
	}
	k ^= ce.salt
	if ent, hit := ce.cache.entries[k]; hit && ent.role == x.Role && ent.parts == len(x.Parts) {
		if ent.fp == "" {
			ent.fp = contentid.Fingerprint(x)
		}
		return ent.fp
	}
	if f, hit := ce.cache.fps[k]; hit {
		return f.fp
	}
	if len(ce.cache.fps) >= maxUncountedFingerprints {
		clear(ce.cache.fps)
	}
	f := uncountedFingerprint{pin: x, fp: contentid.Fingerprint(x)}
	ce.cache.fps[k] = f
	return f.fp
}

// maxUncountedFingerprints bounds the fingerprints kept for contents that
// are not counted: a session looks for one (the summary's watermark) per
// call, a few while a compaction moves it.
const maxUncountedFingerprints = 8

// uncountedFingerprint is the fingerprint of a content that is not counted,
// pinned like a count entry.
type uncountedFingerprint struct {
	pin *genai.Content
	fp  string
}

// dropUntouched drops the entries the current request did not use. A Go
// map keeps the room of its largest size, so when most entries go, the
// rest move to a new map and an idle session keeps only what it holds.
func (c *countCache) dropUntouched() {
	if len(c.entries) == c.live {
		return
	}
	was := len(c.entries)
	for k, e := range c.entries {
		if e.gen != c.gen {
			c.bytes -= e.size
			delete(c.entries, k)
		}
	}
	if len(c.entries)*shrinkRatio < was {
		m := make(map[uint64]*countEntry, len(c.entries)) // maps.Clone keeps the room
		for k, e := range c.entries {
			m[k] = e
		}
		c.entries = m
	}
}

// shrinkRatio is how many times smaller than it was the cache must get for
// dropUntouched to move its entries to a new map.
const shrinkRatio = 4

// add stores a new entry.
func (c *countCache) add(k uint64, e *countEntry) {
	e.size = contentRetained(e.pin)
	c.bytes += e.size
	c.entries[k] = e
	c.live++
}
