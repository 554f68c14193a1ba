package window

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"google.golang.org/genai"
)

// TestWithOutput: the trigger kept for an output limit.
func TestWithOutput(t *testing.T) {
	tests := []struct {
		window, output int
		wantThreshold  int
		wantOK         bool
	}{
		{200_000, 0, 180_000, true},
		{200_000, 64_000, 200_000 - 64_000 - 4_000, true},
		{128_000, 32_000, 128_000 - 32_000 - 2_560, true},
		{128_000, 8_192, 102_400, true},           // the configured trigger already leaves the room
		{8_000, 8_192, 6_400, false},              // no room for the prompt at all
		{8_000, 5_000, 8_000 - 5_000 - 256, true}, // the margin's floor, the prompt keeps over a quarter
		{8_000, 5_800, 6_400, false},              // under a quarter of the window left
		{1 << 40, 1 << 31, 1<<40 - 1<<31 - 21_990_232_556, true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d/%d", tt.window, tt.output), func(t *testing.T) {
			l, ok := New(tt.window).WithOutput(tt.output)
			assert.Equal(t, tt.wantOK, ok)
			assert.Equal(t, tt.wantThreshold, l.Threshold)
			assert.Equal(t, tt.window-tt.wantThreshold, l.Buffer)
			if ok && tt.output > 0 {
				assert.LessOrEqual(t, l.Threshold+tt.output, tt.window)
			}
		})
	}
}

func TestBufferFor(t *testing.T) {
	tests := []struct{ window, buffer int }{
		{4_000, 800},
		{8_000, 1_600},
		{128_000, 25_600},
		{199_999, 39_999},
		{200_000, 20_000}, // boundary inclusive (the earlier guard's boundary bug)
		{1_000_000, 20_000},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.buffer, BufferFor(tt.window), "window %d", tt.window)
		assert.Equal(t, tt.window-tt.buffer, New(tt.window).Threshold)
	}
}

// TestMaxOutput: only a positive MaxOutputTokens keeps room for the answer.
func TestMaxOutput(t *testing.T) {
	tests := []struct {
		name string
		cfg  *genai.GenerateContentConfig
		want int
	}{
		{"no config", nil, 0},
		{"not set", &genai.GenerateContentConfig{}, 0},
		{"negative", &genai.GenerateContentConfig{MaxOutputTokens: -1}, 0},
		{"set", &genai.GenerateContentConfig{MaxOutputTokens: 8_192}, 8_192},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, MaxOutput(tt.cfg))
		})
	}
}
