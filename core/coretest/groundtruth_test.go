package coretest

import (
	"encoding/base64"
	"fmt"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	for _, c := range []Counter{SeedCounter(1), TextCounter("TextTokens", TextTokens, 1)} {
		whole := countReq(c, req)
		parts := countReq(c, &request{Config: req.Config}) + CountContents(c, req.Contents[:2]) + CountContents(c, req.Contents[2:])
		assert.InDelta(t, whole, parts, 2, "%v", c)
	}
}

func TestTextCounter(t *testing.T) {
	words := func(s string) int { return len(strings.Fields(s)) }
	text := "the quick brown fox"
	req := &request{Contents: []*genai.Content{genai.NewContentFromText(text, genai.RoleUser)}}
	tests := []struct {
		name   string
		count  func(string) int
		factor float64
		want   int
		str    string
	}{
		{name: "the count of each text plus a message's framing", count: words, factor: 1, want: 4 + MessageOverheadTokens, str: "words(1.00)"},
		{name: "times the provider's factor, rounded", count: words, factor: 1.2, want: 10, str: "words(1.20)"},
		{name: "a factor <= 0 counts as 1", count: words, factor: 0, want: 4 + MessageOverheadTokens, str: "words(1.00)"},
		{name: "a nil count is TextTokens", count: nil, factor: 1, want: TextTokens(text) + MessageOverheadTokens, str: "words(1.00)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := TextCounter("words", tt.count, tt.factor)
			assert.Equal(t, tt.want, countReq(c, req))
			assert.Equal(t, tt.str, fmt.Sprint(c))
		})
	}
}

func TestTextTokens(t *testing.T) {
	for s, want := range map[string]int{"": 0, "a": 1, "abcd": 1, "abcde": 2, strings.Repeat("x", 400): 100} {
		assert.Equal(t, want, TextTokens(s), "%q", s)
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
	c := TextCounter("TextTokens", TextTokens, 1)
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

// TestCoretest_ImportsNoTokenizer: the kit's package imports no tokenizer
// (the exact counter lives in package o200k), so a module whose tests use
// the kit without exact counts never downloads one.
func TestCoretest_ImportsNoTokenizer(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		require.NoError(t, err)
		for _, imp := range f.Imports {
			assert.NotContains(t, imp.Path.Value, "tiktoken", "%s imports a tokenizer: exact counts belong in package o200k", name)
		}
	}
}
