// Package countcache is a session's incremental counting (ARCHITECTURE.md,
// Counting): per-content counts keyed without reading a string
// (contentid.Key), and the chain of content hashes a prefix record is
// checked against. An entry pins its content so no address its key names
// is reused. A cache is used by one call at a time.
package countcache

import (
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/contentid"
	"github.com/adk-contextguard/contextguard/core/internal/estimate"
	"github.com/adk-contextguard/contextguard/core/internal/sat"
)

// Cache holds the per-content counts of one session.
type Cache struct {
	entries map[uint64]*entry
	decls   map[uint64]*declEntry
	fps     map[uint64]uncounted
	gen     uint32
	live    int // entries touched in the current generation
	bytes   int // what the entries retain, about (retained)
}

// declEntry is the cached count of one tool declaration, whose strings and
// schemas are the tool's own though ADK rebuilds it every step.
type declEntry struct {
	pin    *genai.FunctionDeclaration
	tokens int
	gen    uint32
}

type entry struct {
	pin    *genai.Content // keeps the strings named by the key alive
	role   string
	parts  int
	tokens int
	fp     string // fingerprint, computed on first use
	gen    uint32
	size   int // bytes retained by pinning the content (retained)
	// pruned is the content's pruned copy, built on first use;
	// prunedRecall its copy for a request that declares the recall tool.
	pruned, prunedRecall *Pruned
}

// Pruned is the pruned copy of one content, computed once per distinct
// content and kept with its count.
type Pruned struct {
	Content *genai.Content // the copy with placeholders; nil when nothing is large enough to prune
	Saved   int            // what the placeholders save, in raw estimated tokens
}

// Bounds of one session's cache.
const (
	// maxEntries bounds the contents' entries; past it, entries not used
	// by the latest request are dropped.
	maxEntries = 4096
	// minSweepEntries is the size below which stale entries cost less
	// than a sweep for them.
	minSweepEntries = 64
	// maxDeclEntries bounds the tool declarations' entries: room for many
	// agents of tens of tools each, and their changes.
	maxDeclEntries = maxEntries / 4
	// maxUncounted bounds the fingerprints of contents not counted: a
	// session looks for one (the watermark) per call, a few as it moves.
	maxUncounted = 8
	// shrinkRatio is how much the cache must shrink to move to a new map.
	shrinkRatio = 4
)

// EntryOverhead is what one cached content retains besides its strings:
// the entry and map slot, and the pinned copy ADK made of the content (its
// Content, Part and call or response structs and top-level maps), measured
// with core's BenchmarkSessionMemory.
const EntryOverhead = 864

// New is an empty cache.
func New() *Cache {
	return &Cache{entries: make(map[uint64]*entry), decls: make(map[uint64]*declEntry), fps: make(map[uint64]uncounted)}
}

// Bytes is about what the cache's entries retain.
func (c *Cache) Bytes() int { return c.bytes }

// Begin starts a new request: entries not touched since the previous
// request are dropped once the cache holds more than twice what a request
// uses, which bounds it by the size of the session's history.
func (c *Cache) Begin() {
	if len(c.entries) > max(2*c.live, minSweepEntries) || len(c.entries) > maxEntries {
		c.DropUntouched()
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

// DropUntouched drops the entries the current request did not use; when
// most go, the rest move to a new map, as a map keeps its largest room.
func (c *Cache) DropUntouched() {
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
		m := make(map[uint64]*entry, len(c.entries)) // maps.Clone keeps the room
		for k, e := range c.entries {
			m[k] = e
		}
		c.entries = m
	}
}

// entry returns the entry of x, counting it with e on a miss; nil when x
// cannot be cached.
func (c *Cache) entry(e estimate.Estimator, salt uint64, x *genai.Content) *entry {
	k, ok := key(salt, x)
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
	ent := &entry{pin: x, role: x.Role, parts: len(x.Parts), tokens: e.Content(x), gen: c.gen}
	c.add(k, ent)
	return ent
}

// add stores a new entry.
func (c *Cache) add(k uint64, e *entry) {
	e.size = retained(e.pin)
	c.bytes += e.size
	c.entries[k] = e
	c.live++
}

// retained is what an entry pinning x retains.
func retained(x *genai.Content) int {
	if x == nil {
		return EntryOverhead
	}
	return sat.Add(EntryOverhead, contentid.Size(x))
}

// key is x's key in a cache of estimator salt; false: not cached.
func key(salt uint64, x *genai.Content) (uint64, bool) {
	k, ok := contentid.Key(x)
	return k ^ salt, ok
}

// uncounted is the fingerprint of a content that is not counted, pinned
// like an entry.
type uncounted struct {
	pin *genai.Content
	fp  string
}
