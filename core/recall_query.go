package core

import (
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/pairs"
	"github.com/adk-contextguard/contextguard/core/internal/recallindex"
	"github.com/adk-contextguard/contextguard/core/internal/textcut"
)

// The recall tool's query and answer (ARCHITECTURE.md, Recall): a query of
// any size or content becomes a bounded list of terms, and the answer fits
// its budget, saying when more exists and how to page.

const (
	// maxRecallQueryBytes bounds the query read: a question or a quoted
	// error message fits; a longer one is cut here, with a note, so a 1 MB
	// query costs what a short one does.
	maxRecallQueryBytes = 1024
	// maxRecallTerms bounds the distinct terms ranked: each walks one
	// posting list.
	maxRecallTerms = 32
	// recallDefaultTokens is the answer's default size: a few excerpts,
	// about what one medium tool result costs.
	recallDefaultTokens = 2000
	// recallRoomShare: the answer takes at most 1/recallRoomShare of the
	// room the agent's last request left under the window, so the answer
	// itself cannot push the next request over.
	recallRoomShare = 4
	// recallMinTokens is the least answer worth giving (a page of a tool
	// result and its header, recallPageBytes + recallHeaderBytes): below
	// it the room is better used by a compaction, which the answer then
	// suggests.
	recallMinTokens = 160
	// recallBytesPerToken is the first guess of an answer's size in bytes
	// for its budget in tokens, low (prose runs at about four bytes a
	// token); the answer is then counted as the guard counts it and made
	// smaller until it fits (recallFit), since dense tool output runs
	// below three.
	recallBytesPerToken = 3
	// recallFitTries bounds how often an answer over its budget is made
	// again smaller, each time by the ratio it was over; past it, the
	// answer's bytes are halved until it fits.
	recallFitTries = 4
	// recallFitMargin shrinks an answer remade for its budget a little more
	// than the ratio it was over, so the remake fits at once.
	recallFitMargin = 0.95
	// recallPerPage is how many excerpts one page shows at most.
	recallPerPage = 5
	// maxRecallPages bounds the pages of matches offered: past the
	// twentieth page a query is better refined than paged, and the best
	// k excerpts cost a heap of k.
	maxRecallPages = 20
	// recallHeaderBytes is the room kept for an answer's header and
	// paging lines (the query is quoted in at most recallQuoteBytes).
	recallHeaderBytes = 224
	// recallQuoteBytes bounds the query as an answer quotes it back.
	recallQuoteBytes = 60
	// recallCollapseSlack is how many texts a page reads per excerpt it
	// shows: duplicates collapse into one excerpt, so a page needs more
	// candidates than it shows.
	recallCollapseSlack = 3
	// recallSpanBytes bounds the span of the query's words an excerpt is
	// centred on (recallindex.MatchSpan): about a paragraph.
	recallSpanBytes = 400
	// recallLineBytes bounds the whole lines around that span an excerpt
	// shows first, and that tell two excerpts apart as duplicates.
	recallLineBytes = 600
	// recallAlsoMax bounds the other places an excerpt lists where its
	// lines also occur.
	recallAlsoMax = 8
	// recallEllipsisBytes is the room kept in an excerpt for the marks
	// ("…") of a cut on either side.
	recallEllipsisBytes = 2 * len("…")
)

// recallQuery is a cleaned query: its terms in order, at most
// maxRecallTerms.
type recallQuery struct {
	text  string // as shown back, printable
	terms []string
}

// cleanQuery reads the query: at most maxRecallQueryBytes, invalid UTF-8
// and control characters replaced, and its terms. note says what was
// changed or, when there are no terms, why nothing can be searched.
func cleanQuery(q string) (recallQuery, string) {
	var note string
	if len(q) > maxRecallQueryBytes {
		q = textcut.Prefix(q, maxRecallQueryBytes)
		note = "Note: the query was cut to its first " + strconv.Itoa(maxRecallQueryBytes) + " bytes.\n"
	}
	q = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == utf8RuneError {
			return ' '
		}
		return r
	}, textcut.Sanitize(q))
	q = strings.Join(strings.Fields(q), " ")
	var terms []string
	eachTerm(q, func(t string) bool {
		terms = append(terms, t)
		return len(terms) < maxRecallTerms
	})
	if len(terms) == 0 {
		return recallQuery{}, "recall_context: the query has no words to search for. Give words or a phrase from the earlier conversation (an error message, a file name, a value), or the call_id of a removed tool result."
	}
	return recallQuery{text: q, terms: terms}, note
}

