package coretest

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// TallyText lists counts in order as "name n, name n", the empty key under
// emptyName: the stress tables of both ADK lines print their compactions by
// reason with it.
func TallyText[K ~string](order []K, counts map[K]int, emptyName string) string {
	parts := make([]string, 0, len(order))
	for _, k := range order {
		name := string(k)
		if name == "" {
			name = emptyName
		}
		parts = append(parts, fmt.Sprintf("%s %d", name, counts[k]))
	}
	return strings.Join(parts, ", ")
}

// WindowCount is what the compactions of one context window's rows came
// to: how many there were, how many ran inline, and how many of those were
// not for tokens (overflow recoveries, which always run inline).
type WindowCount struct {
	Compactions, Inline, InlineNotForTokens int
}

// WindowShare is the compactions of the stress matrix's rows by context
// window: the stress tables of both ADK lines print with it where the
// inline compactions fall, since a row's window decides how much room a
// step leaves beside a prepared summary. The zero value is empty and ready
// to use.
type WindowShare map[int]WindowCount

// Plus returns s with c added to window's counts; s is left unchanged.
func (s WindowShare) Plus(window int, c WindowCount) WindowShare {
	out := make(WindowShare, len(s)+1)
	maps.Copy(out, s)
	w := out[window]
	w.Compactions += c.Compactions
	w.Inline += c.Inline
	w.InlineNotForTokens += c.InlineNotForTokens
	out[window] = w
	return out
}

// Merge returns the sum of s and o; neither is changed.
func (s WindowShare) Merge(o WindowShare) WindowShare {
	out := maps.Clone(s)
	for window, c := range o {
		out = out.Plus(window, c)
	}
	return out
}

// String lists the windows smallest first, as "4000: inline 3 of 10
// (30.0%; 1 not for tokens)", separated by "; ".
func (s WindowShare) String() string {
	parts := make([]string, 0, len(s))
	for _, window := range slices.Sorted(maps.Keys(s)) {
		c := s[window]
		share := 0.0
		if c.Compactions > 0 {
			share = 100 * float64(c.Inline) / float64(c.Compactions)
		}
		parts = append(parts, fmt.Sprintf("%d: inline %d of %d (%.1f%%; %d not for tokens)",
			window, c.Inline, c.Compactions, share, c.InlineNotForTokens))
	}
	return strings.Join(parts, "; ")
}
