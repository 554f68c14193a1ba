package contentid

import "google.golang.org/genai"

// Size is about what a cache entry pinning c retains besides its structs:
// what its tape record would hold (strings with their bytes, a word per
// value), and the bytes of its byte slices.
func Size(c *genai.Content) int {
	if c == nil {
		return 0
	}
	s := identity{mode: sinkSize}
	s.tapeContent(c)
	return s.size
}
