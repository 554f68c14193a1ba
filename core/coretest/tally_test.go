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

// TestWindowShare: rows add up per window, merging two shares adds them
// window by window without changing either, and the text lists the windows
// smallest first with each one's inline share.
func TestWindowShare(t *testing.T) {
	var s WindowShare
	s = s.Plus(8_000, WindowCount{Compactions: 4, Inline: 1})
	s = s.Plus(4_000, WindowCount{Compactions: 10, Inline: 3, InlineNotForTokens: 1})
	s = s.Plus(8_000, WindowCount{Compactions: 6, Inline: 1})
	o := WindowShare{}.Plus(200_000, WindowCount{Compactions: 5}).Plus(4_000, WindowCount{Compactions: 10, Inline: 1})

	merged := s.Merge(o)
	for _, tc := range []struct {
		name  string
		share WindowShare
		want  string
	}{
		{name: "rows added per window", share: s,
			want: "4000: inline 3 of 10 (30.0%; 1 not for tokens); 8000: inline 2 of 10 (20.0%; 0 not for tokens)"},
		{name: "the other share is unchanged", share: o,
			want: "4000: inline 1 of 10 (10.0%; 0 not for tokens); 200000: inline 0 of 5 (0.0%; 0 not for tokens)"},
		{name: "merged window by window", share: merged,
			want: "4000: inline 4 of 20 (20.0%; 1 not for tokens); 8000: inline 2 of 10 (20.0%; 0 not for tokens); 200000: inline 0 of 5 (0.0%; 0 not for tokens)"},
		{name: "empty", share: nil, want: ""},
		{name: "a window without compactions", share: WindowShare{}.Plus(4_000, WindowCount{}), want: "4000: inline 0 of 0 (0.0%; 0 not for tokens)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.share.String())
		})
	}
}
