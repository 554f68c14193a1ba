package recallbench

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strings"
	"unicode"

	"github.com/adk-contextguard/contextguard/integration/costbench"
)

// The query rule, fixed before any tuning of the recall tool, and drawn
// with a fixed seed so every run asks the same questions:
//
//   - A candidate is a line of the recorded session (a user message, a
//     model text, a tool call's arguments, a tool's output, a final
//     answer), trimmed, of minLineBytes to maxLineBytes, holding at least
//     minWords distinct words (runs of letters and digits of at least
//     minWordBytes, lower-cased), that the final request before the
//     queries does not hold (not a substring of any of its texts): the
//     guard's compactions or pruning removed it.
//   - A line query is minWords to maxWords (drawn) of the candidate's
//     rarest words, rarity being the number of the session's lines that
//     hold the word (ties: the earlier word in the line), in the line's
//     order. It is found when an excerpt holds the whole line.
//   - A neighbour query is drawn the same way from the words of the lines
//     just before and after the candidate in its content that the line
//     itself does not hold: the question asked with other words of the
//     same place. It is found when an excerpt holds the candidate line.
//   - A call query, for a candidate from a tool's output, is drawn the same
//     way from the words of the tool call's name and arguments: the
//     question "what did that call return". It is found when an excerpt
//     comes from that call (its call_id).
//
// Each replay draws up to lineQueries candidates without replacement, and
// for the first neighbourQueries and callQueries of them that have
// neighbours or a call, those queries too.

const (
	// Seed is the draw's fixed seed; each replay's stream is this seed and
	// a hash of its session, configuration and window.
	Seed = 41
	// lineQueries, neighbourQueries and callQueries are how many queries of
	// each kind a replay draws at most.
	lineQueries      = 12
	neighbourQueries = 4
	callQueries      = 4
	// minWords and maxWords bound a query's words.
	minWords, maxWords = 3, 6
	// minLineBytes and maxLineBytes bound a candidate line: long enough to
	// say something, short enough that an excerpt can show it whole.
	minLineBytes, maxLineBytes = 20, 300
	// minWordBytes is the shortest word a query uses.
	minWordBytes = 3
)

// Kind is a query's kind.
type Kind string

// The kinds of query.
const (
	KindLine      Kind = "line"
	KindNeighbour Kind = "neighbour"
	KindCall      Kind = "call"
)

// Query is one drawn question and what answers it.
type Query struct {
	Kind Kind
	// Text is the query the model sends.
	Text string
	// Line is the candidate line an excerpt must hold (line and neighbour
	// queries); CallID the call an excerpt must come from (call queries).
	Line   string
	CallID string
}

// piece is one recorded text of a session, split into lines.
type piece struct {
	lines []string
	// call is the tool call whose output this is, nil for other pieces.
	call *costbench.Call
}

// pieces are the session's recorded texts, in order.
func pieces(tr *costbench.Trace) []piece {
	var out []piece
	add := func(text string, call *costbench.Call) {
		if strings.TrimSpace(text) != "" {
			out = append(out, piece{lines: strings.Split(text, "\n"), call: call})
		}
	}
	for _, turn := range tr.Turns {
		add(turn.User, nil)
		for _, st := range turn.Steps {
			add(st.Text, nil)
			for i := range st.Calls {
				c := &st.Calls[i]
				add(c.Name+" "+argsJSON(c), nil)
				add(c.Output, c)
			}
		}
		add(turn.Final, nil)
	}
	return out
}

// words are the distinct query words of s, lower-cased, in order.
func words(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		w = strings.ToLower(w)
		if len(w) >= minWordBytes && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// rarest is k of ws (drawn between minWords and maxWords by rng) with the
// lowest df, in their order in ws; nil when ws holds fewer than minWords.
func rarest(ws []string, df map[string]int, rng *rand.Rand) []string {
	if len(ws) < minWords {
		return nil
	}
	k := min(minWords+rng.IntN(maxWords-minWords+1), len(ws))
	order := make([]int, len(ws))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return df[ws[a]] - df[ws[b]] })
	keep := slices.Clone(order[:k])
	slices.Sort(keep)
	out := make([]string, k)
	for i, j := range keep {
		out[i] = ws[j]
	}
	return out
}

// Draw is the queries of one replay of tr (named by run) whose final
// request held the texts final.
func Draw(tr *costbench.Trace, run string, final []string) []Query {
	ps := pieces(tr)
	df := map[string]int{}
	for _, p := range ps {
		for _, l := range p.lines {
			for _, w := range words(l) {
				df[w]++
			}
		}
	}
	held := func(line string) bool {
		for _, f := range final {
			if strings.Contains(f, line) {
				return true
			}
		}
		return false
	}
	type cand struct{ p, l int }
	var cands []cand
	for pi, p := range ps {
		for li, l := range p.lines {
			l = strings.TrimSpace(l)
			if len(l) < minLineBytes || len(l) > maxLineBytes || len(words(l)) < minWords || held(l) {
				continue
			}
			cands = append(cands, cand{pi, li})
		}
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(run))
	rng := newRand(h.Sum64())
	rng.Shuffle(len(cands), func(i, j int) { cands[i], cands[j] = cands[j], cands[i] })
	cands = cands[:min(len(cands), lineQueries)]
	var out []Query
	neighbours, calls := 0, 0
	for _, c := range cands {
		p := ps[c.p]
		line := strings.TrimSpace(p.lines[c.l])
		ws := words(line)
		out = append(out, Query{Kind: KindLine, Text: strings.Join(rarest(ws, df, rng), " "), Line: line})
		if neighbours < neighbourQueries {
			var around []string
			for _, i := range []int{c.l - 1, c.l + 1} {
				if i >= 0 && i < len(p.lines) {
					for _, w := range words(p.lines[i]) {
						if !slices.Contains(ws, w) && !slices.Contains(around, w) {
							around = append(around, w)
						}
					}
				}
			}
			if q := rarest(around, df, rng); q != nil {
				out = append(out, Query{Kind: KindNeighbour, Text: strings.Join(q, " "), Line: line})
				neighbours++
			}
		}
		if calls < callQueries && p.call != nil {
			if q := rarest(words(p.call.Name+" "+argsJSON(p.call)), df, rng); q != nil {
				out = append(out, Query{Kind: KindCall, Text: strings.Join(q, " "), CallID: p.call.ID})
				calls++
			}
		}
	}
	return out
}

// argsJSON is a call's arguments as a request carries them (the JSON of
// its Args map), so that its lines are compared as the request holds them.
func argsJSON(c *costbench.Call) string {
	s, err := compactJSON(c.ArgsMap())
	if err != nil {
		return string(c.Args)
	}
	return s
}

// compactJSON is v as compact JSON without HTML escaping ("&" stays "&"),
// as a provider is sent it and the recall index reads it.
func compactJSON(v any) (string, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", fmt.Errorf("recallbench: arguments: %w", err)
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// newRand is the draw's stream for a replay whose name hashes to stream.
func newRand(stream uint64) *rand.Rand { return rand.New(rand.NewPCG(Seed, stream)) }
