package coretest

import (
	"encoding/base64"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tiktoken-go/tokenizer"
	"google.golang.org/genai"
)

// request is a request's contents and configuration, as a provider receives them.
type request struct {
	Contents []*genai.Content
	Config   *genai.GenerateContentConfig
}

// countReq counts req under c; a nil request counts as an empty one.
func countReq(c Counter, req *request) int {
	if req == nil {
		return c.Count(nil, nil)
	}
	return c.Count(req.Contents, req.Config)
}

func knownRequest() *request {
	return &request{
		Config: &genai.GenerateContentConfig{
			SystemInstruction: genai.NewContentFromText("be brief", genai.RoleUser), // 8 bytes
			Tools: []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{{
				Name:                 "grep",                           // 4
				Description:          "search",                         // 6
				ParametersJsonSchema: map[string]any{"type": "object"}, // {"type":"object"} = 17
			}}}},
		},
		Contents: []*genai.Content{
			{Role: genai.RoleUser, Parts: []*genai.Part{{Text: "hello world"}}}, // 11
			{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{
				Name: "grep", Args: map[string]any{"q": "<a&b>"}, // 4 + {"q":"<a&b>"} = 13
			}}}},
			{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{
				Name: "grep", Response: map[string]any{"n": 2}, // 4 + {"n":2} = 7
			}}}},
			{Role: genai.RoleUser, Parts: []*genai.Part{{InlineData: &genai.Blob{MIMEType: "application/pdf", Data: make([]byte, 30)}}}}, // 15 + 40
		},
	}
}

func TestSeedCounter_KnownRequest(t *testing.T) {
	req := knownRequest()
	// 5 contents (system + 4), 3 elements (declaration, call, response).
	want := 8 + 4 + 6 + 17 + 11 + 4 + 13 + 4 + 7 + 15 + base64.StdEncoding.EncodedLen(30) +
		5*SeedMessageOverheadBytes + 3*SeedElementOverheadBytes
	require.Equal(t, want, SerializedBytes(req.Contents, req.Config))

	tests := []struct {
		ratio float64
		want  int
	}{
		{1, want / 4},
		{2, int(float64(want) / 4 * 2)},
		{2.5, int(float64(want) / 4 * 2.5)},
		{0, want / 4}, // invalid ratio counts as 1
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, countReq(SeedCounter(tt.ratio), req), "ratio %v", tt.ratio)
	}
	assert.Zero(t, countReq(SeedCounter(2), nil))
	assert.Zero(t, countReq(SeedCounter(2), &request{Contents: []*genai.Content{nil, {Parts: []*genai.Part{nil}}}})-SeedMessageOverheadBytes*2/4)
}

func TestCounters_Additive(t *testing.T) {
	req := knownRequest()
	for _, c := range []Counter{SeedCounter(1), TokenizerCounter(1)} {
		whole := countReq(c, req)
		parts := countReq(c, &request{Config: req.Config}) + CountContents(c, req.Contents[:2]) + CountContents(c, req.Contents[2:])
		assert.InDelta(t, whole, parts, 2, "%v", c)
	}
}

func TestTokenizerCounter_MatchesTiktoken(t *testing.T) {
	codec, err := tokenizer.Get(tokenizer.O200kBase)
	require.NoError(t, err)
	for _, s := range []string{
		"The quick brown fox jumps over the lazy dog.",
		Generate(KindLogLines, 5000, 1),
		Generate(KindProseChinese, 3000, 2),
		Generate(KindCompactJSON, 4000, 3),
	} {
		want, err := codec.Count(s)
		require.NoError(t, err)
		assert.Equal(t, want, O200kCount(s))
		assert.Equal(t, want, O200kCount(s), "cache hit path")
	}

	text := "The quick brown fox jumps over the lazy dog."
	n, _ := codec.Count(text)
	req := &request{Contents: []*genai.Content{genai.NewContentFromText(text, genai.RoleUser)}}
	assert.Equal(t, n+MessageOverheadTokens, countReq(TokenizerCounter(1), req))
	assert.Equal(t, int(float64(n+MessageOverheadTokens)*1.2+0.5), countReq(TokenizerCounter(1.2), req))
}

