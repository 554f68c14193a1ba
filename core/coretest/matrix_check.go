package coretest

import (
	"fmt"
	"regexp"
	"strconv"
	"sync"

	"google.golang.org/genai"
)

// What every run of the stress matrix must satisfy, shared by the matrix
// of each ADK line (ARCHITECTURE.md, Tests): the line's test installs a
// Probe before its guard, plays the row with its kit's Run, and asserts
// that MatrixRun.Violations is empty.

// Probe sees every request as ADK built it, before the guard, and measures
// per user turn the ground truth of the part no guard can shrink (system
// instruction, tool declarations and the user's message), so an
// irreducible-request error can be judged against the truth. Each ADK
// line's test calls Observe from a plugin's BeforeModel callback installed
// before the guard's.
type Probe struct {
	count func(contents []*genai.Content, config *genai.GenerateContentConfig) int

	mu          sync.Mutex
	fixedKnown  bool
	fixed       int
	irreducible map[int]int
}

// NewProbe returns a probe measuring with count, the ground truth.
func NewProbe(count func(contents []*genai.Content, config *genai.GenerateContentConfig) int) *Probe {
	return &Probe{count: count, irreducible: map[int]int{}}
}

// turnTagRE finds the turn tag a user message of a scenario starts with.
var turnTagRE = regexp.MustCompile(`^\[turn (\d+)\]`)

// Observe measures one request as ADK built it.
func (p *Probe) Observe(contents []*genai.Content, config *genai.GenerateContentConfig) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.fixedKnown {
		var fixed *genai.GenerateContentConfig
		if config != nil {
			fixed = &genai.GenerateContentConfig{SystemInstruction: config.SystemInstruction, Tools: config.Tools}
		}
		p.fixed = p.count(nil, fixed)
		p.fixedKnown = true
	}
	// The first step of a turn ends with the user's message.
	if n := len(contents); n > 0 {
		if c := contents[n-1]; c != nil && c.Role == genai.RoleUser && len(c.Parts) > 0 && c.Parts[0] != nil {
			if m := turnTagRE.FindStringSubmatch(c.Parts[0].Text); m != nil {
				turn, _ := strconv.Atoi(m[1])
				if _, ok := p.irreducible[turn]; !ok {
					p.irreducible[turn] = p.fixed + p.count([]*genai.Content{c}, nil)
				}
			}
		}
	}
}

// FixedTokens returns the ground truth of the system instruction and tools.
func (p *Probe) FixedTokens() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.fixed
}

// IrreducibleAt returns the ground truth of the irreducible part of turn.
func (p *Probe) IrreducibleAt(turn int) (int, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n, ok := p.irreducible[turn]
	return n, ok
}

// ErrorTurn extracts the turn of an error a driver recorded ("turn N: ...").
func ErrorTurn(err error) (int, bool) {
	var turn int
	if _, scanErr := fmt.Sscanf(err.Error(), "turn %d:", &turn); scanErr != nil {
		return 0, false
	}
	return turn, true
}

// MatrixRun is one played row of the stress matrix, with what its
// violations are judged against.
type MatrixRun struct {
	Result *Result
	Probe  *Probe
	// SummarizerCalls is the number of calls the summarizer counted
	// itself, which the result must agree with.
	SummarizerCalls int
	// MinSummarizerCalls is the least number of summarizer calls expected.
	MinSummarizerCalls int
	// Irreducible reports whether err is the guard's irreducible-request
	// error (each line's ErrIrreducible).
	Irreducible func(err error) bool
}

// noSummaryRoomTenths: when the system instruction and tools fill 70% of
// the window or more there is no room for a summary: the guard sends the
// user's current request on and says so, and the earlier conversation is
// dropped by design.
const noSummaryRoomTenths = 7

// Violations lists every property of the matrix the run broke; empty
// means the row passed: no overflow reaching the caller, no compaction
// that did not shrink the request, the user's latest message in every
// request, no marker neither sent nor summarized, call/response pairs
// intact, the summarizer's count agreed and at least the expected number
// of calls, and an irreducible-request error only where the truth says the
// request cannot fit, with at most one request over the window per such
// turn.
func (o MatrixRun) Violations() []string {
	res := o.Result
	var v []string
	add := func(format string, args ...any) { v = append(v, fmt.Sprintf(format, args...)) }

	if res.OverflowsSurfaced > 0 {
		add("%d overflow(s) surfaced to the caller (rejected %d, recovered %d, max real %d of %d)",
			res.OverflowsSurfaced, res.OverflowsRejected, res.OverflowsRecovered, res.MaxRealTokens, res.Window)
	}
	if res.NonShrinkingCompactions > 0 {
		add("%d compaction(s) did not shrink the request (compaction loop)", res.NonShrinkingCompactions)
	}
	if res.MissingLatestUser > 0 {
		add("%d request(s) without the user's latest message", res.MissingLatestUser)
	}
	noSummaryRoom := o.Probe.FixedTokens()*10 >= res.Window*noSummaryRoomTenths
	if res.LostMarkers > 0 && !noSummaryRoom {
		for _, rec := range res.Requests {
			if len(rec.LostMarkers) > 0 {
				add("%d marker(s) neither sent nor summarized, first at request %d (turn %d step %d): %v",
					res.LostMarkers, rec.Index, rec.Turn, rec.Step, rec.LostMarkers)
				break
			}
		}
	}
	if res.PairViolations > 0 {
		for _, rec := range res.Requests {
			if rec.PairError != nil {
				add("%d request(s) break call/response pairs, first at request %d: %v", res.PairViolations, rec.Index, rec.PairError)
				break
			}
		}
	}
	if o.SummarizerCalls != res.SummarizerCalls {
		add("summarizer calls: result says %d, the summarizer counted %d", res.SummarizerCalls, o.SummarizerCalls)
	}
	if res.SummarizerCalls < o.MinSummarizerCalls {
		add("summarizer called %d time(s), the matrix expects at least %d", res.SummarizerCalls, o.MinSummarizerCalls)
	}

	irreducible := 0
	for _, err := range res.Errors {
		switch {
		case IsOverflowError(err):
			// Counted above.
		case o.Irreducible != nil && o.Irreducible(err):
			irreducible++
			turn, ok := ErrorTurn(err)
			truth, known := o.Probe.IrreducibleAt(turn)
			if !ok || !known {
				add("ErrIrreducible at an unknown turn: %v", err)
			} else if truth <= res.Window {
				add("ErrIrreducible although system instruction, tools and user message are %d tokens, within the window of %d: %v", truth, res.Window, err)
			}
		default:
			add("unexpected error: %v", err)
		}
	}
	// The irreducible error is decided on the estimate before sending, or
	// on the provider's own rejection of the user's request alone (an
	// attachment it charges far above the estimate): at most one request
	// over the window per such turn.
	if irreducible > 0 && res.OverflowsRejected > irreducible {
		add("a clear-error scenario sent %d request(s) over the window for %d irreducible turn(s) (max real %d of %d)", res.OverflowsRejected, irreducible, res.MaxRealTokens, res.Window)
	}
	return v
}
