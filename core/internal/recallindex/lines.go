package recallindex

import (
	"cmp"
	"slices"
	"strings"
)

// matchingMax bounds the passages of one text read for the other places
// the query's terms occur as densely as at its excerpt.
const matchingMax = 64

// matching is the passages of text t that hold any of terms, in order, at
// most matchingMax: a walk of each term's postings from t's first passage.
func (x *Index) matching(t int, terms []string) []int {
	lo, hi := int(x.firsts[t]), len(x.passages)
	if t+1 < len(x.firsts) {
		hi = int(x.firsts[t+1])
	}
	var out []int
	for i, term := range terms {
		id, ok := x.ids[term]
		if !ok || slices.Contains(terms[:i], term) {
			continue
		}
		ps := x.postings[id]
		j, _ := slices.BinarySearchFunc(ps, uint32(lo), func(p posting, v uint32) int { return cmp.Compare(p.passage, v) })
		for ; j < len(ps) && int(ps[j].passage) < hi; j++ {
			out = append(out, int(ps[j].passage))
		}
	}
	slices.Sort(out)
	out = slices.Compact(out)
	return out[:min(len(out), matchingMax)]
}

// moreLines lists among en's variants, first, the other lines of its text
// that hold every term of the query (a value printed on many lines, a line
// a file view shows twice), not shown already: a line each tells them
// apart where an excerpt each would not fit. They include en's next best
// place, shown by its lines then instead of a second excerpt.
func (pg *pager) moreLines(en *entry) {
	all := distinctCount(pg.terms)
	if en.held < all {
		return
	}
	var more []variant
	seen := map[string]bool{pg.lines(en.src, en.place): true}
	for _, v := range en.variants {
		seen[strings.TrimSpace(pg.x.Text(v.src)[v.from:v.to])] = true
	}
	next := ""
	if en.next.ok {
		next = pg.lines(en.src, en.next)
	}
	for _, p := range pg.x.matching(en.src, pg.terms) {
		sp := pg.spanIn(p)
		key := pg.lines(en.src, sp)
		if sp.held < all || seen[key] {
			continue
		}
		seen[key] = true
		more = append(more, variant{src: en.src, from: sp.from, to: sp.to, line: true})
		if key == next {
			en.next = place{}
		}
	}
	en.variants = slices.Insert(en.variants, 0, more...)
}