func TestO200kCount_ChunkingIsExact(t *testing.T) {
	codec, err := tokenizer.Get(tokenizer.O200kBase)
	require.NoError(t, err)
	t.Parallel()
	for _, kind := range []Kind{KindLogLines, KindProseEnglish} {
		s := Generate(kind, chunkSize*3/2+123, 9)
		want, err := codec.Count(s)
		require.NoError(t, err)
		assert.Equal(t, want, countChunked(s), "%s", kind)
	}
}

func TestImageTokens(t *testing.T) {
	tests := []struct{ w, h, want int }{
		{100, 100, 85 + 170},
		{1024, 1024, 85 + 170*4}, // scaled to 768x768: 2x2 tiles
		{2048, 4096, 85 + 170*6}, // 1024x2048 -> 768x1536: 2x3 tiles
		{0, 10, 85},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, ImageTokens(tt.w, tt.h), "%dx%d", tt.w, tt.h)
	}
	img := PNG(300, 200, 1)
	assert.Equal(t, ImageTokens(300, 200), BlobTokens("image/png", img))
	assert.Equal(t, BlobBaseTokens+25, BlobTokens("application/pdf", make([]byte, 100)))
	assert.Equal(t, BlobBaseTokens+25, BlobTokens("image/png", make([]byte, 100)), "undecodable image")
}

func TestCounters_ConcurrentAndIdentityCache(t *testing.T) {
	payload := map[string]any{"output": Generate(KindLogLines, 20000, 4)}
	req := &request{Contents: []*genai.Content{{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{Name: "x", Response: payload}}}}}}
	c := TokenizerCounter(1)
	first := countReq(c, req)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			assert.Equal(t, first, countReq(c, req))
		}()
	}
	wg.Wait()
	// An in-place edit of the payload is noticed despite the identity cache.
	payload["output"] = "pruned"
	assert.Less(t, countReq(c, req), first/10)
	assert.True(t, strings.Contains(compactJSON(payload), "pruned"))
}

// TestCompactJSON_IdentityCache: ADK deep-copies every payload at every
// step, so the cache keys a payload by its shape, numbers and string
// addresses; a copy is served from the cache, and any edit (a new string, a
// changed number, an added key, a nested change) is serialized afresh.
func TestCompactJSON_IdentityCache(t *testing.T) {
	base := func() map[string]any {
		return map[string]any{"output": strings.Repeat("line\n", 100), "code": 1.0, "items": []any{"a", map[string]any{"k": true}}}
	}
	orig := base()
	want := marshalCompact(orig)
	require.Equal(t, want, compactJSON(orig))

	deepCopy := func(m map[string]any) map[string]any {
		items := m["items"].([]any)
		return map[string]any{"output": m["output"], "code": m["code"], "items": []any{items[0], map[string]any{"k": items[1].(map[string]any)["k"]}}}
	}
	cp := deepCopy(orig)
	key1, ok1 := payloadIdentity(orig)
	key2, ok2 := payloadIdentity(cp)
	require.True(t, ok1 && ok2)
	assert.Equal(t, key1, key2, "a deep copy sharing the strings has the same identity")
	assert.Equal(t, want, compactJSON(cp))

	edits := map[string]func(m map[string]any){
		"new string":   func(m map[string]any) { m["output"] = strings.Repeat("line\n", 99) + "done\n" },
		"number":       func(m map[string]any) { m["code"] = 2.0 },
		"added key":    func(m map[string]any) { m["extra"] = nil },
		"nested value": func(m map[string]any) { m["items"].([]any)[1].(map[string]any)["k"] = false },
	}
	for name, edit := range edits {
		t.Run(name, func(t *testing.T) {
			m := deepCopy(orig)
			edit(m)
			assert.Equal(t, marshalCompact(m), compactJSON(m))
			assert.NotEqual(t, want, compactJSON(m))
		})
	}
}
