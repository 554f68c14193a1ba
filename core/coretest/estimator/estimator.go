// Package estimator is the guard's built-in token estimate for tests and
// benchmarks outside the engine (part of the test kit, coretest): it lets
// them check, in the guard's own measure, a piece the guard bounds. It is
// a package of its own because the estimator's tests use coretest.
package estimator

import (
	"math"

	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/tokens"
)

// Tokens is the guard's built-in estimate of contents for a model:
// the feature estimator of the model's tokenizer family (ARCHITECTURE.md,
// Counting), raw, before the calibration that multiplies it (README.md,
// Calibrate). A benchmark checks with it, in the guard's own measure, a
// piece the guard bounds, such as a recall tool's answer.
func Tokens(model string, contents ...*genai.Content) int {
	e := tokens.ForModel(model)
	n := 0
	for _, c := range contents {
		v := e.Content(c)
		if n > math.MaxInt-v {
			return math.MaxInt
		}
		n += v
	}
	return n
}
