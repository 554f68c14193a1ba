// Package recallindex is the search behind the recall tool
// (ARCHITECTURE.md, Recall): BM25 over passages, so a query's words close
// together outrank the same words scattered through a long text, and the
// pages of excerpts around them.
package recallindex

import (
	"math"
	"slices"
	"strings"

	"github.com/adk-contextguard/contextguard/core/internal/sat"
	"github.com/adk-contextguard/contextguard/core/internal/textcut"
)

const (
	// PassageBytes is the size a passage grows to, in whole lines: a line
	// or two, which integration/recallbench ranked best (among 60 to 320).
	PassageBytes = 90
	// MaxPassageBytes bounds a passage; a longer line is cut near a space.
	MaxPassageBytes = 800
	cutSlack        = 120 // how far back from a cut a space is looked for
	// BM25's parameters, Lucene's defaults.
	bm25K1 = 1.2
	bm25B  = 0.75
	// phraseBoost: a quoted error message outranks a passage that merely
	// shares its words.
	phraseBoost = 2.0
	// proximityBoost is the most a score grows for holding every term as
	// close as can be, within proximitySpanBytes.
	proximityBoost     = 1.0
	proximitySpanBytes = 400
	// PhraseCandidates is how many best passages are checked for phrase
	// and proximity: more than a page shows, few enough to be cheap.
	PhraseCandidates = 20
	// What a posting, a passage's record and a distinct term retain.
	postingBytes    = 8
	passageOverhead = 32
	termOverhead    = 48
)

type posting struct {
	passage uint32
	tf      uint32
}

// passage is a span of lines of one text (Index.owner).
type passage struct{ start, end int }

// Index is a BM25 index over the passages of the texts added to it. It is
// not safe for concurrent use.
type Index struct {
	texts    []string
	firsts   []int32 // each text's first passage
	passages []passage
	lens     []uint32 // each passage's term count, dense for the walk
	owner    []int32  // each passage's text
	ids      map[string]uint32
	postings [][]posting
	terms    int // total terms over passages
	bytes    int
	// Scratch, cleared by its user, so a search allocates none of it.
	scores  []float64
	best    []int32
	second  []int32
	hits    []int
	groups  []int
	tf      []uint32
	touched []uint32
}

// New returns an empty index.
func New() *Index {
	return &Index{ids: make(map[string]uint32)}
}

// Len is how many texts were added.
func (x *Index) Len() int { return len(x.texts) }

// Passages is how many passages the texts were cut into.
func (x *Index) Passages() int { return len(x.passages) }

// Text is the text numbered t (from 0, in the order of Add).
func (x *Index) Text(t int) string { return x.texts[t] }

// Passage is passage p: the number of its text and its bytes there.
func (x *Index) Passage(p int) (text, start, end int) {
	ps := x.passages[p]
	return int(x.owner[p]), ps.start, ps.end
}

// Retained is about what the index retains, in bytes, texts included.
func (x *Index) Retained() int { return x.bytes }

// Add indexes text, cut into passages, and returns its number.
func (x *Index) Add(text string) int {
	t := int32(len(x.texts))
	x.texts = append(x.texts, text)
	x.firsts = append(x.firsts, int32(len(x.passages)))
	x.bytes = sat.Add(x.bytes, len(text)+4)
	for at := 0; at < len(text); {
		n := PassageEnd(text[at:])
		x.addPassage(t, text, at, at+n)
		at += n
	}
	return int(t)
}

// PassageEnd is where the passage starting at s ends: whole lines until
// PassageBytes or a blank line, at most MaxPassageBytes (CutEnd).
func PassageEnd(s string) int {
	n := 0
	for n < len(s) && n < MaxPassageBytes {
		end := len(s)
		if len(s) > MaxPassageBytes {
			i := strings.IndexByte(s[n:MaxPassageBytes], '\n')
			if i < 0 { // the line runs past the bound
				if n > 0 {
					return n
				}
				return CutEnd(s, MaxPassageBytes)
			}
			end = n + i + 1
		} else if i := strings.IndexByte(s[n:], '\n'); i >= 0 {
			end = n + i + 1
		}
		n = end
		if n >= PassageBytes || (n < len(s) && s[n] == '\n') {
			return n
		}
	}
	return n
}

