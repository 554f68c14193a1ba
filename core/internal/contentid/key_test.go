package contentid

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"
)

// TestKeyer: a key depends on its seed, on every value added and on their
// order, so chains and config hashes built from keys tell these apart.
func TestKeyer(t *testing.T) {
	sum := func(seed uint64, vs ...uint64) uint64 {
		k := NewKeyer(seed)
		for _, v := range vs {
			k.Add(v)
		}
		return k.Sum()
	}
	for _, tc := range []struct {
		name string
		a, b uint64
	}{
		{"another seed", sum(1, 7), sum(2, 7)},
		{"another value", sum(1, 7), sum(1, 8)},
		{"the same values in another order", sum(1, 7, 8), sum(1, 8, 7)},
		{"one more value", sum(1, 7), sum(1, 7, 0)},
	} {
		t.Run(tc.name, func(t *testing.T) { assert.NotEqual(t, tc.a, tc.b) })
	}
	assert.Equal(t, sum(1, 7, 8), sum(1, 7, 8), "the same seed and values give the same key")
}

// TestKey_NamesStringsByAddress: the key of a content rebuilt around the
// same strings is the same, and one whose text was copied to new bytes is
// another (the cache then counts it again); a payload the key cannot
// watch is not keyed.
func TestKey_NamesStringsByAddress(t *testing.T) {
	text := strings.Repeat("log line\n", 10)
	a, ok := Key(userMsg(text))
	require.True(t, ok)
	for _, tc := range []struct {
		name    string
		c       *genai.Content
		same    bool
		keyable bool
	}{
		{"rebuilt around the same string", userMsg(text), true, true},
		{"the same text in new bytes", userMsg(strings.Clone(text)), false, true},
		{"a payload holding a struct", callMsg("f", map[string]any{"v": struct{ X int }{1}}), false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, ok := Key(tc.c)
			assert.Equal(t, tc.keyable, ok)
			if tc.keyable {
				assert.Equal(t, tc.same, a == b)
			}
		})
	}
}
