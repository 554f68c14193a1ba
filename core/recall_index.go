package core

import (
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"google.golang.org/genai"
)

// The recall index (ARCHITECTURE.md, Recall): a small BM25 index over the
// excerpts of what compactions and pruning removed from one agent's
// requests in one session, built incrementally in the session table's entry
// and rebuilt from the host's event log after a restart or an eviction.

const (
	// recallChunkBytes is the size of one excerpt the index ranks: a few
	// sentences or a screen of tool output, small enough that a match
	// shown whole costs about 300 tokens, large enough that the words of
	// one fact stay in one excerpt.
	recallChunkBytes = 1200
	// recallChunkSlack is how far back from a chunk's end a cut looks for
	// a space or line break, so words are not split.
	recallChunkSlack = 120
	// maxRecallTermBytes bounds one indexed term: a longer run of letters
	// (a hash, base64) is indexed by its head, which still identifies it.
	maxRecallTermBytes = 64
	// bm25K1 and bm25B are BM25's usual parameters (term-frequency
	// saturation and length normalisation), as in Lucene's defaults.
	bm25K1 = 1.2
	bm25B  = 0.75
	// recallPhraseBoost multiplies the score of an excerpt holding the
	// query's words in order, one after the other: a quoted error message
	// or a marker outranks an excerpt that merely shares its words.
	recallPhraseBoost = 2.0
	// recallPostingBytes is what one posting retains (a doc number and a
	// count), for the table's accounting.
	recallPostingBytes = 8
	// recallDocOverhead is what one excerpt's record retains beside its
	// text.
	recallDocOverhead = 48
)

// recallPosting is one term's count in one excerpt.
type recallPosting struct {
	doc uint32
	tf  uint32
}

// recallDoc is one ranked excerpt.
type recallDoc struct {
	text  string
	src   int32 // into recallIndex.srcs
	terms uint32
}

// recallSource is the content an excerpt came from.
type recallSource struct {
	pos    int // in the history the host gave
	turn   int // user turns up to and including it
	role   string
	tool   string // the tool called or answered, if any
	callID string
}

// recallIndex is the index of one agent of one session, in the scope
// (branch, isolation scope) its history was read in. Guarded by the session
// entry's mutex.
type recallIndex struct {
	scope    string
	docs     []recallDoc
	srcs     []recallSource
	postings map[string][]recallPosting
	terms    int // total terms over docs
	// indexed marks the history's positions already indexed; first and
	// last are the lowest and highest such positions, firstFP and lastFP
	// their fingerprints, checked on each use so a history that changed
	// under the index (another log, not an extension of this one) rebuilds
	// it. The host's log is append-only, so its ends tell.
	indexed         []bool
	first, last     int
	firstFP, lastFP string
	bytes           int // what the index retains, for the table's accounting
	scanned         recallScan
}

func newRecallIndex(scope string) *recallIndex {
	return &recallIndex{scope: scope, postings: make(map[string][]recallPosting), first: -1, last: -1}
}

// valid reports whether history still holds the contents the index was
// built from.
func (x *recallIndex) valid(history []*genai.Content) bool {
	if x.last < 0 {
		return true
	}
	return x.last < len(history) && fingerprint(history[x.last]) == x.lastFP &&
		fingerprint(history[x.first]) == x.firstFP
}

