package core

import (
	"runtime"
	"sync"
	"sync/atomic"

	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/contentid"
)

// Incremental counting (ARCHITECTURE.md, Counting): a content is keyed
// without reading its strings (contentid.Key); an entry pins its content so
// no address its key names is reused.

// countCache holds the per-content counts of one session.
type countCache struct {
	entries map[uint64]*countEntry
	decls   map[uint64]*declEntry
	fps     map[uint64]uncountedFingerprint
	gen     uint32
	live    int // entries touched in the current generation
	bytes   int // what the entries retain, about (contentRetained)
}

// declEntry is the cached count of one tool declaration, whose strings and
// schemas are the tool's own though ADK rebuilds it every step.
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
	// pruned is the content's pruned copy, built on first use;
	// prunedRecall its copy for a request that declares the recall tool.
	pruned, prunedRecall *prunedContent
}

// Bounds of one session's count cache.
const (
	// maxCacheEntries bounds the contents' entries; past it, entries not
	// used by the latest request are dropped.
	maxCacheEntries = 4096
	// minSweepEntries is the size below which stale entries cost less
	// than a sweep for them.
	minSweepEntries = 64
	// maxDeclEntries bounds the tool declarations' entries: room for many
	// agents of tens of tools each, and their changes.
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
	k, ok := cacheKey(salt, x)
	if !ok {
		return nil
	}
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

// cacheKey is x's key in a cache of estimator salt; false: not cached.
func cacheKey(salt uint64, x *genai.Content) (uint64, bool) {
	k, ok := contentid.Key(x)
	return k ^ salt, ok
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

// parallelMinMisses is the number of uncounted contents from which a count
// is spread over the CPUs: below it, goroutines cost what they save.
const parallelMinMisses = 16

// maxWorkers bounds spread's goroutines: counting and hashing run at
// memory speed, and more cores only contend for its bandwidth.
const maxWorkers = 8

// spreads reports whether spread would run n items in parallel.
func spreads(n int) bool {
	return n >= parallelMinMisses && runtime.GOMAXPROCS(0) > 1
}

// spread runs the independent calls f(0), ..., f(n-1) on up to maxWorkers
// goroutines; when spreads(n) is false it runs nothing and returns false.
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

// prefetch counts, in parallel, the contents of cs the cache has not seen
// when most are new (a session's first call in this process); in steady
// state it costs a length check. Estimators are safe for concurrent use.
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
		if k, ok := cacheKey(ce.salt, x); ok {
			if _, hit := ce.cache.entries[k]; !hit {
				misses = append(misses, miss{key: k, x: x})
			}
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

// fingerprint is the content's fingerprint, cached with its count, or
// among the few of contents not counted (a watermark in a matched prefix).
func (ce cachedEstimator) fingerprint(x *genai.Content) string {
	k, ok := cacheKey(ce.salt, x)
	if !ok {
		return contentid.Fingerprint(x)
	}
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

// maxUncountedFingerprints bounds the fingerprints of contents not counted:
// a session looks for one (the watermark) per call, a few as it moves.
const maxUncountedFingerprints = 8

// uncountedFingerprint is the fingerprint of a content that is not counted,
// pinned like a count entry.
type uncountedFingerprint struct {
	pin *genai.Content
	fp  string
}

// dropUntouched drops the entries the current request did not use; when
// most go, the rest move to a new map, as a map keeps its largest room.
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

// shrinkRatio is how much the cache must shrink to move to a new map.
const shrinkRatio = 4

// add stores a new entry.
func (c *countCache) add(k uint64, e *countEntry) {
	e.size = contentRetained(e.pin)
	c.bytes += e.size
	c.entries[k] = e
	c.live++
}
