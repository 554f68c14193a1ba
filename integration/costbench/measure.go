package costbench

import (
	"crypto/sha256"
	"encoding/json"

	"github.com/adk-contextguard/contextguard/core/coretest/o200k"
	"google.golang.org/genai"
)

// The measure: each request as the sequence of pieces a provider's prefix
// cache reads (tool declarations, then the system instruction, then each
// content), the prefix it shares with an earlier request, and the cost of a
// session at a price model.

// Prices is a provider's input price model, relative to an uncached token.
type Prices struct {
	// Name names the model in the table.
	Name string
	// Read is the price of a token read from the cache.
	Read float64
	// Write is the price of a token not read from the cache.
	Write float64
}

var (
	// Anthropic is Anthropic's explicit cache: a read costs 0.1 of an
	// uncached token and a write 1.25; every token not read is written,
	// so the next request can read it.
	Anthropic = Prices{Name: "Anthropic", Read: 0.1, Write: 1.25}
	// Implicit is OpenAI's and Gemini's implicit caches: a matching prefix
	// costs 0.25 of an uncached token, the rest the uncached price.
	Implicit = Prices{Name: "implicit", Read: 0.25, Write: 1.0}
)

// cost is the price of a request of read cached tokens and written others.
func (p Prices) cost(read, written int) float64 {
	return p.Read*float64(read) + p.Write*float64(written)
}

// piece is one element of a request in the cache's order: its identity (a
// hash of its kind and its deterministic JSON) and its o200k tokens.
type piece struct {
	key    [sha256.Size]byte
	tokens int
}

// Request is one request the model received, as the benchmark measures it.
type Request struct {
	// Summarizer marks a request of the guard's summarizer (not of the
	// agent's flow).
	Summarizer bool
	// pieces are the request's tool declarations, system instruction and
	// contents, in that order.
	pieces []piece
	// Tokens is the request's o200k count, the sum of its pieces'.
	Tokens int
	// SystemTokens is the o200k count of the system instruction.
	SystemTokens int
	// Compactions is how many compactions the guard had reported
	// (WithOnCompaction) when the request was received.
	Compactions int
	// LostUser marks an agent request that does not carry the start of the
	// user's latest message, verbatim or quoted.
	LostUser bool
}

// groundTruth is the exact count: o200k tokens of each piece's texts, call
// arguments and results, with the kit's framing cost per content and per
// call, response and declaration (o200k.Counter at factor 1).
var groundTruth = o200k.Counter(1)

// Snapshot measures a request: its pieces in the cache's order, each
// identified by its kind and deterministic JSON (encoding/json sorts map
// keys), and counted exactly. It is taken when the model receives the
// request, before anything can change it.
func Snapshot(contents []*genai.Content, cfg *genai.GenerateContentConfig) Request {
	var r Request
	add := func(kind string, v any, tokens int) {
		b, err := json.Marshal(v)
		if err != nil {
			// A value JSON cannot encode (a NaN in a schema) is its own
			// piece, equal to nothing: it is never counted as reused.
			b = []byte(err.Error())
		}
		r.pieces = append(r.pieces, piece{key: sha256.Sum256(append([]byte(kind+":"), b...)), tokens: tokens})
		r.Tokens += tokens
	}
	if cfg != nil {
		for _, t := range cfg.Tools {
			if t == nil {
				continue
			}
			if len(t.FunctionDeclarations) == 0 {
				add("tool", t, groundTruth.Count(nil, &genai.GenerateContentConfig{Tools: []*genai.Tool{t}}))
				continue
			}
			for _, fd := range t.FunctionDeclarations {
				one := &genai.Tool{FunctionDeclarations: []*genai.FunctionDeclaration{fd}}
				add("decl", fd, groundTruth.Count(nil, &genai.GenerateContentConfig{Tools: []*genai.Tool{one}}))
			}
		}
		if si := cfg.SystemInstruction; si != nil {
			r.SystemTokens = groundTruth.Count(nil, &genai.GenerateContentConfig{SystemInstruction: si})
			add("system", si, r.SystemTokens)
		}
	}
	for _, c := range contents {
		if c == nil {
			continue
		}
		add("content", c, groundTruth.Count([]*genai.Content{c}, nil))
	}
	return r
}

// SharedPrefix returns the tokens of the leading pieces of r that equal
// earlier's, in order: a piece counts only if it and every piece before it
// are byte-identical.
func SharedPrefix(earlier, r *Request) int {
	n := 0
	for i := range min(len(earlier.pieces), len(r.pieces)) {
		if earlier.pieces[i].key != r.pieces[i].key {
			break
		}
		n += r.pieces[i].tokens
	}
	return n
}

// tailFrom returns the tokens of r's pieces from index i on.
func (r *Request) tailFrom(i int) int {
	n := 0
	for _, p := range r.pieces[min(i, len(r.pieces)):] {
		n += p.tokens
	}
	return n
}

// lastTokens returns the tokens of r's last piece.
func (r *Request) lastTokens() int {
	if len(r.pieces) == 0 {
		return 0
	}
	return r.pieces[len(r.pieces)-1].tokens
}