// utf8RuneError is what textcut.Sanitize leaves of invalid bytes.
const utf8RuneError = '\uFFFD'

// recallBudget is the answer's budget in tokens: recallDefaultTokens, at
// most a quarter of the room the agent's last request left (the window
// minus its calibrated count, as Usage reads them); 0 when that is below
// recallMinTokens.
func recallBudget(s guardState) int {
	tokens := recallDefaultTokens
	if s.window > 0 && s.tokens > 0 {
		tokens = min(tokens, max(s.window-s.tokens, 0)/recallRoomShare)
	}
	if tokens < recallMinTokens {
		return 0
	}
	return tokens
}

// recallFit is an answer's budget as the guard counts it: tokens, and the
// count of an answer as the tool response the agent's next request
// carries, with the estimator of the agent's model, calibrated as the
// session's counts are.
type recallFit struct {
	tokens int
	count  func(answer string) int
}

// recallFitFor is the fit of a budget of tokens for the estimator est of
// the agent's model, in a session whose state is s.
func recallFitFor(tokens int, est tokenEstimator, s guardState) recallFit {
	cal := newCalibration(s, est)
	return recallFit{tokens: tokens, count: func(answer string) int {
		return cal.scale(est.content(recallAnswerContent(answer)))
	}}
}

// recallAnswerContent is the answer as the next request carries it: the
// recall tool's response, its text under "result" (as the adapters return
// it).
func recallAnswerContent(answer string) *genai.Content {
	return &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{
		Name: RecallToolName, Response: map[string]any{"result": answer}}}}}
}

// fitted is render's answer for the most bytes that fit the budget: first
// at recallBytesPerToken, then smaller by the ratio it was over, at most
// recallFitTries times, then halved until it fits; noRoom when nothing
// does.
func (f recallFit) fitted(render func(bytes int) string) string {
	if f.tokens <= 0 {
		return noRoom
	}
	bytes := f.tokens * recallBytesPerToken // tokens is at most recallDefaultTokens
	for range recallFitTries {
		out := render(bytes)
		n := f.count(out)
		if n <= f.tokens {
			return out
		}
		bytes = int(float64(bytes) * float64(f.tokens) / float64(n) * recallFitMargin)
	}
	for bytes > 0 {
		if out := render(bytes); f.count(out) <= f.tokens {
			return out
		}
		bytes /= 2
	}
	return noRoom
}

// noRoom is the answer when the context has no room for one.
const noRoom = "recall_context: the context is too full to recall anything now; call compact_context first if you have it, or continue without the detail."

// recallEntry is one excerpt of a page: the text it is cut from, the span
// of the query's words there and that span's whole lines, and the other
// places (turns) the same lines occur.
type recallEntry struct {
	src      int
	at, end  int
	from, to int
	also     []int
	// variants are other places whose lines read the same in another
	// view (recallindex.Gist: other line numbers, diff marks, markup),
	// best first: the page shows their lines, not a whole excerpt each.
	variants []recallVariant
	// second is the text's next best passage, -1 when none; next its span,
	// read for an entry a page shows (ok).
	second int
	next   recallSpan
}

// recallSpan is the span of the query's words in a passage of a text, and
// its whole lines.
type recallSpan struct {
	at, end, from, to int
	ok                bool
}

