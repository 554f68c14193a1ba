package tokens

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Runs of four punctuation bytes or more: each text's non-zero features,
// every other feature zero.
func TestPunctRun(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want map[int]int32
	}{
		{"four dashes are one o200k token", "----", map[int]int32{fPunctRun: 1, fPunctLong: 1}},
		{"eight dashes, a power of two, are one token too", "--------", map[int]int32{fPunctRun: 1, fPunctLong: 1}},
		{"seven dashes are pieces of four, two and one", "-------", map[int]int32{fPunctRun: 1, fPunctLong: 3}},
		{"a long alternation of two bytes", "=-=-=-=-", map[int]int32{fPunctRun: 1, fPunct: 2, fPunctAlt: 6}},
		{"a short alternation is plain punctuation", "!?!?", map[int]int32{fPunctRun: 1, fPunct: 4}},
		{"a long run of pipes counts its pipes", "||||||", map[int]int32{fPunctRun: 1, fPunctLong: 2, fPipe: 6}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, featuresOf(tt.want), Count(tt.in))
		})
	}
}
