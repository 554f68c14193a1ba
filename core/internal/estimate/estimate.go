// Package estimate is what a request's pieces weigh before the provider
// counts them (ARCHITECTURE.md, Counting): the estimator seam, the feature
// estimator of a model, and the measure a call weighs what it builds with.
package estimate

import (
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/calib"
	"github.com/adk-contextguard/contextguard/core/internal/sat"
	"github.com/adk-contextguard/contextguard/core/internal/tokens"
)

// Estimator counts the tokens of the pieces of a request: one message with
// its framing (Content), a plain string, one function declaration, the
// built-in tools set on a tool. DefaultFactor multiplies raw estimates until
// the provider reports a real count, sized to the estimator's p90 error. It
// is the seam the feature estimator replaces; implementations are safe for
// concurrent use.
type Estimator interface {
	Content(c *genai.Content) int
	Text(s string) int
	Declaration(d *genai.FunctionDeclaration) int
	BuiltinTools(t *genai.Tool) int
	DefaultFactor() float64
}

// Contents is the estimate of cs.
func Contents(e Estimator, cs []*genai.Content) int {
	n := 0
	for _, c := range cs {
		n = sat.Add(n, e.Content(c))
	}
	return n
}

// Fixed is the estimate of what a request with config cfg carries besides
// its contents: the system instruction and the tool declarations.
func Fixed(e Estimator, cfg *genai.GenerateContentConfig) int {
	if cfg == nil {
		return 0
	}
	n := e.Content(cfg.SystemInstruction)
	for _, t := range cfg.Tools {
		if t == nil {
			continue
		}
		n = sat.Add(n, e.BuiltinTools(t))
		for _, d := range t.FunctionDeclarations {
			n = sat.Add(n, e.Declaration(d))
		}
	}
	return n
}

// DefaultCorrection multiplies estimates while the provider has reported no
// real count yet. It is sized to the feature estimator's held-out p90 error
// (see internal/tokenfit/accuracy/testdata/fit_report.txt), rounded up.
const DefaultCorrection = 1.10

// Feature is the single-pass feature estimator of internal/tokens for one
// tokenizer family (o200k for GPT and o-series, Gemma-3 for Gemini, o200k
// times a factor for Claude; o200k for unknown models).
type Feature struct{ *tokens.Estimator }

// ForModel is the feature estimator of a model name.
func ForModel(model string) Feature { return Feature{tokens.ForModel(model)} }

// DefaultFactor is DefaultCorrection.
func (Feature) DefaultFactor() float64 { return DefaultCorrection }

// Measure is how a call weighs what it builds: the contents as the framework
// built them, the session's estimator and calibration, and the raw estimate
// of the instruction and tools (Fixed). The steps that only count and cut
// take it, not the whole call's state.
type Measure[E Estimator] struct {
	Raw   []*genai.Content
	Est   E
	Cal   calib.Calibration
	Fixed int
}

// Weigh is the raw estimate of the request with contents cs.
func (m Measure[E]) Weigh(cs []*genai.Content) int { return sat.Add(Contents(m.Est, cs), m.Fixed) }

// Text is the calibrated size of s.
func (m Measure[E]) Text(s string) int { return m.Cal.Scale(m.Est.Text(s)) }

// Calibrated is m with the estimator's default factor while it has no
// calibration yet (a summary is injected before the call is calibrated).
func (m Measure[E]) Calibrated() Measure[E] {
	if m.Cal.Factor <= 0 {
		m.Cal = calib.Calibration{Factor: m.Est.DefaultFactor()}
	}
	return m
}
