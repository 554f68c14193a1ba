package core

import (
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/tokens"
)

// ---------------------------------------------------------------------------
// Counting what is new (ARCHITECTURE.md, Counting)
// ---------------------------------------------------------------------------

// ADK rebuilds the request from the session's append-only event log, so the
// request of one call is, but for the contents added since, the request of
// the previous call. After each call that did not compact, the guard stores
// in session state a prefix record: how many contents ADK built, a sampled
// mark of them, how the stored summary was injected, the pruning frontier, a
// hash of the system instruction and tools, and the raw estimate of the
// request without the summary message. The next call, in this process or
// in another (a restart, a replica, a session evicted from the table),
// checks the record against its own request; when everything matches, its
// raw estimate is the record's plus the estimate of the summary message and
// of the contents after the prefix, and the contents of the prefix are
// neither read nor counted. When anything differs (a compaction in between,
// changed tools or instruction, another estimator, a rewritten, shortened or
// rearranged history, a pruning frontier that moved, another agent's view of
// the session) the whole request is counted, as without a record. The
// calibration is unchanged: the estimate is the raw estimate of the same
// request, and count = max(real, estimate × factor) keeps the provider's
// real count of the previous request as the floor.
//
// The mark samples, it does not hash every byte (1M tokens are about 4 MB,
// and a call should cost what is new): the number of contents, and at six
// positions (the first content, a quarter, the half, three quarters, and
// the last two) each content's role, parts, field kinds, names, numbers,
// the lengths of its strings and byte slices and their first and last
// sampleBytes bytes, and the top-level keys of its payloads. That is safe
// because ADK's log is append-only: the guard's own rewrites (compactions)
// are in state and checked exactly, and what ADK itself moves (the latest
// function response, moved next to its call) lies at the end of the
// prefix, which is sampled. A rewrite the mark does not see (an edit that
// keeps a string's length and both ends, at a position not sampled) makes
// the estimate off by that edit's tokens; the provider's next real count
// corrects it, since the calibration factor is real / estimate of the same
// request.

// keyPrefix is the state key of the prefix record (the agent's name is
// appended, as for every key of state.go).
const keyPrefix = stateKeyPrefix + "prefix_"

// prefixRecordVersion starts an encoded record, so a later format is read
// as absent rather than misread.
const prefixRecordVersion = "p1"

// sampleBytes is how many bytes of each end of a string or byte slice a
// prefix mark hashes: edits of a message, a tool result or an attachment
// almost always change its length or one of its ends, and 2×32 bytes cost
// a few dozen nanoseconds whatever the content's size.
const sampleBytes = 32

// maxSampledKeys bounds the keys of a payload a prefix mark hashes one by
// one (Go's map order is random, so the keys of a larger payload cannot be
// sampled deterministically; its size is hashed instead).
const maxSampledKeys = 32

// prefixRecord is what one call stores for the next to trust its request as
// a prefix of its own.
type prefixRecord struct {
	contents    int    // contents ADK built for the request (len(t.raw))
	cut         int    // contents the injected summary replaced
	injected    bool   // whether the summary message was prepended
	compactions int    // the session's compaction counter at the call
	frontier    int    // the pruning frontier (tool steps pruned), 0 without pruning
	total       int    // raw estimate of the request (the stored last estimate)
	body        int    // total less the summary message
	config      uint64 // configHash of the request
	marks       uint64 // prefixMarks of the contents
}

// prefixMatch is what a turn knows about the stored record.
type prefixMatch struct {
	rec     prefixRecord
	stored  string // the encoded record the call started from
	matched bool   // the record matches the request, but for the frontier
	config  uint64 // configHash of this call's request
	body    int    // this call's raw estimate less the summary message
	next    string // the record to store, "" for none
}

func (r prefixRecord) encode() string {
	var b strings.Builder
	b.Grow(96)
	b.WriteString(prefixRecordVersion)
	for _, n := range [...]int{r.contents, r.cut, int(boolBit(r.injected)), r.compactions, r.frontier, r.total, r.body} {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(n))
	}
	for _, h := range [...]uint64{r.config, r.marks} {
		b.WriteByte(':')
		b.WriteString(strconv.FormatUint(h, 16))
	}
	return b.String()
}

