package core

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestTruncateMiddle(t *testing.T) {
	s := strings.Repeat("日本語テキスト", 200)
	for _, n := range []int{0, 10, 40, 100, 1000, len(s), len(s) + 5} {
		out := truncateMiddle(s, n)
		assert.True(t, utf8.ValidString(out), "n=%d", n)
		assert.LessOrEqual(t, len(out), max(n, 0), "n=%d", n)
	}
	long := "HEAD" + strings.Repeat("x", 10_000) + "TAIL"
	out := truncateMiddle(long, 200)
	assert.True(t, strings.HasPrefix(out, "HEAD"))
	assert.True(t, strings.HasSuffix(out, "TAIL"))
	assert.Contains(t, out, "bytes omitted")
}