// spanIn is the span where terms occur densest in passage p of x, and its
// whole lines.
func (x *recallIndex) spanIn(p int, terms []string) recallSpan {
	t, ps, pe := x.ix.Passage(p)
	text := x.ix.Text(t)
	at, end, ok := recallindex.MatchSpan(text, ps, pe, terms, recallSpanBytes)
	if !ok { // matched by a term's head only: the passage's start
		at, end = ps, ps+recallindex.CutEnd(text[ps:pe], recallSpanBytes)
	}
	from, to := recallindex.LineSpan(text, at, end, recallLineBytes)
	return recallSpan{at: at, end: end, from: from, to: to, ok: true}
}

// renderMatches is a page of x's matches for q within fit, note first.
func renderMatches(x *recallIndex, q recallQuery, page int, fit recallFit, note string) string {
	if fit.tokens <= 0 {
		return noRoom
	}
	if x.ix.Passages() == 0 {
		return note + "recall_context: nothing of this conversation has been compacted or pruned yet; everything is still in your context."
	}
	page = max(page, 1)
	// One search for every size the answer is tried at: a smaller one
	// reads fewer of its hits.
	hits, total := x.ix.Search(q.terms, recallHits(page, recallPerPage))
	return fit.fitted(func(bytes int) string { return renderPage(x, q, hits, total, page, bytes, note) })
}

// recallHits is how many hits a page of perPage excerpts reads: enough
// for the pages up to page when duplicates collapse, and at least the
// hits the search re-ranks, among which the other views of a page's lines
// are looked for.
func recallHits(page, perPage int) int {
	return max(min(page, maxRecallPages)*perPage*recallCollapseSlack, recallindex.PhraseCandidates)
}

// renderPage is page of x's matches for q within budget bytes, note
// first: hits are the best of the total texts that match, best first.
func renderPage(x *recallIndex, q recallQuery, hits []recallindex.Hit, total, page, budget int, note string) string {
	// A small budget shows fewer excerpts a page, each at least
	// minExcerptBytes, rather than five unreadable ones.
	room := budget - recallHeaderBytes - len(note)
	perPage := min(recallPerPage, max(room/(minExcerptBytes+recallSourceBytes), 1))
	hits = hits[:min(len(hits), recallHits(page, perPage))]
	if total == 0 {
		return note + "recall_context: no earlier excerpt matches " + strconv.Quote(textcut.Prefix(q.text, recallQuoteBytes)) + ". Try other words: a name, a number, an error's words."
	}
	entries, read := x.collapse(hits, q.terms, page*perPage+1)
	have := (len(entries) + perPage - 1) / perPage
	pages := have
	if read < total { // texts not read yet: about as many pages more
		pages = max(have, min((len(entries)+total-read+perPage-1)/perPage, maxRecallPages))
	}
	page = min(page, have)
	shown := entries[(page-1)*perPage : min(page*perPage, len(entries))]
	for i := range shown {
		if shown[i].second >= 0 {
			shown[i].next = x.spanIn(shown[i].second, q.terms)
			x.nextAsVariant(&shown[i])
		}
	}
	heads := make([]string, len(shown))
	for i, en := range shown {
		heads[i] = "\n[" + strconv.Itoa((page-1)*perPage+i+1) + "] " + x.describe(en) + ":\n"
		room -= len(heads[i]) + len("\n")
	}
	shares := 0
	for i := range shown {
		shares += excerptShare(i)
	}
	var b strings.Builder
	b.WriteString(note)
	b.WriteString("recall_context: " + strconv.Itoa(total) + " excerpt(s) of the earlier conversation match " +
		strconv.Quote(textcut.Prefix(q.text, recallQuoteBytes)) + ", best first; page " + strconv.Itoa(page) + " of " + strconv.Itoa(pages) + ".\n")
	for i, en := range shown {
		b.WriteString(heads[i])
		each := max(room*excerptShare(i)/shares, minCutBytes) - recallEllipsisBytes
		vars := x.variantsText(en, each)
		b.WriteString(x.excerpt(en, each-len(vars)))
		b.WriteByte('\n')
		b.WriteString(vars)
	}
	if page < pages {
		b.WriteString("\nMore matches exist: call recall_context with the same query and page " + strconv.Itoa(page+1) + ".")
	}
	return b.String()
}

