package countcache

import (
	"sync"
	"unsafe"

	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/contentid"
	"github.com/adk-contextguard/contextguard/core/internal/sat"
)

// The prefix record's chain: every content hashed by value, each once per
// process, the hashes chained in order.

// Seeds that keep the hashes of different things apart: the chain's here,
// the request configuration's (core's configHash) beside it.
const (
	chainSeed       = 0x63686169 // "chai"
	ConfigSeed      = 0x636f6e66 // "conf"
	InstructionSeed = 0x696e7374 // "inst"
	DeclarationSeed = 0x6465636c // "decl"
)

// Memo is what one agent of a session remembers of the contents ADK last
// built for it: their records on a tape (verified through ADK's copies
// without hashing a byte) and the chain up to each. A session service that
// loads events anew gives new strings every call: once a call matches none,
// the memo stops recording (unpinned).
type Memo struct {
	tape     contentid.Tape
	entries  []memoEntry
	unpinned bool
}

type memoEntry struct {
	end   contentid.Mark // the tape after this content's record
	taped bool           // checked by a contentid.Check, else by its hash again
	hash  uint64         // the content's contentid.ChainHash
	chain uint64         // chain hash of the contents up to this one
}

// MemoEntryBytes is what a memo retains per content besides its tape.
const MemoEntryBytes = int(unsafe.Sizeof(memoEntry{}))

// Bytes is what the memo retains, as a session table accounts it.
func (m *Memo) Bytes() int { return sat.Add(m.tape.Bytes(), len(m.entries)*MemoEntryBytes) }

// ChainOf is the chain hash of raw[:n], the memo brought to raw; cheap for
// a memo already at raw.
func (m *Memo) ChainOf(raw []*genai.Content, n int) uint64 {
	m.update(raw)
	return m.at(n)
}

// update brings the memo to cs: the contents after those that match are
// recorded, and hashed meanwhile, in parallel when there are many.
func (m *Memo) update(cs []*genai.Content) {
	same := m.matching(cs)
	if same == 0 && len(m.entries) > 0 && len(cs) > 0 {
		m.unpinned = true
	}
	m.entries = m.entries[:same]
	m.tape.Truncate(m.end(same))
	fresh := cs[same:]
	var hashes []uint64
	wait := func() {}
	if spreads(len(fresh)) {
		hashes = make([]uint64, len(fresh))
		var wg sync.WaitGroup
		wg.Go(func() { spread(len(fresh), func(i int) { hashes[i] = contentid.ChainHash(fresh[i]) }) })
		wait = wg.Wait
	}
	m.tape.Grow(len(fresh))
	for _, c := range fresh {
		taped := !m.unpinned && m.tape.Record(c)
		m.entries = append(m.entries, memoEntry{taped: taped, end: m.tape.End()})
	}
	wait()
	chain := contentid.NewKeyer(m.at(same))
	for i, c := range fresh {
		e := &m.entries[same+i]
		if hashes != nil {
			e.hash = hashes[i]
		} else {
			e.hash = contentid.ChainHash(c)
		}
		chain.Add(e.hash)
		e.chain = chain.Sum()
	}
}

// matching is how many leading contents of cs are the memo's.
func (m *Memo) matching(cs []*genai.Content) int {
	ck := m.tape.Check(contentid.Mark{}) // an entry not taped has no record
	for i, e := range m.entries[:min(len(m.entries), len(cs))] {
		if e.taped && !ck.Match(cs[i], e.end) || !e.taped && contentid.ChainHash(cs[i]) != e.hash {
			return i
		}
	}
	return min(len(m.entries), len(cs))
}

// end is the tape's position after the first n entries.
func (m *Memo) end(n int) contentid.Mark {
	if n <= 0 {
		return contentid.Mark{}
	}
	return m.entries[n-1].end
}

// at is the chain hash of the first n contents the memo holds.
func (m *Memo) at(n int) uint64 {
	if n <= 0 {
		return chainSeed
	}
	return m.entries[n-1].chain
}

// Chain is an agent's memo as one call uses it: brought to the call's
// contents once, on first use.
type Chain struct {
	Memo    *Memo
	chained bool
}

// At is the chain hash of the first n of raw, the request's contents as ADK
// built them (0 past them).
func (c *Chain) At(raw []*genai.Content, n int) uint64 {
	if n > len(raw) {
		return 0
	}
	if !c.chained {
		c.Memo.update(raw)
		c.chained = true
	}
	return c.Memo.at(n)
}
