package recallindex

import (
	"cmp"
	"slices"
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

// moreLines adds to en's variants the other lines of its text, and of each
// variant's text after that variant, that hold every term of the query (a
// value printed on many lines, a line each file view shows), not shown
// already: a line each tells them apart where an excerpt each would not
// fit. They include en's next best place, shown by its lines then instead
// of a second excerpt.
func (pg *pager) moreLines(en *entry) {
	all := distinctCount(pg.terms)
	if en.held < all {
		return
	}
	seen := map[string]bool{pg.lines(en.src, en.place): true}
	for _, v := range en.variants {
		seen[pg.lines(v.src, place{from: v.from, to: v.to})] = true
	}
	next := ""
	if en.next.ok {
		next = pg.lines(en.src, en.next)
	}
	linesOf := func(t int, out []variant) []variant {
		for _, p := range pg.x.matching(t, pg.terms) {
			sp := pg.spanIn(p)
			key := pg.lines(t, sp)
			if sp.held < all || seen[key] {
				continue
			}
			seen[key] = true
			out = append(out, variant{src: t, from: sp.from, to: sp.to, line: true})
			if t == en.src && key == next {
				en.next = place{}
			}
		}
		return out
	}
	vs := linesOf(en.src, nil)
	done := map[int]bool{en.src: true}
	for _, v := range en.variants {
		vs = append(vs, v)
		if !done[v.src] {
			done[v.src] = true
			vs = linesOf(v.src, vs)
		}
	}
	en.variants = vs
}
