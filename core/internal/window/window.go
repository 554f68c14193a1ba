// Package window is the arithmetic of one decision's limits: the window, the
// buffer kept free below it, the trigger they leave, the room for the output.
package window

import (
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/sat"
)

// Default is the window assumed for a model the registry does not know.
const Default = 128_000

// The default buffer (ARCHITECTURE.md, Origins): a fixed largeBuffer for
// windows of large and more, boundary inclusive, a fraction below.
const (
	large               = 200_000
	largeBuffer         = 20_000
	smallBufferFraction = 0.20
)

// Limits are the numbers one decision is made against: the context window,
// the buffer kept free below it, the trigger (Threshold) they leave, and the
// room kept for the response (WithOutput; 0 without MaxOutputTokens).
type Limits struct{ Window, Buffer, Threshold, Output int }

// Several providers reject a request whose prompt plus max_tokens exceeds
// the window, so the trigger leaves that room, plus a margin (WithOutput).
const (
	// outputMarginFraction of the window covers a calibrated count's error:
	// little more than what was added since the provider's last count.
	outputMarginFraction = 0.02
	minOutputMargin      = 256 // the least margin, for small windows
	// minPromptShare is the least share of the window the prompt keeps once
	// the output's room is reserved; below it every call would compact the
	// conversation to almost nothing, so the configured trigger is kept.
	minPromptShare = 0.25
	// irreducibleMargin is how far past the window the smallest request may
	// be estimated and still be sent (the estimator's p90 error): within it
	// the provider decides; beyond it the request is known not to fit.
	irreducibleMargin = 0.10
)

// New are the default limits of window.
func New(window int) Limits {
	b := BufferFor(window)
	return Limits{Window: window, Buffer: b, Threshold: window - b}
}

// BufferFor returns the room the default trigger keeps free below window.
func BufferFor(window int) int {
	if window >= large {
		return largeBuffer
	}
	return int(float64(window) * smallBufferFraction)
}

// OutputMargin is the margin kept between a prompt plus its output and w.
func OutputMargin(w int) int { return max(sat.Scale(w, outputMarginFraction), minOutputMargin) }

// WithOutput returns l with the trigger lowered, if needed, so that a prompt
// at the trigger plus out output tokens plus the margin fits the window:
// min(Threshold, Window - out - margin). ok is false, and l is returned
// unchanged, when that would leave the prompt less than minPromptShare of
// the window. A non-positive out changes nothing.
func (l Limits) WithOutput(out int) (lim Limits, ok bool) {
	if out <= 0 || l.Window <= 0 {
		return l, true
	}
	room := l.Window - min(out, l.Window) - min(OutputMargin(l.Window), l.Window)
	if room < int(float64(l.Window)*minPromptShare) {
		return l, false
	}
	l.Output = out
	if room < l.Threshold {
		l.Threshold = room
		l.Buffer = l.Window - room
	}
	return l, true
}

// Room is the most the prompt may take: the window less the room kept for
// the output.
func (l Limits) Room() int { return l.Window - l.Output }

// HalfwayToRoom is halfway from a count n to the room: how far past the
// trigger a request the guard cannot compact below it may go, keeping half
// of what is left of the room for the estimate's error.
func (l Limits) HalfwayToRoom(n int) int { return sat.Add(n, max(l.Room()-n, 0)/2) }

// HardLimit is the raw (uncalibrated) estimate past which the smallest
// request is refused as irreducible. It is compared with raw estimates
// only: a calibration factor comes from the provider's reports, and one
// absurd report must not refuse every later call of a session
// (ARCHITECTURE.md, "Trusting the provider's counts").
func (l Limits) HardLimit() int { return sat.Add(l.Window, sat.Scale(l.Window, irreducibleMargin)) }

// MaxOutput is the MaxOutputTokens cfg sets, 0 when it sets none.
func MaxOutput(cfg *genai.GenerateContentConfig) int {
	if cfg == nil || cfg.MaxOutputTokens <= 0 {
		return 0
	}
	return int(cfg.MaxOutputTokens)
}
