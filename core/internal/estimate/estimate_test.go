package estimate

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/calib"
)

// fixedCounts is an estimator with a known count per piece: content per content,
// a byte per text, 100 per declaration, 1,000 per tool and a factor of 2.
type fixedCounts struct{ content int }

func (f fixedCounts) Content(*genai.Content) int               { return f.content }
func (fixedCounts) Text(s string) int                          { return len(s) }
func (fixedCounts) Declaration(*genai.FunctionDeclaration) int { return 100 }
func (fixedCounts) BuiltinTools(*genai.Tool) int               { return 1_000 }
func (fixedCounts) DefaultFactor() float64                     { return 2 }

// TestFixed: the instruction and every tool's declarations count, a nil
// tool and a nil config count nothing.
func TestFixed(t *testing.T) {
	fn := &genai.FunctionDeclaration{Name: "f"}
	tests := []struct {
		name string
		cfg  *genai.GenerateContentConfig
		want int
	}{
		{"no config", nil, 0},
		{"an instruction only", &genai.GenerateContentConfig{}, 10},
		{"two tools, three declarations, a nil tool", &genai.GenerateContentConfig{Tools: []*genai.Tool{
			{FunctionDeclarations: []*genai.FunctionDeclaration{fn, fn}}, nil, {FunctionDeclarations: []*genai.FunctionDeclaration{fn}},
		}}, 10 + 2*1_000 + 3*100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Fixed(fixedCounts{content: 10}, tt.cfg))
		})
	}
}

// TestMeasure: a request weighs its contents plus the fixed part, saturating;
// a text is scaled by the calibration, which is the estimator's default
// factor until the call has one.
func TestMeasure(t *testing.T) {
	cs := []*genai.Content{{}, {}, {}}
	tests := []struct {
		name      string
		m         Measure[fixedCounts]
		weigh     int
		text      int // of "abcd"
		factorNow float64
	}{
		{"uncalibrated", Measure[fixedCounts]{Est: fixedCounts{content: 10}, Fixed: 5}, 35, 0, 2},
		{"calibrated", Measure[fixedCounts]{Est: fixedCounts{content: 10}, Cal: calib.Calibration{Factor: 1.5}}, 30, 6, 1.5},
		{"saturating", Measure[fixedCounts]{Est: fixedCounts{content: math.MaxInt / 2}, Fixed: 1, Cal: calib.Calibration{Factor: 1}}, math.MaxInt, 4, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.weigh, tt.m.Weigh(cs))
			assert.Equal(t, tt.text, tt.m.Text("abcd"))
			assert.InDelta(t, tt.factorNow, tt.m.Calibrated().Cal.Factor, 1e-9)
		})
	}
}
