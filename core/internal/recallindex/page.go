package recallindex

import (
	"slices"
	"strconv"
	"strings"

	"github.com/adk-contextguard/contextguard/core/internal/textcut"
)

// A page of matches (ARCHITECTURE.md, Recall): each excerpt centred on
// the span where the query's terms occur densest; a text whose lines an
// excerpt already shows, or shows in another view (Gist), is named under it.
// Sizes are in bytes unless said.
const (
	perPage  = 5
	maxPages = 20 // past the twentieth, a query is better refined
	// HeaderBytes is the room kept for an answer's header and paging lines.
	HeaderBytes = 224
	// QuoteBytes bounds the query or a call_id as an answer quotes it back.
	QuoteBytes = 60
	// collapseSlack: duplicates collapse, so a page reads more texts than
	// it shows.
	collapseSlack = 3
	// spanBytes bounds the span an excerpt is centred on, about a
	// paragraph; lineBytes the whole lines around it, which also tell
	// duplicates apart.
	spanBytes     = 400
	lineBytes     = 600
	alsoMax       = 8 // other turns an excerpt lists its lines also in
	ellipsisBytes = 2 * len("…")
	topExcerpts   = 3 // the likeliest excerpts get a double share
	// An excerpt is planned at a sentence around the match plus its source
	// line, and cut to no less than the match and a few words.
	minExcerptBytes = 160
	sourceBytes     = 80
	minCutBytes     = 40
	// splitBytes is the least each of two places of one text gets.
	splitBytes = 200
	gap        = "\n…\n"
	// Other views an excerpt lists, the lines shown of each, and about a
	// line of context a side while the room holds it.
	variantsMax    = 6
	variantBytes   = 320
	variantContext = 160
	// excerptShare: an excerpt with variants keeps a third of its room,
	// with which the recall benchmark found the sought lines most often.
	excerptShare = 3
	sameText     = "elsewhere in the same text"
	variantsHead = "Other views of these lines:\n"
)

// Source is where a text came from, as a page names it: its user turn, and
// a phrase such as "turn 3, result of tool read_file (call_id c1)".
type Source struct {
	Turn  int
	Where string
}

// PageHits is how many hits a search reads for page: enough for the pages
// up to it when duplicates collapse, and at least those Search re-ranks.
func PageHits(page int) int { return hitsFor(page, perPage) }

func hitsFor(page, n int) int {
	return max(min(page, maxPages)*n*collapseSlack, PhraseCandidates)
}

type pager struct {
	x     *Index
	terms []string
	src   func(t int) Source
}

// entry is one excerpt of a page: its text and place, the other turns the
// same lines occur in, its variants (best first), and its text's next best
// passage (second, -1 for none) and its place.
type entry struct {
	src int
	place
	also     []int
	variants []variant
	second   int
	next     place
}

// place is the span of the query's words in a passage, and its whole lines.
type place struct {
	at, end, from, to int
	held              int // the distinct terms the span holds
	ok                bool
}

// variant is a place of text src whose lines read as an entry's.
type variant struct {
	src, from, to int
	line          bool // one of moreLines: its lines alone
}