// decodePrefixRecord parses an encoded record; ok is false for anything
// malformed or impossible.
func decodePrefixRecord(s string) (r prefixRecord, ok bool) {
	f := strings.Split(s, ":")
	if len(f) != 10 || f[0] != prefixRecordVersion {
		return r, false
	}
	var n [7]int
	for i := range n {
		v, err := strconv.Atoi(f[1+i])
		if err != nil || v < 0 || v > maxPlausibleTokenNum {
			return r, false
		}
		n[i] = v
	}
	var h [2]uint64
	for i := range h {
		v, err := strconv.ParseUint(f[8+i], 16, 64)
		if err != nil {
			return r, false
		}
		h[i] = v
	}
	r = prefixRecord{contents: n[0], cut: n[1], injected: n[2] == 1, compactions: n[3], frontier: n[4],
		total: n[5], body: n[6], config: h[0], marks: h[1]}
	if n[2] > 1 || r.cut > r.contents || r.body > r.total || r.contents == 0 {
		return prefixRecord{}, false
	}
	return r, true
}

// matchPrefix reads the stored record and checks it against the turn's
// request, whose summary is injected: every check is a comparison of
// numbers, but for the mark (six contents sampled) and the config hash
// (cached per guard). The pruning frontier is checked once pruning ran
// (requestEstimate).
func (g *Guard) matchPrefix(t *turn, st StateReader, sio stateIO) prefixMatch {
	m := prefixMatch{config: g.configHash(&t.req, t.est.salt)}
	if st == nil {
		return m
	}
	m.stored = sio.str(st, keyPrefix)
	if m.stored == "" {
		return m
	}
	rec, ok := decodePrefixRecord(m.stored)
	if !ok {
		sio.log.Warn("contextguard: the session's prefix record is malformed; counting the whole request",
			"agent", sio.agent, "key", sio.key(keyPrefix))
		return m
	}
	m.rec = rec
	m.matched = rec.compactions == t.prev.compactions &&
		rec.total == t.prev.lastEstimate &&
		rec.injected == t.inj.injected && rec.cut == t.inj.cut &&
		rec.contents <= len(t.raw) &&
		rec.config == m.config &&
		rec.marks == prefixMarks(t.raw, rec.contents)
	return m
}

// requestEstimate is the raw estimate of the request as it will be sent:
// the record's estimate of the prefix plus the summary message and the
// contents after the prefix when the record matches, else every content.
func (t *turn) requestEstimate() int {
	cs := t.req.Contents
	summary, lead := 0, 0
	if t.inj.injected && len(cs) > 0 {
		summary, lead = t.est.content(cs[0]), 1
	}
	p := &t.prefix
	if fresh := len(t.raw) - p.rec.contents; p.matched && p.rec.frontier == t.frontier && len(cs)-fresh >= lead {
		body := p.rec.body
		for _, c := range cs[len(cs)-fresh:] {
			body = satAdd(body, t.est.content(c))
		}
		p.body = body
		// The prefix's counts are not needed again: the next call checks
		// the record, and a compaction counts what it summarizes. Keep
		// only what this call touched, so an idle session holds little.
		t.est.cache.dropUntouched()
		return satAdd(body, summary)
	}
	est := requestTokens(t.est, &t.req)
	p.body = max(est-summary, 0)
	return est
}

// recordPrefix prepares the record this call stores: the request it let
// through, uncompacted, estimated at est raw tokens.
func (t *turn) recordPrefix(est int) {
	if len(t.raw) == 0 {
		return
	}
	t.prefix.next = prefixRecord{
		contents: len(t.raw), cut: t.inj.cut, injected: t.inj.injected,
		compactions: t.prev.compactions, frontier: t.frontier,
		total: est, body: min(t.prefix.body, est),
		config: t.prefix.config, marks: prefixMarks(t.raw, len(t.raw)),
	}.encode()
}

