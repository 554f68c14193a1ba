package core

import "github.com/adk-contextguard/contextguard/core/internal/sat"

// Limits: the window, trigger and room one decision is made against, the
// default buffer rule, and sizes that saturate instead of wrapping.

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

// limits are the numbers one decision is made against: the context window,
// the buffer kept free below it and the trigger (threshold) they leave.
type limits struct {
	window    int
	buffer    int
	threshold int
	// output is the room kept for the response when the request sets
	// MaxOutputTokens (withOutput), 0 otherwise.
	output int
}

// Room for the answer. Several providers reject a request whose prompt plus
// max_tokens exceeds the window, so when a request sets MaxOutputTokens the
// trigger is lowered to leave that room, plus a margin for the estimate.
const (
	// outputMarginFraction is the margin kept between the prompt plus the
	// output and the window, as a fraction of the window. A calibrated
	// count is off by little more than what was added since the provider's
	// last count (well under a few percent of the window); 2% covers it.
	outputMarginFraction = 0.02
	// minOutputMargin is the least margin, for small windows.
	minOutputMargin = 256
	// minPromptShare is the least share of the window the prompt must keep
	// once the output's room is reserved. Below it (an output limit close
	// to the window, or larger) reserving the room would compact the
	// conversation to almost nothing at every call, so the configured
	// trigger is used instead, with a warning.
	minPromptShare = 0.25
)

// withOutput returns l with the trigger lowered, if needed, so that a prompt
// at the trigger plus out output tokens plus the margin fits the window:
// min(threshold, window - out - margin). ok is false, and l is returned
// unchanged, when that would leave the prompt less than minPromptShare of
// the window. A non-positive out changes nothing.
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

// room is the most the prompt may take: the window less the room kept for
// the output.
func (l limits) room() int { return l.window - l.output }

// halfwayToRoom is halfway from a count n to the room the request has: how
// far past the trigger the guard lets a request go that it cannot compact
// below it, keeping half of what is left of the room for the estimate's
// error (a compaction that stayed over the trigger, decide; a prepared
// summary's request, preparedFits).
func (l limits) halfwayToRoom(n int) int { return sat.Add(n, max(l.room()-n, 0)/2) }

// irreducibleMargin is how far past the window the smallest request the
// guard can make may be estimated and still be sent: the estimator's p90
// error. Within it the request may well fit, and the provider decides;
// beyond it the guard refuses with ErrIrreducible rather than send a request
// known not to fit.
const irreducibleMargin = 0.10

// hardLimit is the raw (uncalibrated) estimate past which the smallest
// request is refused with ErrIrreducible. It is compared with raw
// estimates only, never with calibrated counts: a calibration factor comes
// from the provider's reports, and one absurd report must not be able to
// refuse every later call of a session (ARCHITECTURE.md, "Trusting the
// provider's counts").
func (l limits) hardLimit() int { return sat.Add(l.window, sat.Scale(l.window, irreducibleMargin)) }

// newLimits are the default limits of window.
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

// bufferFor returns the room the default trigger keeps free below window.
func bufferFor(window int) int {
	if window >= largeWindow {
		return largeWindowBuffer
	}
	return int(float64(window) * smallWindowBufferFraction)
}