// add indexes the content at position pos of history, whose user turn is
// turn. A content already indexed is skipped.
func (x *recallIndex) add(history []*genai.Content, pos, turn int) {
	for len(x.indexed) <= pos {
		x.indexed = append(x.indexed, false)
	}
	if x.indexed[pos] {
		return
	}
	x.indexed[pos] = true
	c := history[pos]
	if pos > x.last {
		x.last, x.lastFP = pos, fingerprint(c)
	}
	if x.first < 0 || pos < x.first {
		x.first, x.firstFP = pos, fingerprint(c)
	}
	for _, p := range partsOf(c) {
		if p == nil || p.Thought {
			continue
		}
		src := recallSource{pos: pos, turn: turn, role: c.Role}
		var text string
		switch {
		case p.Text != "":
			text = sanitizeUTF8(p.Text)
		case p.FunctionCall != nil:
			if p.FunctionCall.Name == RecallToolName {
				continue // a recall's own query says nothing new
			}
			src.tool, src.callID = p.FunctionCall.Name, p.FunctionCall.ID
			text = p.FunctionCall.Name + " " + marshalJSON(p.FunctionCall.Args)
		case p.FunctionResponse != nil:
			if p.FunctionResponse.Name == RecallToolName {
				continue // a recall's answer repeats what is indexed
			}
			src.tool, src.callID = p.FunctionResponse.Name, p.FunctionResponse.ID
			text = compactJSON(p.FunctionResponse.Response)
		case p.ExecutableCode != nil:
			text = sanitizeUTF8(p.ExecutableCode.Code)
		case p.CodeExecutionResult != nil:
			text = sanitizeUTF8(p.CodeExecutionResult.Output)
		}
		if strings.TrimSpace(text) == "" {
			continue
		}
		x.srcs = append(x.srcs, src)
		x.addText(int32(len(x.srcs)-1), text)
	}
}

// addText splits text into excerpts and indexes each.
func (x *recallIndex) addText(src int32, text string) {
	for len(text) > 0 {
		n := chunkEnd(text, recallChunkBytes)
		x.addDoc(src, text[:n])
		text = text[n:]
	}
}

// chunkEnd is where the excerpt starting at s ends: at most limit bytes, at
// a space or line break within the last recallChunkSlack bytes when there is
// one, never inside a UTF-8 sequence.
func chunkEnd(s string, limit int) int {
	if len(s) <= limit {
		return len(s)
	}
	n := limit
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	if i := strings.LastIndexAny(s[n-min(recallChunkSlack, n):n], " \n\t"); i >= 0 {
		n = n - min(recallChunkSlack, n) + i + 1
	}
	if n == 0 {
		return min(limit, len(s))
	}
	return n
}

// addDoc indexes one excerpt.
func (x *recallIndex) addDoc(src int32, text string) {
	doc := uint32(len(x.docs))
	counts := make(map[string]uint32)
	total := 0
	eachTerm(text, func(t string) bool {
		counts[t]++
		total++
		return true
	})
	for t, n := range counts {
		if _, ok := x.postings[t]; !ok {
			x.bytes = satAdd(x.bytes, len(t)+recallDocOverhead)
		}
		x.postings[t] = append(x.postings[t], recallPosting{doc: doc, tf: n})
	}
	x.docs = append(x.docs, recallDoc{text: text, src: src, terms: uint32(total)})
	x.terms += total
	x.bytes = satAdd(x.bytes, len(text)+recallDocOverhead+len(counts)*recallPostingBytes)
}

// eachTerm calls f with each term of s, lowercased, until f returns false:
// runs of letters and digits, and within a mixed-case identifier its parts
// as well (the whole "parseConfig" and "parse", "config"), each at most
// maxRecallTermBytes. Everything else (punctuation, control characters,
// symbols) separates terms.
func eachTerm(s string, f func(string) bool) {
	start := -1
	for i, r := range s {
		word := unicode.IsLetter(r) || unicode.IsDigit(r)
		switch {
		case word && start < 0:
			start = i
		case !word && start >= 0:
			if !emitWord(s[start:i], f) {
				return
			}
			start = -1
		}
	}
	if start >= 0 {
		emitWord(s[start:], f)
	}
}

// emitWord emits w lowercased, and its camel-case parts when it has any.
func emitWord(w string, f func(string) bool) bool {
	if !f(termOf(w)) {
		return false
	}
	parts := 0
	start := 0
	prevLower := false
	for i, r := range w {
		if unicode.IsUpper(r) && prevLower {
			if parts == 0 || start < i {
				if !f(termOf(w[start:i])) {
					return false
				}
				parts++
			}
			start = i
		}
		prevLower = unicode.IsLower(r) || unicode.IsDigit(r)
	}
	if parts > 0 && start < len(w) {
		return f(termOf(w[start:]))
	}
	return true
}

