// Package tokens estimates how many tokens a model request costs, cheaply
// enough to run on every model call.
//
// Text is reduced in a single pass over its bytes to counts of a few dozen
// features (letter pieces split at camelCase boundaries and bucketed by
// length, digit runs, punctuation runs, whitespace runs, CJK and other
// scripts, base64 and hex runs); the estimate is a weighted sum of those
// counts. The weights of each tokenizer family are fitted by
// internal/tokenfit on a multilingual, multi-format corpus against exact
// tokenizer counts, and embedded from weights_*.json. The held-out error of
// the fit is recorded in internal/tokenfit/accuracy/testdata/fit_report.txt.
//
// Structured values (function-call arguments and responses, tool schemas)
// are counted as the compact JSON a provider is sent. Images are counted by
// their pixel dimensions with each provider's published formula, and other
// binary data by documented per-kind rules, never by their byte length.
package tokens

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
)

// Family is a tokenizer family: a set of fitted weights and media rules.
type Family int

const (
	// O200k is OpenAI's o200k_base tokenizer (GPT-4o, GPT-4.1, GPT-5,
	// o-series). It is the default for unknown models.
	O200k Family = iota
	// Gemma3 is the 262k-entry SentencePiece tokenizer of Gemma 3, which
	// shares its vocabulary with Gemini; used for gemini* and gemma* models.
	Gemma3
	// Claude is Anthropic's tokenizer, which is not public: it is estimated as
	// the O200k estimate times ClaudeFactor.
	Claude
)

// ClaudeFactor scales O200k estimates for Claude models. Anthropic does not
// publish its tokenizer, so no exact count can be made offline. Comparisons
// of Claude's count_tokens results with OpenAI's tokenizers on the same text
// commonly come out 10–30% higher for English prose and code, and higher
// still for non-English text. 1.2 is the middle of that range. A context
// guard errs better on the high side, and the real prompt token counts the
// provider returns calibrate the rest at run time.
const ClaudeFactor = 1.2

// String returns the family's name.
func (f Family) String() string {
	switch f {
	case O200k:
		return "o200k"
	case Gemma3:
		return "gemma3"
	case Claude:
		return "claude"
	}
	return fmt.Sprintf("Family(%d)", int(f))
}

// FamilyForModel maps a model name to its tokenizer family: gemini* and
// gemma* → Gemma3, claude* and anthropic → Claude, anything else → O200k.
// Case is ignored, and a resource prefix ("models/", "publishers/google/
// models/") or provider prefix ("openrouter/anthropic/", "vertex_ai/") is
// looked through.
func FamilyForModel(model string) Family {
	m := strings.ToLower(strings.TrimSpace(model))
	if strings.Contains(m, "anthropic") {
		return Claude
	}
	name := m
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		name = m[i+1:]
	}
	switch {
	case strings.HasPrefix(name, "gemini"), strings.HasPrefix(name, "gemma"):
		return Gemma3
	case strings.HasPrefix(name, "claude"):
		return Claude
	}
	// Names such as "vertex_ai/claude-3" are caught above; names such as
	// "us.anthropic.claude-..." by the first check; look for the model
	// family after other separators too.
	for _, sep := range []string{".", ":", "@"} {
		if i := strings.LastIndex(name, sep+"claude"); i >= 0 {
			return Claude
		}
		if strings.Contains(name, sep+"gemini") || strings.Contains(name, sep+"gemma") {
			return Gemma3
		}
	}
	return O200k
}

// weightsFile is the format of weights_*.json, written by internal/tokenfit.
type weightsFile struct {
	Family    string             `json:"family"`
	Tokenizer string             `json:"tokenizer"`
	Framing   float64            `json:"framing_per_message"`
	Weights   map[string]float64 `json:"weights"`
}

var (
	//go:embed weights_o200k.json
	o200kJSON []byte
	//go:embed weights_gemma3.json
	gemma3JSON []byte
)

// Estimator estimates token counts for one tokenizer family. It is immutable
// after construction and safe for concurrent use.
type Estimator struct {
	family  Family
	w       [NumFeatures]float64
	framing int
	media   mediaRules
}

var estimators = func() [3]*Estimator {
	o := mustLoad(o200kJSON)
	g := mustLoad(gemma3JSON)
	var out [3]*Estimator
	out[O200k] = &Estimator{family: O200k, w: o.w, framing: o.framing, media: o200kMedia}
	out[Gemma3] = &Estimator{family: Gemma3, w: g.w, framing: g.framing, media: gemmaMedia}
	c := &Estimator{family: Claude, framing: o.framing, media: claudeMedia}
	for i := range o.w {
		c.w[i] = o.w[i] * ClaudeFactor
	}
	out[Claude] = c
	return out
}()

type loaded struct {
	w       [NumFeatures]float64
	framing int
}

// mustLoad parses an embedded weights file. The files are part of the
// build, so a malformed one is a programming error caught by the tests.
func mustLoad(data []byte) loaded {
	var wf weightsFile
	if err := json.Unmarshal(data, &wf); err != nil {
		panic("tokens: bad embedded weights: " + err.Error())
	}
	var l loaded
	for i, name := range FeatureNames {
		l.w[i] = wf.Weights[name]
	}
	l.framing = int(wf.Framing + 0.5)
	return l
}

// New returns the estimator of family f. It is cheap: estimators are built
// once per family and shared. Unknown families get the O200k estimator.
func New(f Family) *Estimator {
	if f < 0 || int(f) >= len(estimators) {
		return estimators[O200k]
	}
	return estimators[f]
}

// ForModel returns the estimator for a model name (see FamilyForModel).
func ForModel(model string) *Estimator { return New(FamilyForModel(model)) }

// Family returns the estimator's tokenizer family.
func (e *Estimator) Family() Family { return e.family }

// Framing returns the tokens a provider adds around each message (role and
// turn markers), as fitted by internal/tokenfit.
func (e *Estimator) Framing() int { return e.framing }

// Text estimates the tokens of s. It makes one pass over the bytes and does
// not allocate. Empty text is 0 tokens; any non-empty text at least 1.
func (e *Estimator) Text(s string) int { return estimateText(&e.w, s) }

// Bytes is Text for a byte slice, without copying it.
func (e *Estimator) Bytes(b []byte) int { return estimateText(&e.w, b) }

func estimateText[T text](w *[NumFeatures]float64, s T) int {
	if len(s) == 0 {
		return 0
	}
	var f Features
	countFeatures(s, &f)
	return estimate(w, &f)
}

// estimate is the token estimate of a non-empty text with features f: the
// weighted sum, rounded, and at least 1.
func estimate(w *[NumFeatures]float64, f *Features) int {
	x := 0.0
	for i, c := range f {
		x += w[i] * float64(c)
	}
	n := int(x + 0.5)
	if n < 1 {
		n = 1
	}
	return n
}

// Value estimates the tokens of v sent as compact JSON. map[string]any,
// []any, []string, map[string]string, strings, numbers, bools, nil,
// json.Number, json.RawMessage and []byte (base64) are encoded by a
// single walk that matches encoding/json's output byte for byte; other types
// fall back to json.Marshal. The encoding goes into a pooled buffer, so the
// common case does not allocate.
func (e *Estimator) Value(v any) int {
	f := valueFeatures(v)
	return estimate(&e.w, &f)
}

// valueFeatures returns the features of the compact JSON encoding of v,
// which is never empty.
func valueFeatures(v any) Features {
	w := getWriter()
	w.value(v, 0)
	var f Features
	countFeatures(w.buf, &f)
	putWriter(w)
	return f
}