// CutEnd is where a piece of at most limit bytes of s ends: at a space
// within cutSlack of the limit if any, never inside a UTF-8 sequence.
func CutEnd(s string, limit int) int {
	if len(s) <= limit {
		return len(s)
	}
	n := len(textcut.Prefix(s, limit))
	if i := strings.LastIndexAny(s[n-min(cutSlack, n):n], " \n\t"); i >= 0 {
		n = n - min(cutSlack, n) + i + 1
	}
	if n == 0 {
		return min(limit, len(s))
	}
	return n
}

// addPassage indexes text[start:end]; one without a term is not kept.
func (x *Index) addPassage(t int32, text string, start, end int) {
	x.touched = x.touched[:0]
	total := 0
	EachTerm(text[start:end], func(term string) bool {
		id, ok := x.ids[term]
		if !ok {
			id = uint32(len(x.postings))
			x.ids[term] = id
			x.postings = append(x.postings, nil)
			x.tf = append(x.tf, 0)
			x.bytes = sat.Add(x.bytes, len(term)+termOverhead)
		}
		if x.tf[id] == 0 {
			x.touched = append(x.touched, id)
		}
		x.tf[id]++
		total++
		return true
	})
	if total == 0 {
		return
	}
	p := uint32(len(x.passages))
	for _, id := range x.touched {
		x.postings[id] = append(x.postings[id], posting{passage: p, tf: x.tf[id]})
		x.tf[id] = 0
	}
	x.passages = append(x.passages, passage{start: start, end: end})
	x.lens = append(x.lens, uint32(total))
	x.owner = append(x.owner, t)
	x.terms += total
	x.bytes = sat.Add(x.bytes, passageOverhead+len(x.touched)*postingBytes)
}

// Hit is one ranked text: its best passage, its next best (-1 when no
// other passage of the text matches), and the best passage's score.
type Hit struct {
	Passage int
	Second  int
	Text    int
	Score   float64
}

// Search returns the best k texts for terms by their best passage, and how
// many match; only those k are sorted, so a common word costs a pass.
func (x *Index) Search(terms []string, k int) ([]Hit, int) {
	if len(x.passages) == 0 || len(terms) == 0 || k <= 0 {
		return nil, 0
	}
	if len(x.scores) < len(x.passages) {
		x.scores = make([]float64, len(x.passages))
	}
	for len(x.best) < len(x.texts) {
		x.best = append(x.best, -1)
		x.second = append(x.second, -1)
	}
	hits := x.score(terms, x.hits[:0])
	// One hit per text, its best passage and the next best.
	groups := x.groups[:0]
	for _, p := range hits {
		t := x.owner[p]
		b, s := x.best[t], x.second[t]
		switch {
		case b < 0:
			x.best[t] = int32(p)
			groups = append(groups, int(t))
		case x.better(p, int(b)):
			x.best[t], x.second[t] = int32(p), b
		case s < 0 || x.better(p, int(s)):
			x.second[t] = int32(p)
		}
	}
	top := topHits(groups, func(t int) Hit {
		p := int(x.best[t])
		return Hit{Passage: p, Second: int(x.second[t]), Text: t, Score: x.scores[p]}
	}, max(k, PhraseCandidates))
	for _, p := range hits {
		x.scores[p] = 0
	}
	for _, t := range groups {
		x.best[t], x.second[t] = -1, -1
	}
	x.hits, x.groups = hits[:0], groups[:0]
	if len(terms) > 1 {
		// Phrase and proximity re-read a passage, so only the best few.
		tight := tightSpan(terms)
		for i := range top[:min(len(top), PhraseCandidates)] {
			ps := x.passages[top[i].Passage]
			text := x.texts[top[i].Text]
			top[i].Score *= proximity(text, ps.start, ps.end, terms, tight)
		}
		sortHits(top)
	}
	return top[:min(len(top), k)], len(groups)
}