// excerptShare is the share of a page's room the excerpt at index i
// gets: the first ones, the likeliest, twice the room of the others.
func excerptShare(i int) int {
	if i < recallTopExcerpts {
		return 2
	}
	return 1
}

// recallTopExcerpts is how many of a page's first excerpts get a double
// share of its room.
const recallTopExcerpts = 3

// recallVariant is a place whose lines read as an entry's in another
// view: its text and those lines.
type recallVariant struct {
	src, from, to int
}

// collapse turns hits, best first, into entries, until it has want of
// them: each centred on the span where the query's terms occur densest in
// its best passage. An entry whose lines an earlier entry already shows is
// not shown again, but named among that entry's other places; one whose
// lines read as an earlier entry's in another view (the same gist) is
// listed under it by its lines alone. read is how many hits it read.
func (x *recallIndex) collapse(hits []recallindex.Hit, terms []string, want int) (entries []recallEntry, read int) {
	entries = make([]recallEntry, 0, min(len(hits), want))
	seen := make(map[string]int, min(len(hits), want))
	gists := make(map[string]int, min(len(hits), want))
	full := false // the page's entries are all there: later hits only join them
	// variant lists the place sp of text t under the entry whose lines
	// read as its own in another view, if one does and the place is new.
	variant := func(t int, sp recallSpan) bool {
		key := strings.TrimSpace(x.ix.Text(t)[sp.from:sp.to])
		if _, dup := seen[key]; dup {
			return true
		}
		j, near := gists[recallindex.Gist(key)]
		if !near {
			return false
		}
		seen[key] = -1 // its exact repeats are not named again
		if len(entries[j].variants) < recallVariantsMax {
			entries[j].variants = append(entries[j].variants, recallVariant{src: t, from: sp.from, to: sp.to})
		}
		return true
	}
	for i, h := range hits {
		if !full {
			read = i + 1
		}
		sp := x.spanIn(h.Passage, terms)
		key := strings.TrimSpace(x.ix.Text(h.Text)[sp.from:sp.to])
		if j, dup := seen[key]; dup {
			if j >= 0 {
				entries[j].addAlso(x.srcs[entries[j].src].turn, x.srcs[h.Text].turn)
			}
			// A repeat of lines already shown may hold, further on, the
			// same lines in another view (a page that lists its source).
			if h.Second >= 0 {
				variant(h.Text, x.spanIn(h.Second, terms))
			}
			continue
		}
		if variant(h.Text, sp) || full {
			continue
		}
		seen[key], gists[recallindex.Gist(key)] = len(entries), len(entries)
		entries = append(entries, recallEntry{src: h.Text, at: sp.at, end: sp.end, from: sp.from, to: sp.to, second: h.Second})
		full = len(entries) == want
	}
	return entries, read
}

// nextAsVariant lists en's next best place as a variant, first, when its
// lines read as en's in another view: shown by its lines, it costs a line
// where a second excerpt would cost a share of the room.
func (x *recallIndex) nextAsVariant(en *recallEntry) {
	text := x.ix.Text(en.src)
	first := strings.TrimSpace(text[en.from:en.to])
	next := strings.TrimSpace(text[en.next.from:en.next.to])
	if next == first || recallindex.Gist(next) != recallindex.Gist(first) {
		return
	}
	en.variants = slices.Insert(en.variants, 0, recallVariant{src: en.src, from: en.next.from, to: en.next.to})
	en.next = recallSpan{}
}

// variantsText is what a page shows of en's variants within limit bytes:
// a line naming each variant's place, then its lines, as many as fit in
// what the excerpt leaves (recallExcerptShare); "" when none fits.
func (x *recallIndex) variantsText(en recallEntry, limit int) string {
	if len(en.variants) == 0 {
		return ""
	}
	room := limit - limit/recallExcerptShare - len(recallVariantsHead)
	// Each variant's lines first, as many as fit; then, while the room
	// holds it, a line around them (what differs around a repeated line is
	// often what was asked).
	var items []string
	used := 0
	for _, v := range en.variants {
		item := x.variantItem(en, v, 0)
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
		wide := x.variantItem(en, en.variants[i], recallVariantContext)
		if used+len(wide)-len(items[i]) <= room {
			used += len(wide) - len(items[i])
			items[i] = wide
		}
	}
	var b strings.Builder
	b.WriteString(recallVariantsHead)
	for _, it := range items {
		b.WriteString(it)
	}
	return b.String()
}