// Page is page (from 1) of the matches of terms within budget bytes, note
// first: query is as the model wrote it, hits and total Search's for
// PageHits(page), src names a text's source.
func (x *Index) Page(terms []string, query string, hits []Hit, total, page, budget int, note string, src func(t int) Source) string {
	page = max(page, 1)
	quoted := strconv.Quote(textcut.Prefix(query, QuoteBytes))
	if total == 0 {
		return note + "recall_context: no earlier excerpt matches " + quoted + ". Try other words: a name, a number, an error's words."
	}
	pg := pager{x: x, terms: terms, src: src}
	// Fewer readable excerpts rather than five unreadable ones.
	room := budget - HeaderBytes - len(note)
	n := min(perPage, max(room/(minExcerptBytes+sourceBytes), 1))
	hits = hits[:min(len(hits), hitsFor(page, n))]
	entries, read := pg.collapse(hits, page*n+1)
	have := (len(entries) + n - 1) / n
	pages := have
	if read < total { // texts not read yet: about as many pages more
		pages = max(have, min((len(entries)+total-read+n-1)/n, maxPages))
	}
	page = min(page, have)
	shown := entries[(page-1)*n : min(page*n, len(entries))]
	heads := make([]string, len(shown))
	shares := 0
	for i := range shown {
		if shown[i].second >= 0 {
			shown[i].next = pg.spanIn(shown[i].second)
			pg.nextAsVariant(&shown[i])
		}
		pg.moreLines(&shown[i])
		heads[i] = "\n[" + strconv.Itoa((page-1)*n+i+1) + "] " + pg.describe(shown[i]) + ":\n"
		room -= len(heads[i]) + len("\n")
		shares += share(i)
	}
	var b strings.Builder
	b.WriteString(note)
	b.WriteString("recall_context: " + strconv.Itoa(total) + " excerpt(s) of the earlier conversation match " +
		quoted + ", best first; page " + strconv.Itoa(page) + " of " + strconv.Itoa(pages) + ".\n")
	for i, en := range shown {
		b.WriteString(heads[i])
		each := max(room*share(i)/shares, minCutBytes) - ellipsisBytes
		vars := pg.variantsText(en, each)
		b.WriteString(pg.excerpt(en, each-len(vars)))
		b.WriteByte('\n')
		b.WriteString(vars)
	}
	if page < pages {
		b.WriteString("\nMore matches exist: call recall_context with the same query and page " + strconv.Itoa(page+1) + ".")
	}
	return b.String()
}

// share is the share of a page's room the excerpt at index i gets.
func share(i int) int {
	if i < topExcerpts {
		return 2
	}
	return 1
}

// spanIn is the place where the terms occur densest in passage p.
func (pg *pager) spanIn(p int) place {
	t, ps, pe := pg.x.Passage(p)
	text := pg.x.Text(t)
	sp := spanOf(text, ps, pe, pg.terms, spanBytes)
	at, end := sp.at, sp.end
	if sp.held == 0 { // matched by a term's head only: the passage's start
		at, end = ps, ps+CutEnd(text[ps:pe], spanBytes)
	}
	from, to := LineSpan(text, at, end, lineBytes)
	return place{at: at, end: end, from: from, to: to, held: sp.held, ok: true}
}

// lines is the trimmed text of place sp of text t.
func (pg *pager) lines(t int, sp place) string {
	return strings.TrimSpace(pg.x.Text(t)[sp.from:sp.to])
}

// collapse turns hits into up to want entries: a duplicate of an earlier
// one's lines names its turn under it, another view of them (the same Gist)
// is listed under it. read is how many hits it read.
func (pg *pager) collapse(hits []Hit, want int) (entries []entry, read int) {
	entries = make([]entry, 0, min(len(hits), want))
	seen := make(map[string]int, min(len(hits), want))
	gists := make(map[string]int, min(len(hits), want))
	full := false // the page's entries are all there: later hits only join them
	asVariant := func(t int, sp place) bool {
		key := pg.lines(t, sp)
		if _, dup := seen[key]; dup {
			return true
		}
		j, near := gists[Gist(key)]
		if !near {
			return false
		}
		seen[key] = -1 // its exact repeats are not named again
		if len(entries[j].variants) < variantsMax {
			entries[j].variants = append(entries[j].variants, variant{src: t, from: sp.from, to: sp.to})
		}
		return true
	}
	for i, h := range hits {
		if !full {
			read = i + 1
		}
		sp := pg.spanIn(h.Passage)
		key := pg.lines(h.Text, sp)
		if j, dup := seen[key]; dup {
			if j >= 0 {
				entries[j].addAlso(pg.src(entries[j].src).Turn, pg.src(h.Text).Turn)
			}
			// A repeat may hold, further on, the same lines in another view.
			if h.Second >= 0 {
				asVariant(h.Text, pg.spanIn(h.Second))
			}
			continue
		}
		if asVariant(h.Text, sp) || full {
			continue
		}
		seen[key], gists[Gist(key)] = len(entries), len(entries)
		entries = append(entries, entry{src: h.Text, place: sp, second: h.Second})
		full = len(entries) == want
	}
	return entries, read
}

