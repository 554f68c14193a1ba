package recallindex

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// maxQueryTerms bounds the distinct terms spanOf tells apart: a query
// holds at most this many (the engine cuts it before).
const maxQueryTerms = 64

// occurrence is one query term found in a text: its bytes and which of
// the query's distinct terms it is.
type occurrence struct {
	at, end, term int
}

// span is where terms occur densest in a passage (spanOf), how many
// distinct terms the query has and the span holds, and whether the passage
// holds them one after the other.
type span struct {
	at, end        int
	distinct, held int
	phrase         bool
}

// spanOf reads text[from:to] once for span: [at, end) at most limit bytes
// (or one longer matching word), the most distinct terms, the shortest
// such, the earliest on a tie. Terms match whole words or parts
// (EachTermAt), offsets into text itself, whatever lower-casing does.
func spanOf(text string, from, to int, terms []string, limit int) span {
	var occ []occurrence
	phrase := len(terms) == 0
	next := 0 // terms matched one after the other so far
	EachTermAt(text[from:to], func(t string, a, e int) bool {
		if i := distinctIndex(terms, t); i >= 0 {
			occ = append(occ, occurrence{at: from + a, end: from + e, term: i})
		}
		if !phrase {
			switch {
			case t == terms[next]:
				next++
			case t == terms[0]:
				next = 1
			default:
				next = 0
			}
			phrase = next == len(terms)
		}
		return true
	})
	sp := span{distinct: distinctCount(terms), phrase: phrase && len(terms) > 0}
	if len(occ) == 0 {
		return sp
	}
	var counts [maxQueryTerms]int
	inWindow := 0
	l := 0
	for r, o := range occ {
		if counts[o.term] == 0 {
			inWindow++
		}
		counts[o.term]++
		// Drop from the left what is too far, and what the window holds
		// again further on: the window stays the shortest.
		for l < r && (o.end-occ[l].at > limit || counts[occ[l].term] > 1) {
			counts[occ[l].term]--
			if counts[occ[l].term] == 0 {
				inWindow--
			}
			l++
		}
		if inWindow > sp.held || (inWindow == sp.held && o.end-occ[l].at < sp.end-sp.at) {
			sp.held, sp.at, sp.end = inWindow, occ[l].at, o.end
		}
	}
	return sp
}

// distinctCount is how many distinct terms terms holds, at most
// maxQueryTerms.
func distinctCount(terms []string) int {
	n := 0
	for i, t := range terms[:min(len(terms), maxQueryTerms)] {
		if !slices.Contains(terms[:i], t) {
			n++
		}
	}
	return n
}

// distinctIndex is the index of t among the distinct terms of terms, -1
// when t is not one of them or past maxQueryTerms.
func distinctIndex(terms []string, t string) int {
	terms = terms[:min(len(terms), maxQueryTerms)]
	i := slices.Index(terms, t)
	if i < 0 {
		return -1
	}
	return distinctCount(terms[:i])
}

// LineSpan widens [at, end) of text to the whole lines it touches, when
// they fit in limit bytes; otherwise it is returned as it is.
func LineSpan(text string, at, end, limit int) (int, int) {
	room := limit - (end - at)
	if room < 0 {
		return at, end
	}
	from := max(at-room, 0)
	a := strings.LastIndexByte(text[from:at], '\n')
	if a < 0 && from > 0 {
		return at, end // the line starts farther back than the room
	}
	a = from + a + 1
	to := min(end+(room-(at-a)), len(text))
	if to < end {
		return at, end
	}
	e := strings.IndexByte(text[end:to], '\n')
	switch {
	case e >= 0:
		e = end + e
	case to == len(text):
		e = len(text)
	default:
		return at, end // the line ends farther on than the room
	}
	return a, e
}

// Excerpt is the piece of text around [at, end) (the match's whole lines,
// LineSpan) at most limit bytes, and where it starts in text: the span
// itself, the context around it shared out on both sides, cut at line
// breaks where the context holds one, else at spaces, never inside a
// UTF-8 sequence; a span longer than limit is cut to its start.
func Excerpt(text string, at, end, limit int) (out string, start int) {
	if limit <= 0 {
		return "", at
	}
	if end-at > limit {
		end = at + CutEnd(text[at:], limit)
		for end > at && end < len(text) && !utf8.RuneStart(text[end]) {
			end-- // a limit below one rune: CutEnd cut inside it
		}
		return text[at:end], at
	}
	room := limit - (end - at)
	before := min(room/2, at)
	after := min(room-before, len(text)-end)
	before = min(room-after, at) // what the end left unused goes before
	a, e := at-before, end+after
	if a > 0 {
		a = snapStart(text, a, at)
	}
	if e < len(text) {
		e = snapEnd(text, end, e)
	}
	return text[a:e], a
}

// snapStart moves a context's start a (before the span's start at) to the
// start of a line, else of a word, else of a rune, within [a, at].
func snapStart(text string, a, at int) int {
	if i := strings.IndexByte(text[a:at], '\n'); i >= 0 {
		return a + i + 1
	}
	if i := strings.IndexAny(text[a:at], " \t"); i >= 0 {
		return a + i + 1
	}
	for a < at && !utf8.RuneStart(text[a]) {
		a++
	}
	return a
}

// snapEnd moves a context's end e (after the span's end) back to the end
// of a line, else of a word, else of a rune, within [end, e].
func snapEnd(text string, end, e int) int {
	if i := strings.LastIndexByte(text[end:e], '\n'); i >= 0 {
		return end + i
	}
	if i := strings.LastIndexAny(text[end:e], " \t"); i >= 0 {
		return end + i
	}
	for e > end && e < len(text) && !utf8.RuneStart(text[e]) {
		e--
	}
	return e
}
