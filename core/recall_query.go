package core

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/estimate"
	"github.com/adk-contextguard/contextguard/core/internal/pairs"
	"github.com/adk-contextguard/contextguard/core/internal/recallindex"
	"github.com/adk-contextguard/contextguard/core/internal/state"
	"github.com/adk-contextguard/contextguard/core/internal/textcut"
)

// The recall tool's query and answer (ARCHITECTURE.md, Recall): any query
// becomes a bounded list of terms, and the answer fits its budget.
const (
	// maxRecallQueryBytes: a longer query is cut, with a note, so a 1 MB
	// query costs what a short one does.
	maxRecallQueryBytes = 1024
	maxRecallTerms      = 32 // each walks one posting list
	// recallDefaultTokens is a few excerpts, about one medium tool result.
	recallDefaultTokens = 2000
	// recallRoomShare: at most 1/4 of the room the last request left, so
	// the answer cannot push the next request over.
	recallRoomShare = 4
	// recallMinTokens is a page of a tool result and its header: below it
	// the room is better used by a compaction, which the answer suggests.
	recallMinTokens = 160
	// recallBytesPerToken is the first guess of an answer's bytes; it is
	// then counted and made smaller until it fits (fitted).
	recallBytesPerToken = 3
	// An answer over its budget is remade smaller by the ratio it was over
	// (with a margin, so it fits at once) recallFitTries times, then halved.
	recallFitTries  = 4
	recallFitMargin = 0.95
)

// recallQuery is a cleaned query and its terms in order.
type recallQuery struct {
	text  string // as shown back, printable
	terms []string
}

// cleanQuery bounds the query, replaces invalid UTF-8 and control
// characters and finds its terms; note says what was changed or why
// nothing can be searched.
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
	recallindex.EachTerm(q, func(t string) bool {
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

// recallBudget is the answer's budget in tokens, 0 below recallMinTokens.
func recallBudget(s state.Agent) int {
	tokens := recallDefaultTokens
	if s.Window > 0 && s.Tokens > 0 {
		tokens = min(tokens, max(s.Window-s.Tokens, 0)/recallRoomShare)
	}
	if tokens < recallMinTokens {
		return 0
	}
	return tokens
}

// recallFit is an answer's budget and its count as the tool response the
// next request carries, calibrated as the session's counts are.
type recallFit struct {
	tokens int
	count  func(answer string) int
}

func recallFitFor(tokens int, est estimate.Estimator, s state.Agent) recallFit {
	cal := newCalibration(s, est)
	return recallFit{tokens: tokens, count: func(answer string) int {
		return cal.Scale(est.Content(recallAnswerContent(answer)))
	}}
}

// recallAnswerContent is the answer as the adapters return it.
func recallAnswerContent(answer string) *genai.Content {
	return &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{
		Name: RecallToolName, Response: map[string]any{"result": answer}}}}}
}

// fitted is render's answer for the most bytes that fit the budget, noRoom
// when nothing does.
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

// renderMatches is a page of x's matches for q within fit, note first.
func renderMatches(x *recallIndex, q recallQuery, page int, fit recallFit, note string) string {
	if fit.tokens <= 0 {
		return noRoom
	}
	if x.ix.Passages() == 0 {
		return note + "recall_context: nothing of this conversation has been compacted or pruned yet; everything is still in your context."
	}
	// One search for every size the answer is tried at.
	hits, total := x.ix.Search(q.terms, recallindex.PageHits(page))
	return fit.fitted(func(bytes int) string {
		return x.ix.Page(q.terms, q.text, hits, total, page, bytes, note, x.source)
	})
}

// noRoom is the answer when the context has no room for one.
const noRoom = "recall_context: the context is too full to recall anything now; call compact_context first if you have it, or continue without the detail."

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
		return "recall_context: no tool result with call_id " + strconv.Quote(textcut.Prefix(callID, recallindex.QuoteBytes)) + " in this conversation. Search by words instead."
	}
	full := textcut.JSON(fr.Response)
	// Fixed pages, whatever the room, so page numbers stay valid while it
	// shrinks; an answer holds as many as its budget takes.
	bounds := pageBounds(full, recallPageBytes)
	pages := len(bounds) - 1
	page = min(max(page, 1), pages)
	return fit.fitted(func(budget int) string {
		n := (budget - recallindex.HeaderBytes) / recallPageBytes
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

// recallPageBytes is about 80 tokens, so the least answer holds a page.
const recallPageBytes = 256

// pageBounds cuts s into pages of at most size bytes on rune boundaries:
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