// Stats are the measures of one or more sessions at one configuration and
// window.
type Stats struct {
	// AgentRequests and SummarizerRequests count the requests.
	AgentRequests, SummarizerRequests int
	// AgentTokens is the tokens of every agent request; ReusedTokens the
	// tokens of their prefixes equal to the previous agent request's.
	AgentTokens, ReusedTokens int
	// Rewrites counts the agent requests whose shared prefix is shorter
	// than the previous agent request with no compaction between them (no
	// summarizer request and no compaction reported); RewriteTokens is
	// what they invalidated, the previous request's tokens past the shared
	// prefix.
	Rewrites, RewriteTokens int
	// SummarizerTokens is the tokens of every summarizer request;
	// SummarizerCached the tokens of their prefixes equal to the agent
	// request that preceded each.
	SummarizerTokens, SummarizerCached int
	// Cost and Floor are the input cost at each price model (indexed as
	// PriceModels), and the cost model's floor (see Measure).
	Cost, Floor [2]float64
	// Overflows counts requests whose o200k count exceeds the window;
	// LostUser the agent requests without the user's latest message.
	Overflows, LostUser int
	// Compactions counts the compactions the guard reported, Inline those
	// the model call waited for; Errors the errors the runner surfaced.
	Compactions, Inline, Errors int
}

// PriceModels are the price models of Stats.Cost and Stats.Floor, in order.
var PriceModels = [2]Prices{Anthropic, Implicit}

// Tokens is every request's tokens: the input cost with no cache at all.
func (s Stats) Tokens() int { return s.AgentTokens + s.SummarizerTokens }

// Add adds o's measures to s (sessions of one configuration).
func (s *Stats) Add(o Stats) {
	s.AgentRequests += o.AgentRequests
	s.SummarizerRequests += o.SummarizerRequests
	s.AgentTokens += o.AgentTokens
	s.ReusedTokens += o.ReusedTokens
	s.Rewrites += o.Rewrites
	s.RewriteTokens += o.RewriteTokens
	s.SummarizerTokens += o.SummarizerTokens
	s.SummarizerCached += o.SummarizerCached
	for i := range s.Cost {
		s.Cost[i] += o.Cost[i]
		s.Floor[i] += o.Floor[i]
	}
	s.Overflows += o.Overflows
	s.LostUser += o.LostUser
	s.Compactions += o.Compactions
	s.Inline += o.Inline
	s.Errors += o.Errors
}

// summarizerCacheDepth is how many of the latest agent requests a
// summarizer request may read its prefix from: a provider's prompt cache
// keeps each recent request's prefix for minutes (Anthropic's for five),
// and a summary prepared while tools run is asked over a request the
// replay, whose tools answer at once, may already have sent several
// others after.
const summarizerCacheDepth = 8

// Measure measures one session's requests, in the order the model received
// them, against a window.
//
// An agent request reads from the cache its prefix equal to the previous
// agent request's; a summarizer request the longest prefix it shares with
// the last summarizerCacheDepth agent requests before it (a summary
// prepared while tools run is asked over an earlier one than the newest). Every token not read is written. The floor is
// the cost of the same requests if nothing were rewritten between
// compactions (a rewrite reads the whole previous request and writes only
// the pieces past its length) and if every summarizer request were read
// from the cache except its final instruction (the last content when the
// request extends the agent's, else its system instruction: the transcript
// form's prompt); each request's floor is at most its cost.
func Measure(reqs []Request, window int) Stats {
	var s Stats
	var prev *Request
	var recent []*Request // the last agent requests, newest last
	compacted := false
	for i := range reqs {
		r := &reqs[i]
		if r.Tokens > window {
			s.Overflows++
		}
		read, floorRead, floorWritten := 0, -1, 0
		if r.Summarizer {
			s.SummarizerRequests++
			s.SummarizerTokens += r.Tokens
			for _, a := range recent {
				read = max(read, SharedPrefix(a, r))
			}
			s.SummarizerCached += read
			instruction := r.lastTokens()
			if read == 0 && r.SystemTokens > 0 {
				instruction = r.SystemTokens
			}
			floorRead, floorWritten = r.Tokens-instruction, instruction
			compacted = true
		} else {
			s.AgentRequests++
			s.AgentTokens += r.Tokens
			if r.LostUser {
				s.LostUser++
			}
			if prev != nil {
				read = SharedPrefix(prev, r)
				if !compacted && r.Compactions == prev.Compactions && read < prev.Tokens {
					s.Rewrites++
					s.RewriteTokens += prev.Tokens - read
					floorRead, floorWritten = prev.Tokens, r.tailFrom(len(prev.pieces))
				}
			}
			s.ReusedTokens += read
			prev, compacted = r, false
			if recent = append(recent, r); len(recent) > summarizerCacheDepth {
				recent = recent[1:]
			}
		}
		for k, p := range PriceModels {
			c := p.cost(read, r.Tokens-read)
			s.Cost[k] += c
			if floorRead >= 0 {
				c = min(c, p.cost(floorRead, floorWritten))
			}
			s.Floor[k] += c
		}
	}
	return s
}
