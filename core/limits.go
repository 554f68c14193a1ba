package core

import "github.com/adk-contextguard/contextguard/core/internal/sat"

// DefaultContextWindow is the window assumed for a model the registry does
// not know (a warning is logged once per model).
const DefaultContextWindow = 128_000

// The default buffer (ARCHITECTURE.md, Origins): a fixed largeWindowBuffer
// for windows of largeWindow and more, boundary inclusive, a fraction below.
const (
	largeWindow               = 200_000
	largeWindowBuffer         = 20_000
	smallWindowBufferFraction = 0.20
)

// limits are what one decision is made against: the window, the buffer
// kept free below it, the trigger they leave, and the room kept for the
// response's MaxOutputTokens (0: none).
type limits struct {
	window    int
	buffer    int
	threshold int
	output    int
}

// Room for the answer: several providers reject a prompt plus max_tokens
// over the window, so the trigger leaves that room plus a margin.
const (
	// outputMarginFraction covers a calibrated count's error: little more
	// than what was added since the provider's last count.
	outputMarginFraction = 0.02
	minOutputMargin      = 256 // for small windows
	// minPromptShare: below it, reserving the output's room would compact
	// to almost nothing at every call, so the configured trigger is kept,
	// with a warning.
	minPromptShare = 0.25
)

// withOutput lowers the trigger to window - out - margin when that is
// lower; ok is false, l unchanged, when the prompt would keep less than
// minPromptShare. A non-positive out changes nothing.
func (l limits) withOutput(out int) (lim limits, ok bool) {
	if out <= 0 || l.window <= 0 {
		return l, true
	}
	margin := max(sat.Scale(l.window, outputMarginFraction), minOutputMargin)
	room := l.window - min(out, l.window) - min(margin, l.window)
	if room < int(float64(l.window)*minPromptShare) {
		return l, false
	}
	l.output = out
	if room < l.threshold {
		l.threshold = room
		l.buffer = l.window - room
	}
	return l, true
}

// room is the most the prompt may take.
func (l limits) room() int { return l.window - l.output }

// halfwayToRoom is halfway from n to the room: how far past the trigger a
// request the guard cannot compact below it may go, keeping half the rest
// for the estimate's error.
func (l limits) halfwayToRoom(n int) int { return sat.Add(n, max(l.room()-n, 0)/2) }

// irreducibleMargin is the estimator's p90 error: within it past the window
// the smallest request may fit and the provider decides; beyond it the
// guard refuses with ErrIrreducible.
const irreducibleMargin = 0.10

// hardLimit is the raw estimate past which the smallest request is refused.
// Never compared with calibrated counts: one absurd provider report must
// not refuse every later call (ARCHITECTURE.md, "Trusting the provider's
// counts").
func (l limits) hardLimit() int { return sat.Add(l.window, sat.Scale(l.window, irreducibleMargin)) }

func newLimits(window int) limits {
	b := bufferFor(window)
	return limits{window: window, buffer: b, threshold: window - b}
}

// maxOutputTokens is the request's MaxOutputTokens, 0 when it sets none.
func maxOutputTokens(req *Request) int {
	if req == nil || req.Config == nil || req.Config.MaxOutputTokens <= 0 {
		return 0
	}
	return int(req.Config.MaxOutputTokens)
}

func bufferFor(window int) int {
	if window >= largeWindow {
		return largeWindowBuffer
	}
	return int(float64(window) * smallWindowBufferFraction)
}