// variantItem is the line a page shows of variant v of en: its place,
// then its lines (at most recallVariantBytes) with context bytes around
// them.
func (x *recallIndex) variantItem(en recallEntry, v recallVariant, context int) string {
	where := recallSameText
	if v.src != en.src {
		where = x.describe(recallEntry{src: v.src})
	}
	out, _ := recallindex.Excerpt(x.ix.Text(v.src), v.from, v.to, min(v.to-v.from, recallVariantBytes)+context)
	return "- " + where + ":\n" + strings.TrimSpace(out) + "\n"
}

const (
	// recallVariantsMax bounds the variants an entry lists: the places
	// that read the same in other views beyond it are few in a page's
	// worth of hits, and each costs its lines.
	recallVariantsMax = 6
	// recallVariantBytes bounds the lines shown of one variant: a line or
	// two, what tells it apart.
	recallVariantBytes = 320
	// recallExcerptShare: an entry with variants keeps 1/recallExcerptShare
	// of its room for its excerpt (the match and a line or two around it),
	// the rest for its variants' lines (the recall benchmark found the
	// most sought lines on a page with a third, among a half to a quarter).
	recallExcerptShare = 3
	// recallVariantContext is the context a variant's lines get on either
	// side together: about a line each.
	recallVariantContext = 160
	// recallSameText names a variant in the entry's own text.
	recallSameText = "further on in the same text"
	// recallVariantsHead introduces an entry's variants.
	recallVariantsHead = "Other views of these lines:\n"
)

// addAlso records turn among the other places an entry of turn own occurs.
func (en *recallEntry) addAlso(own, turn int) {
	if turn == own || slices.Contains(en.also, turn) || len(en.also) >= recallAlsoMax {
		return
	}
	en.also = append(en.also, turn)
}

// excerpt is entry en's text within limit bytes: its whole lines and the
// context around them when they fit, else the span of the query's words,
// marked "…" where the text goes on. When the text's next best passage
// lies outside that and the room holds two excerpts of recallSplitBytes,
// the room is shared between the two places.
func (x *recallIndex) excerpt(en recallEntry, limit int) string {
	text := x.ix.Text(en.src)
	first := recallSpan{at: en.at, end: en.end, from: en.from, to: en.to, ok: true}
	if n := en.next; n.ok && limit >= 2*recallSplitBytes && (n.to <= en.from || n.from >= en.to) {
		half := (limit - len(recallGap)) / 2
		a, b := first, n
		if b.from < a.from {
			a, b = b, a
		}
		out, aStart, aEnd := spanExcerpt(text, a, half)
		if aEnd <= b.from { // the first place's excerpt does not reach the second
			more, bStart, bEnd := spanExcerpt(text, b, limit-len(recallGap)-len(out))
			if bStart >= aEnd {
				return marked(out, aStart > 0, false) + recallGap + marked(more, false, bEnd < len(text))
			}
		}
	}
	out, start, end := spanExcerpt(text, first, limit)
	return marked(out, start > 0, end < len(text))
}

// recallSplitBytes is the least room an excerpt of each of two places of
// one text gets; recallGap separates them.
const (
	recallSplitBytes = 200
	recallGap        = "\n…\n"
)

