package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestLabelY: a compaction's label never crosses the window or the trigger
// line: it stays at its mark when clear of them, else sits just above the
// line it would cross, or just below it at the top of the chart.
func TestLabelY(t *testing.T) {
	const top, window, trigger = 25_600.0, 16_000.0, 12_800.0
	u := top / plotAreaPoints
	crosses := func(y, line float64) bool {
		return line >= y+labelOffset*u && line <= y+(labelOffset+labelHeight)*u
	}
	tests := []struct {
		name string
		mark float64
		want string // "stays", "above" or "below"
	}{
		{"well below both lines", 5_000, "stays"},
		{"label would cross the window line", window - 12*u, "above"},
		{"label would cross the trigger line", trigger - 12*u, "above"},
		{"above the window line already", window + 500, "stays"},
		{"at the top of the chart", top - 12*u, "stays"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			y := labelY(tt.mark, top, window, trigger)
			for _, line := range []float64{window, trigger} {
				assert.False(t, crosses(y, line), "label at %.0f crosses the line at %.0f", y, line)
			}
			switch tt.want {
			case "stays":
				assert.Equal(t, tt.mark, y)
			case "above":
				assert.Greater(t, y+labelOffset*u, tt.mark+labelOffset*u, "moved up, above the line")
			}
		})
	}
	// A line so close to the top that the label cannot go above it.
	y := labelY(top-20*u, top, top-8*u)
	assert.False(t, crosses(y, top-8*u))
	assert.Less(t, y, top-20*u, "moved below the line")
}