// proximity is a passage's score factor: phraseBoost for the phrase, times
// the share of the terms its densest span holds (so every word outranks a
// shorter passage missing one), times a boost for how near that span is to
// tight bytes.
func proximity(text string, start, end int, terms []string, tight int) float64 {
	sp := spanOf(text, start, end, terms, proximitySpanBytes)
	if sp.held == 0 || sp.distinct == 0 {
		return 1
	}
	f := 1.0
	if sp.phrase {
		f = phraseBoost
	}
	near := min(float64(tight)/float64(max(sp.end-sp.at, 1)), 1)
	share := float64(sp.held) / float64(sp.distinct)
	return f * share * (1 + proximityBoost*share*near)
}

// tightSpan is the bytes of the distinct terms one after the other.
func tightSpan(terms []string) int {
	n := -1
	for i, t := range terms {
		if !slices.Contains(terms[:i], t) {
			n += len(t) + 1
		}
	}
	return max(n, 1)
}

func (x *Index) better(p, q int) bool {
	return x.scores[p] > x.scores[q] || (x.scores[p] == x.scores[q] && p < q)
}

// score adds BM25 scores into x.scores, appending each new passage to hits.
func (x *Index) score(terms []string, hits []int) []int {
	n := float64(len(x.passages))
	avg := max(float64(x.terms)/n, 1)
	// BM25's length normalisation, k1·(1-b+b·dl/avg), as c0 + c1·dl.
	c0, c1 := bm25K1*(1-bm25B), bm25K1*bm25B/avg
	scores, lens := x.scores, x.lens
	for i, t := range terms {
		if slices.Contains(terms[:i], t) {
			continue
		}
		id, ok := x.ids[t]
		if !ok {
			continue
		}
		ps := x.postings[id]
		df := float64(len(ps))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		w := idf * (bm25K1 + 1)
		for _, p := range ps {
			tf := float64(p.tf)
			s := w * tf / (tf + c0 + c1*float64(lens[p.passage]))
			if scores[p.passage] == 0 {
				hits = append(hits, int(p.passage))
			}
			scores[p.passage] += s
		}
	}
	return hits
}

// topHits is the best k items, best first, by a min-heap over one pass.
func topHits(items []int, hit func(int) Hit, k int) []Hit {
	h := make([]Hit, 0, min(k, len(items)))
	for _, it := range items {
		c := hit(it)
		if len(h) < k {
			h = append(h, c)
			for i := len(h) - 1; i > 0; { // sift up
				p := (i - 1) / 2
				if !ranksBelow(h[i], h[p]) {
					break
				}
				h[i], h[p] = h[p], h[i]
				i = p
			}
			continue
		}
		if !ranksBelow(h[0], c) {
			continue
		}
		h[0] = c
		for i := 0; ; { // sift down
			m, l, r := i, 2*i+1, 2*i+2
			if l < len(h) && ranksBelow(h[l], h[m]) {
				m = l
			}
			if r < len(h) && ranksBelow(h[r], h[m]) {
				m = r
			}
			if m == i {
				break
			}
			h[i], h[m] = h[m], h[i]
			i = m
		}
	}
	sortHits(h)
	return h
}

func ranksBelow(a, b Hit) bool {
	return a.Score < b.Score || (a.Score == b.Score && a.Passage > b.Passage)
}

// sortHits orders hits best first, earlier passages first on a tie.
func sortHits(hs []Hit) {
	slices.SortFunc(hs, func(a, b Hit) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return a.Passage - b.Passage
	})
}
