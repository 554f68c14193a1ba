package core

import (
	"unsafe"

	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/contentid"
	"github.com/adk-contextguard/contextguard/core/internal/sat"
)

// The prefix record's chain: every content of the prefix hashed by value,
// each once per process, the hashes chained in order (ARCHITECTURE.md,
// Counting).

// Seeds that keep the hashes of different things apart: a chain, a config
// hash, and the cache keys of instructions and of declarations (whose
// identity keys come from different walks and could otherwise collide).
const (
	chainSeed       = 0x63686169 // "chai"
	configSeed      = 0x636f6e66 // "conf"
	instructionSeed = 0x696e7374 // "inst"
	declarationSeed = 0x6465636c // "decl"
)

// chainNext chains the hash of one more content onto h.
func chainNext(h, content uint64) uint64 {
	k := contentid.NewKeyer(h)
	k.Add(content)
	return k.Sum()
}

// prefixMemo is what one agent of a session remembers, in memory, of the
// contents ADK last built for it: each content's identity key (by address,
// no byte read) and the chain hash up to it. A later call whose leading
// contents have the same keys has the same contents (the key changes with
// any string, number, map key or shape) and takes their chain hashes from
// here; only the contents after them are hashed by value. The memo pins
// the contents it names, so no address a key names is reused for other
// bytes while it holds them. A restart, an eviction or another replica
// starts with an empty memo and hashes every content once.
//
// With an in-memory session service the pinned contents' strings are the
// session events' own; the memo is accounted as if they were not (as the
// count cache is: contentRetained), so a session the service dropped does
// not retain more than the table's bound. A session service that loads the
// events anew for every call (a database) gives them new strings each
// time: no key ever matches, so once a call matches none of the memo's
// contents the memo stops pinning (unpinned) and keeps only this call's
// chain, and such a session retains no history between calls.
type prefixMemo struct {
	pin      []*genai.Content
	entries  []memoEntry
	unpinned bool
	bytes    int // what the memo retains, as the session table accounts it
}

type memoEntry struct {
	key   uint64 // contentid.Key, 0 for none (the content is hashed every call)
	chain uint64 // chain hash of the contents up to this one
	size  int    // what pinning the content retains (contentRetained), 0 unpinned
}

// memoEntryBytes is what one memo entry retains without its pin: the entry
// itself.
const memoEntryBytes = int(unsafe.Sizeof(memoEntry{}))

// update brings the memo to cs: the leading contents whose keys match keep
// their entries, every later one is hashed by value.
func (m *prefixMemo) update(cs []*genai.Content) {
	same := 0
	for same < len(cs) && same < len(m.entries) {
		k, ok := memoKey(cs[same])
		if !ok || k != m.entries[same].key {
			break
		}
		same++
	}
	if same == 0 && len(m.entries) > 0 && len(cs) > 0 {
		m.unpinned = true
	}
	for _, e := range m.entries[same:] {
		m.bytes -= e.size + memoEntryBytes
	}
	m.entries = m.entries[:same]
	h := m.at(same)
	hashes := contentHashes(cs[same:])
	for i, c := range cs[same:] {
		e := memoEntry{}
		if !m.unpinned {
			e.key, _ = memoKey(c)
			e.size = contentRetained(c)
		}
		if hashes != nil {
			h = chainNext(h, hashes[i])
		} else {
			h = chainNext(h, contentid.ChainHash(c))
		}
		e.chain = h
		m.bytes = sat.Add(m.bytes, e.size+memoEntryBytes)
		m.entries = append(m.entries, e)
	}
	clear(m.pin)
	m.pin = m.pin[:0]
	if m.unpinned {
		m.bytes = len(m.entries) * memoEntryBytes
		return
	}
	m.pin = append(m.pin, cs...)
}

// contentHashes hashes cs in parallel when there are many (a session's
// first call in a process: a restart, a replica, an eviction), as prefetch
// counts them; nil when there are few, which update hashes one by one.
// Hashing is a pure function of a content, so the hashes are the ones
// contentid.ChainHash computes.
func contentHashes(cs []*genai.Content) []uint64 {
	if !spreads(len(cs)) {
		return nil
	}
	out := make([]uint64, len(cs))
	spread(len(cs), func(i int) { out[i] = contentid.ChainHash(cs[i]) })
	return out
}

// at is the chain hash of the first n contents the memo holds.
func (m *prefixMemo) at(n int) uint64 {
	if n <= 0 {
		return chainSeed
	}
	return m.entries[n-1].chain
}

// memoKey is a content's identity key for the memo; ok is false for a
// content without one (nil, or a payload the key cannot identify), which
// is hashed by value on every call.
func memoKey(c *genai.Content) (uint64, bool) {
	if c == nil {
		return 0, false
	}
	k, ok := contentid.Key(c)
	return k, ok && k != 0
}

// callChain is the agent's memo of its contents' chain as one call uses
// it: brought to the call's raw contents on first use.
type callChain struct {
	memo    *prefixMemo
	chained bool
}

// at is the chain hash of the first n of raw, the contents of the request
// ADK built, 0 past them: from the agent's memo, brought to raw on first
// use in the call. A call without a memo (recovery) hashes into its own.
func (c *callChain) at(raw []*genai.Content, n int) uint64 {
	if n > len(raw) {
		return 0
	}
	if !c.chained {
		c.memo.update(raw)
		c.chained = true
	}
	return c.memo.at(n)
}
