package accuracy_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tiktoken-go/tokenizer"
)

// TestDeepNestingCount: the o200k_base count of a value nested 10,000 deep,
// which core's and core/internal/tokens' deep-nesting tests hold as the
// constant deepNestingO200kTokens (they do not import the tokenizer, which
// a module importing the plugin would download for their tests).
func TestDeepNestingCount(t *testing.T) {
	var v any = "leaf"
	for range 10_000 - 1 {
		v = map[string]any{"node": v}
	}
	raw, err := json.Marshal(map[string]any{"node": v})
	require.NoError(t, err)
	enc, err := tokenizer.Get(tokenizer.O200kBase)
	require.NoError(t, err)
	ids, _, err := enc.Encode(string(raw))
	require.NoError(t, err)
	assert.Len(t, raw, 90_006)
	assert.Len(t, ids, 25_002, "update deepNestingO200kTokens in core/internal/countcache/cache_test.go and core/internal/tokens/json_test.go")
}
