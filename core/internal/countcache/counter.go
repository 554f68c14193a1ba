package countcache

import (
	"runtime"
	"sync"
	"sync/atomic"

	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/contentid"
	"github.com/adk-contextguard/contextguard/core/internal/estimate"
)

// Counter counts contents and declarations through a session's cache; its
// other counts are Base's.
type Counter struct {
	Base  estimate.Estimator // counts what the cache misses, and what is counted once
	Cache *Cache
	Salt  uint64 // separates estimators sharing a session's cache
}

// Text is Base's count of s.
func (ce Counter) Text(s string) int { return ce.Base.Text(s) }

// BuiltinTools is Base's count of t's built-in tools.
func (ce Counter) BuiltinTools(t *genai.Tool) int { return ce.Base.BuiltinTools(t) }

// DefaultFactor is Base's.
func (ce Counter) DefaultFactor() float64 { return ce.Base.DefaultFactor() }

// Content is x's count, from the cache when x was seen before.
func (ce Counter) Content(x *genai.Content) int {
	if x == nil {
		return 0
	}
	if ent := ce.Cache.entry(ce.Base, ce.Salt, x); ent != nil {
		return ent.tokens
	}
	return ce.Base.Content(x)
}

// Sum is the count of cs, each content's from the cache when it was seen
// before.
func (ce Counter) Sum(cs []*genai.Content) int { return estimate.Contents(ce, cs) }

// Declaration is d's count, from the cache when d was seen before.
func (ce Counter) Declaration(d *genai.FunctionDeclaration) int {
	if d == nil {
		return 0
	}
	k, ok := contentid.DeclKey(d)
	if !ok {
		return ce.Base.Declaration(d)
	}
	k ^= ce.Salt
	if ent, hit := ce.Cache.decls[k]; hit {
		ent.gen = ce.Cache.gen
		return ent.tokens
	}
	ent := &declEntry{pin: d, tokens: ce.Base.Declaration(d), gen: ce.Cache.gen}
	ce.Cache.decls[k] = ent
	return ent.tokens
}

// Prefetch counts, in parallel, the contents of cs the cache has not seen
// when most are new (a session's first call in this process); in steady
// state it costs a length check. Estimators are safe for concurrent use.
func (ce Counter) Prefetch(cs []*genai.Content) {
	if len(cs) < parallelMinItems || len(ce.Cache.entries) >= len(cs)/2 {
		return
	}
	type miss struct {
		key uint64
		x   *genai.Content
		n   int
	}
	var misses []miss
	for _, x := range cs {
		if k, ok := key(ce.Salt, x); ok {
			if _, hit := ce.Cache.entries[k]; !hit {
				misses = append(misses, miss{key: k, x: x})
			}
		}
	}
	if !spread(len(misses), func(i int) { misses[i].n = ce.Base.Content(misses[i].x) }) {
		return
	}
	for _, m := range misses {
		if _, hit := ce.Cache.entries[m.key]; hit {
			continue // the same content twice in one request
		}
		ce.Cache.add(m.key, &entry{pin: m.x, role: m.x.Role, parts: len(m.x.Parts), tokens: m.n, gen: ce.Cache.gen})
	}
}

// Fingerprint is x's contentid.Fingerprint, cached with its count, or
// among the few of contents not counted (a watermark in a matched prefix).
func (ce Counter) Fingerprint(x *genai.Content) string {
	k, ok := key(ce.Salt, x)
	if !ok {
		return contentid.Fingerprint(x)
	}
	if ent, hit := ce.Cache.entries[k]; hit && ent.role == x.Role && ent.parts == len(x.Parts) {
		if ent.fp == "" {
			ent.fp = contentid.Fingerprint(x)
		}
		return ent.fp
	}
	if f, hit := ce.Cache.fps[k]; hit {
		return f.fp
	}
	if len(ce.Cache.fps) >= maxUncounted {
		clear(ce.Cache.fps)
	}
	f := uncounted{pin: x, fp: contentid.Fingerprint(x)}
	ce.Cache.fps[k] = f
	return f.fp
}

// Pruned is x's pruned copy made by build, kept with its count so each
// distinct content is pruned once; recall selects the copy for a request
// that declares the recall tool.
func (ce Counter) Pruned(x *genai.Content, recall bool, build func(estimate.Estimator, *genai.Content, bool) *Pruned) *Pruned {
	ent := ce.Cache.entry(ce.Base, ce.Salt, x)
	if ent == nil {
		return build(ce.Base, x, recall)
	}
	slot := &ent.pruned
	if recall {
		slot = &ent.prunedRecall
	}
	if *slot == nil {
		*slot = build(ce.Base, x, recall)
	}
	return *slot
}

// parallelMinItems is the number of independent counts or hashes from
// which they are spread over the CPUs: below it, goroutines cost what they
// save.
const parallelMinItems = 16

// maxWorkers bounds spread's goroutines: counting and hashing run at
// memory speed, and more cores only contend for its bandwidth.
const maxWorkers = 8

// spreads reports whether spread would run n items in parallel.
func spreads(n int) bool {
	return n >= parallelMinItems && runtime.GOMAXPROCS(0) > 1
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
