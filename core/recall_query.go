package core

import (
	"strconv"
	"strings"
	"unicode"

	"google.golang.org/genai"
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
	// recallBytesPerToken converts the budget to bytes, low (text runs at
	// about four bytes a token) so an answer never exceeds its budget.
	recallBytesPerToken = 3
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
		q = validPrefix(q, maxRecallQueryBytes)
		note = "Note: the query was cut to its first " + strconv.Itoa(maxRecallQueryBytes) + " bytes.\n"
	}
	q = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == utf8RuneError {
			return ' '
		}
		return r
	}, sanitizeUTF8(q))
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

// utf8RuneError is what sanitizeUTF8 leaves of invalid bytes.
const utf8RuneError = '\uFFFD'

// recallBudget is the answer's budget in bytes: recallDefaultTokens, at
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
	return tokens * recallBytesPerToken
}

// noRoom is the answer when the context has no room for one.
const noRoom = "recall_context: the context is too full to recall anything now; call compact_context first if you have it, or continue without the detail."

// renderMatches is a page of x's matches for q within budget bytes, note
// first.
func renderMatches(x *recallIndex, q recallQuery, page, budget int, note string) string {
	if budget <= 0 {
		return noRoom
	}
	if len(x.docs) == 0 {
		return note + "recall_context: nothing of this conversation has been compacted or pruned yet; everything is still in your context."
	}
	page = max(page, 1)
	hits, total := x.search(q.terms, min(page, maxRecallPages)*recallPerPage)
	if total == 0 {
		return note + "recall_context: no earlier excerpt matches " + strconv.Quote(validPrefix(q.text, recallQuoteBytes)) + ". Try other words: a name, a number, an error's words."
	}
	// A small budget shows fewer excerpts a page, each at least
	// minExcerptBytes, rather than five unreadable ones.
	room := budget - recallHeaderBytes - len(note)
	perPage := min(recallPerPage, max(room/(minExcerptBytes+recallSourceBytes), 1))
	pages := min((total+perPage-1)/perPage, maxRecallPages)
	page = min(page, pages)
	shown := hits[(page-1)*perPage : min(page*perPage, len(hits))]
	srcs := make([]string, len(shown))
	for i, h := range shown {
		srcs[i] = "\n[" + strconv.Itoa((page-1)*perPage+i+1) + "] " + describeSource(x.srcs[x.docs[h.doc].src]) + ":\n"
		room -= len(srcs[i]) + len("……\n")
	}
	each := max(room/len(shown), minCutBytes)
	var b strings.Builder
	b.WriteString(note)
	b.WriteString("recall_context: " + strconv.Itoa(total) + " excerpt(s) of the earlier conversation match " +
		strconv.Quote(validPrefix(q.text, recallQuoteBytes)) + ", best first; page " + strconv.Itoa(page) + " of " + strconv.Itoa(pages) + ".\n")
	for i, h := range shown {
		b.WriteString(srcs[i])
		b.WriteString(excerptAround(x.docs[h.doc].text, q.terms, each))
		b.WriteByte('\n')
	}
	if page < pages {
		b.WriteString("\nMore matches exist: call recall_context with the same query and page " + strconv.Itoa(page+1) + ".")
	}
	return b.String()
}

// describeSource says where an excerpt came from: its turn, role and tool.
func describeSource(s recallSource) string {
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
		d += " (call_id " + s.callID + ")"
	}
	return d
}

// excerptAround is text within limit bytes, centred on the first of terms
// it holds when it must be cut.
func excerptAround(text string, terms []string, limit int) string {
	if len(text) <= limit {
		return text
	}
	limit = max(limit, minCutBytes)
	at := -1
	lower := strings.ToLower(text)
	for _, t := range terms {
		if i := strings.Index(lower, t); i >= 0 && len(lower) == len(text) {
			at = i
			break
		}
	}
	start := 0
	if at > limit/2 {
		start = min(at-limit/2, len(text)-limit)
	}
	for start > 0 && start < len(text) && !utf8RuneStartByte(text[start]) {
		start++
	}
	out := validPrefix(text[start:], limit)
	if start > 0 {
		out = "…" + out
	}
	if start+len(out) < len(text) {
		out += "…"
	}
	return out
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

// utf8RuneStartByte reports whether b starts a UTF-8 sequence.
func utf8RuneStartByte(b byte) bool { return b&0xC0 != 0x80 }

// recallResult is a page of the tool result named callID in history, byte
// for byte, within budget bytes.
func recallResult(history []*genai.Content, callID string, page, budget int) string {
	if budget <= 0 {
		return noRoom
	}
	callID = validPrefix(sanitizeUTF8(callID), maxRecallQueryBytes)
	var fr *genai.FunctionResponse
	for _, c := range history {
		for _, p := range partsOf(c) {
			if p != nil && p.FunctionResponse != nil && p.FunctionResponse.ID == callID {
				fr = p.FunctionResponse
			}
		}
	}
	if fr == nil {
		return "recall_context: no tool result with call_id " + strconv.Quote(callID) + " in this conversation. Search by words instead."
	}
	full := marshalJSON(fr.Response)
	// Pages are fixed units, the same whatever the room, so page numbers
	// stay valid from one call to the next while the room shrinks; one
	// answer holds as many units as its budget takes.
	bounds := pageBounds(full, recallPageBytes)
	pages := len(bounds) - 1
	page = min(max(page, 1), pages)
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
		for end > at && end < len(s) && !utf8RuneStartByte(s[end]) {
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