// spanExcerpt is the excerpt of text around sp within limit bytes, and its
// bytes in text.
func spanExcerpt(text string, sp recallSpan, limit int) (string, int, int) {
	at, end := sp.from, sp.to
	if end-at > limit {
		at, end = sp.at, sp.end
	}
	out, start := recallindex.Excerpt(text, at, end, limit)
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

// describe says where an entry came from: its turn, role and tool, and
// the other turns its lines occur in.
func (x *recallIndex) describe(en recallEntry) string {
	s := x.srcs[en.src]
	d := "turn " + strconv.Itoa(s.turn) + ", "
	switch {
	case s.role == genai.RoleUser && s.tool != "":
		d += "result of tool " + s.tool
	case s.tool != "":
		d += s.role + " called tool " + s.tool
	default:
		d += s.role
	}
	if s.callID != "" {
		d += " (call_id " + textcut.Prefix(s.callID, recallQuoteBytes) + ")"
	}
	if len(en.also) > 0 {
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
	}
	return d
}

// Excerpt sizes, in bytes.
const (
	// minExcerptBytes is the least a page plans an excerpt at: a sentence
	// around the match.
	minExcerptBytes = 160
	// recallSourceBytes is what a page plans for an excerpt's source line
	// (its number, turn, role, tool and call_id).
	recallSourceBytes = 80
	// minCutBytes is the least an excerpt is cut to when a long source
	// line leaves less: the match and a few words around it.
	minCutBytes = 40
)

// recallResult is a page of the tool result named callID in history, byte
// for byte, within fit.
func recallResult(history []*genai.Content, callID string, page int, fit recallFit) string {
	if fit.tokens <= 0 {
		return noRoom
	}
	callID = textcut.Prefix(textcut.Sanitize(callID), maxRecallQueryBytes)
	var fr *genai.FunctionResponse
	for _, c := range history {
		for _, p := range pairs.Parts(c) {
			if p != nil && p.FunctionResponse != nil && p.FunctionResponse.ID == callID {
				fr = p.FunctionResponse
			}
		}
	}
	if fr == nil {
		return "recall_context: no tool result with call_id " + strconv.Quote(textcut.Prefix(callID, recallQuoteBytes)) + " in this conversation. Search by words instead."
	}
	full := textcut.JSON(fr.Response)
	// Pages are fixed units, the same whatever the room, so page numbers
	// stay valid from one call to the next while the room shrinks; one
	// answer holds as many units as its budget takes.
	bounds := pageBounds(full, recallPageBytes)
	pages := len(bounds) - 1
	page = min(max(page, 1), pages)
	return fit.fitted(func(budget int) string {
		n := (budget - recallHeaderBytes) / recallPageBytes
		if n < 1 {
			return noRoom
		}
		last := min(page+n-1, pages)
		start, end := bounds[page-1], bounds[last]
		var b strings.Builder
		b.WriteString("recall_context: the result of tool " + fr.Name + " (call_id " + callID + "), bytes " +
			strconv.Itoa(start) + "-" + strconv.Itoa(end) + " of " + strconv.Itoa(len(full)) + " of its JSON, pages " +
			strconv.Itoa(page) + "-" + strconv.Itoa(last) + " of " + strconv.Itoa(pages) + ":\n")
		b.WriteString(full[start:end])
		if last < pages {
			b.WriteString("\n[More: call recall_context with call_id " + callID + " and page " + strconv.Itoa(last+1) + ".]")
		}
		return b.String()
	})
}

// recallPageBytes is one page of a tool result asked for by call_id: about
// 80 tokens, so the least answer (recallMinTokens) holds a page, and a
// roomy one many at once.
const recallPageBytes = 256

// pageBounds cuts s into pages of at most size bytes on rune boundaries
// (a page of a valid string stays valid, so pages join byte for byte):
// page i is s[b[i-1]:b[i]]. An empty s is one empty page.
func pageBounds(s string, size int) []int {
	b := []int{0}
	for at := 0; at < len(s); {
		end := min(at+size, len(s))
		for end > at && end < len(s) && !utf8.RuneStart(s[end]) {
			end--
		}
		if end == at {
			end = min(at+size, len(s)) // size below one rune: never stall
		}
		b = append(b, end)
		at = end
	}
	if len(b) == 1 {
		b = append(b, 0)
	}
	return b
}