// savePrefix writes the record prepared by recordPrefix, or clears the
// stored one when the call prepared none (it compacted).
func (t *turn) savePrefix(st State, sio stateIO) {
	sio.set(st, keyPrefix, t.prefix.stored, t.prefix.next)
}

// ---------------------------------------------------------------------------
// Marks
// ---------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------
// The system instruction and tools
// ---------------------------------------------------------------------------

// configHashes caches, for the whole guard, the value hashes of system
// instructions and tool declarations by their identity key (their strings
// and schemas by address): an agent's instruction and tools are the same in
// all its sessions, so they are hashed once per process, not once per
// session. Each entry pins what it was keyed on, so an address it names is
// not reused while the entry exists.
type configHashes struct {
	mu      sync.Mutex
	entries map[uint64]configHashEntry
}

type configHashEntry struct {
	pin  any
	hash uint64
}

// maxConfigHashes bounds the cache: far more instructions and declarations
// than a process's agents have; past it the cache starts again empty.
const maxConfigHashes = 4096

// get returns the hash cached under key, computing it with f on a miss,
// without the lock held (f may marshal a typed schema with its own code).
func (c *configHashes) get(key uint64, pin any, f func() uint64) uint64 {
	c.mu.Lock()
	e, ok := c.entries[key]
	c.mu.Unlock()
	if ok {
		return e.hash
	}
	h := f()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= maxConfigHashes {
		c.entries = make(map[uint64]configHashEntry)
	}
	c.entries[key] = configHashEntry{pin: pin, hash: h}
	return h
}

// configHash identifies by value what a request sends besides its contents
// (the system instruction and the tools) and the estimator counting it
// (salt): a record made under another instruction, other tools or another
// estimator does not match.
func (g *Guard) configHash(req *Request, salt uint64) uint64 {
	k := keyer{h: salt ^ configSeed}
	cfg := req.Config
	if cfg == nil {
		return k.h
	}
	if si := cfg.SystemInstruction; si != nil {
		value := func() uint64 {
			s := identity{byValue: true, h: fnvOffset}
			fpContent(&s, si)
			return s.h
		}
		if key, ok := contentKey(si); ok {
			k.add(g.configs.get(key^instructionSeed, si, value))
		} else {
			k.add(value())
		}
	}
	for _, tool := range cfg.Tools {
		if tool == nil {
			continue
		}
		// The tool's built-in parts (search, code execution, ...) are
		// small and hashed on every call that has them; its declarations
		// are cached.
		k.add(uint64(len(tool.FunctionDeclarations)))
		if hasBuiltins(tool) {
			builtin := *tool
			builtin.FunctionDeclarations = nil
			k.add(jsonHash(builtin))
		}
		for _, d := range tool.FunctionDeclarations {
			if d == nil {
				k.add(nilMark)
				continue
			}
			value := func() uint64 { return jsonHash(d) }
			if key, ok := declKey(d); ok {
				k.add(g.configs.get(key^declarationSeed, d, value))
			} else {
				k.add(value())
			}
		}
	}
	return k.h
}

// hasBuiltins reports whether t sets any field besides its function
// declarations (every other field is a built-in tool).
func hasBuiltins(t *genai.Tool) bool {
	v := reflect.ValueOf(t).Elem()
	for i := range v.NumField() {
		if i != toolDeclarationsField && !v.Field(i).IsZero() {
			return true
		}
	}
	return false
}

// toolDeclarationsField is the index of genai.Tool's FunctionDeclarations.
var toolDeclarationsField = func() int {
	f, _ := reflect.TypeFor[genai.Tool]().FieldByName("FunctionDeclarations")
	return f.Index[0]
}()

// jsonHash is the FNV-64a hash of v's JSON, the bytes a provider is sent.
func jsonHash(v any) uint64 {
	s := identity{byValue: true, h: fnvOffset}
	s.write(tokens.AppendJSON(nil, v))
	return s.h
}
