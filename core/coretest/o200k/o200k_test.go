package o200k

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tiktoken-go/tokenizer"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/coretest"
)

func TestCounter_MatchesTiktoken(t *testing.T) {
	codec, err := tokenizer.Get(tokenizer.O200kBase)
	require.NoError(t, err)
	for _, s := range []string{
		"The quick brown fox jumps over the lazy dog.",
		coretest.Generate(coretest.KindLogLines, 5000, 1),
		coretest.Generate(coretest.KindProseChinese, 3000, 2),
		coretest.Generate(coretest.KindCompactJSON, 4000, 3),
	} {
		want, err := codec.Count(s)
		require.NoError(t, err)
		assert.Equal(t, want, Count(s))
		assert.Equal(t, want, Count(s), "cache hit path")
	}

	text := "The quick brown fox jumps over the lazy dog."
	n, _ := codec.Count(text)
	contents := []*genai.Content{genai.NewContentFromText(text, genai.RoleUser)}
	assert.Equal(t, n+coretest.MessageOverheadTokens, Counter(1).Count(contents, nil))
	assert.Equal(t, int(float64(n+coretest.MessageOverheadTokens)*1.2+0.5), Counter(1.2).Count(contents, nil))
	assert.Equal(t, "TokenizerCounter(1.20)", fmt.Sprint(Counter(1.2)))
}

func TestCount_ChunkingIsExact(t *testing.T) {
	codec, err := tokenizer.Get(tokenizer.O200kBase)
	require.NoError(t, err)
	t.Parallel()
	for _, kind := range []coretest.Kind{coretest.KindLogLines, coretest.KindProseEnglish} {
		s := coretest.Generate(kind, chunkSize*3/2+123, 9)
		want, err := codec.Count(s)
		require.NoError(t, err)
		assert.Equal(t, want, countChunked(s), "%s", kind)
	}
}
