package contentid

import (
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/sat"
)

// maxSizeNodes bounds the walk of a payload's size, as maxKeyNodes bounds
// its key's walk: past it the rest is not added.
const maxSizeNodes = maxKeyNodes

// Size is the bytes of the strings and byte slices c holds, as its
// identity walks them: what a cache entry pinning c retains besides its
// structs.
func Size(c *genai.Content) int {
	s := identity{mode: sinkSize}
	walkContent(c, &s)
	return s.size
}

// valueSize is the bytes of the strings a JSON-like payload holds, plus a
// word per value, walked with an explicit stack and at most maxSizeNodes
// values (a payload with shared sub-values is counted once per visit up to
// that bound; a cycle stops there).
func valueSize(v any) int {
	const word = 8
	n := 0
	stack := []any{v}
	budget := maxSizeNodes // values that may still be put on the stack
	push := func(x any) {
		if budget > 0 {
			budget--
			stack = append(stack, x)
		}
	}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n = sat.Add(n, word)
		switch y := x.(type) {
		case string:
			n = sat.Add(n, len(y))
		case []string:
			for _, s := range y {
				n = sat.Add(n, sat.Add(len(s), word))
			}
		case []byte:
			n = sat.Add(n, len(y))
		case map[string]any:
			for k, e := range y {
				if budget == 0 {
					break
				}
				n = sat.Add(n, len(k))
				push(e)
			}
		case []any:
			for _, e := range y {
				if budget == 0 {
					break
				}
				push(e)
			}
		}
	}
	return n
}
