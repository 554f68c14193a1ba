package core

import (
	"strconv"
	"strings"

	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/countcache"
	"github.com/adk-contextguard/contextguard/core/internal/sat"
	"github.com/adk-contextguard/contextguard/core/internal/state"
)

// Counting what is new (ARCHITECTURE.md, Counting): a call whose request
// extends the one the stored prefix record describes counts only the
// contents added since; anything that differs counts the whole request.

// keyPrefix is the state key of the prefix record, per agent.
const keyPrefix = state.KeyPrefix + "prefix_"

// prefixRecordVersion starts an encoded record, so another format ("p1",
// a sampled mark) is ignored rather than misread.
const prefixRecordVersion = "p2"

// After its version a record holds seven counts in decimal and two hashes
// in hex, each after a ':'; prefixRecordBytes fits counts of 7 digits.
const (
	prefixRecordInts   = 7
	prefixRecordHashes = 2
	prefixRecordBytes  = 96
)

// prefixRecord is what one call stores for the next to trust its request as
// a prefix of its own.
type prefixRecord struct {
	contents    int    // contents ADK built for the request (len(t.Raw))
	cut         int    // contents the injected summary replaced
	injected    bool   // whether the summary message was prepended
	compactions int    // the session's compaction counter at the call
	frontier    int    // the pruning frontier (tool steps pruned), 0 without pruning
	total       int    // raw estimate of the request (the stored last estimate)
	body        int    // total less the summary message
	config      uint64 // configHash of the request
	chain       uint64 // chain hash of the contents (countcache.Chain.At)
}

// prefixMatch is the stored record as a call checks it, and the one it stores.
type prefixMatch struct {
	rec prefixRecord
	// own is the call's request as a record describes it, with the last
	// estimate in state as total, which a matching record holds.
	own     prefixRecord
	stored  string // the encoded record the call started from
	matched bool   // the record matches the request, but for the frontier
	config  uint64 // configHash of this call's request
	body    int    // this call's raw estimate less the summary message
	next    string // the record to store, "" for none
}

func (r prefixRecord) encode() string {
	var b strings.Builder
	b.Grow(prefixRecordBytes)
	b.WriteString(prefixRecordVersion)
	injected := 0
	if r.injected {
		injected = 1
	}
	for _, n := range [prefixRecordInts]int{r.contents, r.cut, injected, r.compactions, r.frontier, r.total, r.body} {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(n))
	}
	for _, h := range [prefixRecordHashes]uint64{r.config, r.chain} {
		b.WriteByte(':')
		b.WriteString(strconv.FormatUint(h, 16))
	}
	return b.String()
}

// decodePrefixRecord parses an encoded record; ok is false for anything
// malformed or impossible.
func decodePrefixRecord(s string) (r prefixRecord, ok bool) {
	f := strings.Split(s, ":")
	if len(f) != 1+prefixRecordInts+prefixRecordHashes || f[0] != prefixRecordVersion {
		return r, false
	}
	var n [prefixRecordInts]int
	for i := range n {
		v, err := strconv.Atoi(f[1+i])
		if err != nil || v < 0 || v > state.MaxPlausible {
			return r, false
		}
		n[i] = v
	}
	var h [prefixRecordHashes]uint64
	for i := range h {
		v, err := strconv.ParseUint(f[1+prefixRecordInts+i], 16, 64)
		if err != nil {
			return r, false
		}
		h[i] = v
	}
	r = prefixRecord{contents: n[0], cut: n[1], injected: n[2] == 1, compactions: n[3], frontier: n[4],
		total: n[5], body: n[6], config: h[0], chain: h[1]}
	if n[2] > 1 || r.cut > r.contents || r.body > r.total || r.contents == 0 {
		return prefixRecord{}, false
	}
	return r, true
}

// matchPrefix checks the stored record against own, the call's request of
// contents raw: every check compares numbers but the chain. The pruning
// frontier is checked once pruning ran (estimate).
func matchPrefix(sio state.IO, stored string, own prefixRecord, raw []*genai.Content, chain *countcache.Chain) prefixMatch {
	m := prefixMatch{own: own, config: own.config, stored: stored}
	if stored == "" {
		return m
	}
	rec, ok := decodePrefixRecord(stored)
	if !ok && !strings.HasPrefix(stored, prefixRecordVersion+":") {
		sio.Log.Info("contextguard: the session's prefix record has another format (an earlier version's); counting the whole request",
			"agent", sio.Agent, "key", sio.Key(keyPrefix))
		return m
	}
	if !ok {
		sio.Log.Warn("contextguard: the session's prefix record is malformed; counting the whole request",
			"agent", sio.Agent, "key", sio.Key(keyPrefix))
		return m
	}
	m.rec = rec
	m.matched = rec.compactions == own.compactions && rec.total == own.total &&
		rec.injected == own.injected && rec.cut == own.cut &&
		rec.contents <= own.contents && rec.config == own.config &&
		rec.chain == chain.At(raw, rec.contents)
	return m
}

// estimate is the raw estimate of the request with contents cs, pruned to
// frontier, as it will be sent: the record's estimate of the prefix plus
// what is new when the record matches, else every content; body is it less
// the summary message.
func (m prefixMatch) estimate(ms measure, frontier int, cs []*genai.Content) (est, body int) {
	summary, lead := 0, 0
	if m.own.injected && len(cs) > 0 {
		summary, lead = ms.Est.Content(cs[0]), 1
	}
	if fresh := len(ms.Raw) - m.rec.contents; m.matched && m.rec.frontier == frontier && len(cs)-fresh >= lead {
		body := m.rec.body
		for _, c := range cs[len(cs)-fresh:] {
			body = sat.Add(body, ms.Est.Content(c))
		}
		// The next call checks the record, and a compaction counts what
		// it summarizes: an idle session keeps only what this call touched.
		ms.Est.Cache.DropUntouched()
		return sat.Add(body, summary), body
	}
	est = ms.Weigh(cs)
	return est, max(est-summary, 0)
}

// ownRecord is the record a call stores for the request of contents raw it
// let through uncompacted, pruned to frontier, of est raw tokens ("" none).
func (m prefixMatch) ownRecord(raw []*genai.Content, chain *countcache.Chain, frontier, est int) string {
	if len(raw) == 0 {
		return ""
	}
	r := m.own
	r.frontier, r.total, r.body, r.chain = frontier, est, min(m.body, est), chain.At(raw, len(raw))
	return r.encode()
}

// save writes the call's record, or clears the stored one (it compacted).
func (m prefixMatch) save(st State, sio state.IO) {
	sio.Set(st, keyPrefix, m.stored, m.next)
}