func (en *entry) addAlso(own, turn int) {
	if turn != own && !slices.Contains(en.also, turn) && len(en.also) < alsoMax {
		en.also = append(en.also, turn)
	}
}

// nextAsVariant lists en's next best place first among its variants when
// it is another view of en's lines: a line costs less than an excerpt.
func (pg *pager) nextAsVariant(en *entry) {
	first, next := pg.lines(en.src, en.place), pg.lines(en.src, en.next)
	if next == first || Gist(next) != Gist(first) {
		return
	}
	en.variants = slices.Insert(en.variants, 0, variant{src: en.src, from: en.next.from, to: en.next.to})
	en.next = place{}
}

// variantsText is en's variants within limit: the lines of as many as fit,
// then context around each but moreLines' while the room holds it.
func (pg *pager) variantsText(en entry, limit int) string {
	room := limit - limit/excerptShare - len(variantsHead)
	var items []string
	used := 0
	for i := range en.variants {
		item := pg.variantItem(en, i, 0)
		if used+len(item) > room {
			break
		}
		items = append(items, item)
		used += len(item)
	}
	if len(items) == 0 {
		return ""
	}
	for i := range items {
		if en.variants[i].line {
			continue
		}
		if wide := pg.variantItem(en, i, variantContext); used+len(wide)-len(items[i]) <= room {
			used += len(wide) - len(items[i])
			items[i] = wide
		}
	}
	return variantsHead + strings.Join(items, "")
}

// variantItem is en's variant i: its place unless the one before is of the
// same text, and its lines with context bytes around them.
func (pg *pager) variantItem(en entry, i, context int) string {
	v := en.variants[i]
	out, _ := Excerpt(pg.x.Text(v.src), v.from, v.to, min(v.to-v.from, variantBytes)+context)
	head := ""
	if i == 0 || en.variants[i-1].src != v.src {
		where := sameText
		if v.src != en.src {
			where = pg.describe(entry{src: v.src})
		}
		head = "- " + where + ":\n"
	}
	return head + strings.TrimSpace(out) + "\n"
}

// excerpt is en's text within limit: its whole lines and context when they
// fit, else the span, "…" where the text goes on; the room is shared with
// the next best passage when it lies outside and both get splitBytes.
func (pg *pager) excerpt(en entry, limit int) string {
	text := pg.x.Text(en.src)
	if n := en.next; n.ok && limit >= 2*splitBytes && (n.to <= en.from || n.from >= en.to) {
		a, b := en.place, n
		if b.from < a.from {
			a, b = b, a
		}
		out, aStart, aEnd := placeExcerpt(text, a, (limit-len(gap))/2)
		if aEnd <= b.from { // the first place's excerpt does not reach the second
			more, bStart, bEnd := placeExcerpt(text, b, limit-len(gap)-len(out))
			if bStart >= aEnd {
				return marked(out, aStart > 0, false) + gap + marked(more, false, bEnd < len(text))
			}
		}
	}
	out, start, end := placeExcerpt(text, en.place, limit)
	return marked(out, start > 0, end < len(text))
}

// placeExcerpt is the excerpt of text around sp within limit bytes, and
// its bytes in text.
func placeExcerpt(text string, sp place, limit int) (string, int, int) {
	at, end := sp.from, sp.to
	if end-at > limit {
		at, end = sp.at, sp.end
	}
	out, start := Excerpt(text, at, end, limit)
	return out, start, start + len(out)
}

// marked is out with "…" where the text goes on before or after it.
func marked(out string, before, after bool) string {
	if before {
		out = "…" + out
	}
	if after {
		out += "…"
	}
	return out
}

// describe is en's source and the other turns its lines occur in.
func (pg *pager) describe(en entry) string {
	d := pg.src(en.src).Where
	if len(en.also) == 0 {
		return d
	}
	d += "; the same lines also in turn"
	if len(en.also) > 1 {
		d += "s"
	}
	for i, t := range en.also {
		if i > 0 {
			d += ","
		}
		d += " " + strconv.Itoa(t)
	}
	return d
}
