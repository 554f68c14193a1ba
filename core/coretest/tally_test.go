package coretest

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestTallyText: every key of the order is listed, in that order, with 0
// for a key never counted, and the empty key under its name.
func TestTallyText(t *testing.T) {
	type why string
	for _, tc := range []struct {
		name   string
		counts map[why]int
		want   string
	}{
		{name: "counted", counts: map[why]int{"a": 2, "b": 1, "": 3}, want: "a 2, b 1, other 3"},
		{name: "nothing counted", counts: nil, want: "a 0, b 0, other 0"},
		{name: "keys outside the order are not listed", counts: map[why]int{"c": 9, "b": 1}, want: "a 0, b 1, other 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, TallyText([]why{"a", "b", ""}, tc.counts, "other"))
		})
	}
}