// termOf is w lowercased and cut to maxRecallTermBytes on a rune boundary.
func termOf(w string) string {
	if len(w) > maxRecallTermBytes {
		w = validPrefix(w, maxRecallTermBytes)
	}
	return strings.ToLower(w)
}

// recallHit is one ranked excerpt.
type recallHit struct {
	doc   int
	score float64
}

// search ranks the excerpts for the query's terms (BM25), boosting those
// that hold the terms in order. It returns the best k excerpts, best first,
// and how many excerpts have a score; only those k are sorted, so a common
// word matching every excerpt costs a pass, not a sort of them all.
func (x *recallIndex) search(terms []string, k int) ([]recallHit, int) {
	if len(x.docs) == 0 || len(terms) == 0 || k <= 0 {
		return nil, 0
	}
	n := float64(len(x.docs))
	avg := float64(x.terms) / n
	if avg <= 0 {
		avg = 1
	}
	scores := make([]float64, len(x.docs))
	var hits []int
	seen := make(map[string]bool, len(terms))
	for _, t := range terms {
		if seen[t] {
			continue
		}
		seen[t] = true
		ps := x.postings[t]
		if len(ps) == 0 {
			continue
		}
		df := float64(len(ps))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for _, p := range ps {
			tf := float64(p.tf)
			dl := float64(x.docs[p.doc].terms)
			s := idf * tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*dl/avg))
			if scores[p.doc] == 0 {
				hits = append(hits, int(p.doc))
			}
			scores[p.doc] += s
		}
	}
	k = max(k, recallPhraseCandidates)
	top := topHits(hits, scores, k)
	if len(terms) > 1 {
		// The phrase check re-reads an excerpt's terms, so it is made for the
		// best few only, which it may reorder.
		for i := range top[:min(len(top), recallPhraseCandidates)] {
			if hasPhrase(x.docs[top[i].doc].text, terms) {
				top[i].score *= recallPhraseBoost
			}
		}
		sortHits(top)
	}
	return top, len(hits)
}

// topHits is the best k of hits by score, best first: a min-heap of k
// kept over one pass.
func topHits(hits []int, scores []float64, k int) []recallHit {
	h := make([]recallHit, 0, min(k, len(hits)))
	less := func(a, b recallHit) bool { // a ranks below b
		return a.score < b.score || (a.score == b.score && a.doc > b.doc)
	}
	for _, d := range hits {
		c := recallHit{doc: d, score: scores[d]}
		if len(h) < k {
			h = append(h, c)
			for i := len(h) - 1; i > 0; { // sift up
				p := (i - 1) / 2
				if !less(h[i], h[p]) {
					break
				}
				h[i], h[p] = h[p], h[i]
				i = p
			}
			continue
		}
		if !less(h[0], c) {
			continue
		}
		h[0] = c
		for i := 0; ; { // sift down
			m, l, r := i, 2*i+1, 2*i+2
			if l < len(h) && less(h[l], h[m]) {
				m = l
			}
			if r < len(h) && less(h[r], h[m]) {
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

// recallPhraseCandidates is how many of the best excerpts are checked for
// the query's phrase: more than any page shows, few enough that the check
// costs a few excerpts' reading.
const recallPhraseCandidates = 50

// sortHits orders hits best first, earlier excerpts first on a tie (older
// history, then order of indexing: deterministic).
func sortHits(hs []recallHit) {
	slices.SortFunc(hs, func(a, b recallHit) int {
		switch {
		case a.score > b.score:
			return -1
		case a.score < b.score:
			return 1
		}
		return a.doc - b.doc
	})
}

// hasPhrase reports whether text holds terms one after the other.
func hasPhrase(text string, terms []string) bool {
	i := 0
	found := false
	eachTerm(text, func(t string) bool {
		switch {
		case t == terms[i]:
			i++
		case t == terms[0]:
			i = 1
		default:
			i = 0
		}
		if i == len(terms) {
			found = true
			return false
		}
		return true
	})
	return found
}
