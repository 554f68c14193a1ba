package tokens_test

import (
	"bytes"
	"encoding/json"
	"image"
	"image/png"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/tokens"
)

var families = []tokens.Family{tokens.O200k, tokens.Gemma3, tokens.Claude}

func TestFamilyForModel(t *testing.T) {
	tests := []struct {
		model string
		want  tokens.Family
	}{
		{"gemini-2.5-flash", tokens.Gemma3},
		{"models/gemini-2.0-pro", tokens.Gemma3},
		{"GEMINI-1.5-PRO", tokens.Gemma3},
		{"gemma-3-27b-it", tokens.Gemma3},
		{"publishers/google/models/gemini-2.5-pro", tokens.Gemma3},
		{"openrouter/google/gemini-2.5-pro", tokens.Gemma3},
		{"claude-sonnet-4-5", tokens.Claude},
		{"Claude-3-Opus", tokens.Claude},
		{"anthropic/claude-3.5-sonnet", tokens.Claude},
		{"us.anthropic.claude-3-7-sonnet-20250219-v1:0", tokens.Claude},
		{"vertex_ai/claude-opus-4", tokens.Claude},
		{"anthropic", tokens.Claude},
		{"gpt-4o", tokens.O200k},
		{"o3-mini", tokens.O200k},
		{"openai/gpt-5", tokens.O200k},
		{"", tokens.O200k},
		{"llama-3.1-70b", tokens.O200k},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			assert.Equal(t, tt.want, tokens.FamilyForModel(tt.model))
			assert.Equal(t, tt.want, tokens.ForModel(tt.model).Family())
		})
	}
	assert.Equal(t, tokens.O200k, tokens.New(tokens.Family(42)).Family())
	assert.Equal(t, "gemma3", tokens.Gemma3.String())
}

func TestClaudeFactor(t *testing.T) {
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", 200)
	o := tokens.New(tokens.O200k).Text(text)
	c := tokens.New(tokens.Claude).Text(text)
	assert.InDelta(t, float64(o)*tokens.ClaudeFactor, float64(c), 2)
}

func TestTextBasics(t *testing.T) {
	for _, f := range families {
		e := tokens.New(f)
		assert.Equal(t, 0, e.Text(""), f)
		assert.Equal(t, 1, e.Text("a"), f)
		assert.Equal(t, e.Text("hello world"), e.Bytes([]byte("hello world")), f)
		// Longer text costs more.
		assert.Less(t, e.Text("hello"), e.Text(strings.Repeat("hello world, ", 50)), f)
	}
}

// nested is a value with nesting, escapes, numbers of every form and
// non-ASCII text.
func nested() map[string]any {
	return map[string]any{
		"zeta":  "last <key> & \"quoted\" \\ back\nslash\ttab \u2028 sep",
		"alpha": []any{1.0, 2.5, -0.000001, 1e21, 123456789.0, 0.0, math.Pi, float32(1.5), 7, int64(-9), uint8(3)},
		"mid": map[string]any{
			"unicode": "héllo wörld — 你好，世界。こんにちは 🌍",
			"nil":     nil,
			"yes":     true,
			"no":      false,
			"num":     json.Number("12.50"),
			"list":    []string{"a", "b"},
			"strmap":  map[string]string{"y": "1", "x": "2"},
			"maps":    []map[string]any{{"k": "v"}},
			"ctrl":    "bell\u0007 and invalid \xff byte",
			"empty":   map[string]any{},
			"bytes":   []byte("raw bytes"),
		},
		"struct": struct {
			A int    `json:"a"`
			B string `json:"b"`
		}{1, "two"},
		"Upper": "CamelCaseKey",
	}
}

func TestValueMatchesCompactJSON(t *testing.T) {
	v := nested()
	want, err := json.Marshal(v)
	require.NoError(t, err)
	for _, f := range families {
		e := tokens.New(f)
		// Designed to be exact: Value writes the same bytes as json.Marshal.
		assert.Equal(t, e.Text(string(want)), e.Value(v), f)
	}
	// Key order independence: the same map built in another order.
	a := map[string]any{}
	b := map[string]any{}
	keys := []string{"one", "two", "three", "four", "five", "six", "seven"}
	for i, k := range keys {
		a[k] = i
		b[keys[len(keys)-1-i]] = len(keys) - 1 - i
	}
	e := tokens.New(tokens.O200k)
	assert.Equal(t, e.Value(a), e.Value(b))
	for i := 0; i < 20; i++ {
		assert.Equal(t, e.Value(v), e.Value(nested()))
	}
	// Scalars and fallbacks.
	for _, x := range []any{nil, "s", 3.25, true, json.RawMessage(`{"a":1}`), []int{1, 2, 3}, map[string]int{"b": 2, "a": 1}} {
		want, err := json.Marshal(x)
		require.NoError(t, err)
		assert.Equal(t, e.Text(string(want)), e.Value(x), "%#v", x)
	}
	// Unencodable values do not panic.
	assert.Positive(t, e.Value(math.NaN()))
	assert.Positive(t, e.Value(map[string]any{"ch": make(chan int)}))
	cyc := map[string]any{}
	cyc["self"] = cyc
	assert.Positive(t, e.Value(cyc))
}

// noisyPNG returns a PNG of the given size filled with random pixels, so it
// does not compress.
func noisyPNG(t testing.TB, w, h int) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	r := rand.New(rand.NewPCG(1, 2))
	for i := range img.Pix {
		img.Pix[i] = byte(r.UintN(256))
	}
	var buf bytes.Buffer
	require.NoError(t, png.Encode(&buf, img))
	return buf.Bytes()
}

func TestImageFormulas(t *testing.T) {
	tests := []struct {
		f    tokens.Family
		w, h int
		want int
	}{
		{tokens.Gemma3, 384, 384, 258},
		{tokens.Gemma3, 100, 50, 258},
		{tokens.Gemma3, 385, 200, 258},       // one 768 tile
		{tokens.Gemma3, 1024, 1024, 4 * 258}, // 2x2 tiles
		{tokens.Gemma3, 1920, 1080, 6 * 258}, // 3x2 tiles
		{tokens.O200k, 1024, 1024, 765},      // → 768x768: 4 tiles
		{tokens.O200k, 2048, 4096, 1105},     // → 1024x2048 → 768x1536: 2x3 tiles
		{tokens.O200k, 512, 512, 255},        // 1 tile
		{tokens.O200k, 100, 100, 255},
		{tokens.Claude, 1024, 1024, 1399}, // ceil(1048576/750)
		{tokens.Claude, 200, 200, 54},     // ceil(40000/750)
		{tokens.Claude, 4000, 3000, 1600}, // scaled to 1568x1176, capped
		{tokens.Claude, 0, 10, 1399},      // undecodable
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tokens.New(tt.f).Image(tt.w, tt.h), "%v %dx%d", tt.f, tt.w, tt.h)
	}
}

func TestImagePart(t *testing.T) {
	data := noisyPNG(t, 1024, 1024)
	require.Greater(t, len(data), 1<<20-100_000, "PNG should be about 1 MB")
	part := &genai.Part{InlineData: &genai.Blob{MIMEType: "image/png", Data: data}}
	assert.Equal(t, 1032, tokens.New(tokens.Gemma3).Part(part))
	assert.Equal(t, 765, tokens.New(tokens.O200k).Part(part))
	assert.Equal(t, 1399, tokens.New(tokens.Claude).Part(part))

	// Undecodable image: the family's documented constant, not the size.
	bad := &genai.Part{InlineData: &genai.Blob{MIMEType: "image/png", Data: bytes.Repeat([]byte{0x42}, 500_000)}}
	assert.Equal(t, 1032, tokens.New(tokens.Gemma3).Part(bad))
	assert.Equal(t, 765, tokens.New(tokens.O200k).Part(bad))

	// WebP headers (VP8X extended, VP8L lossless, VP8 lossy).
	vp8x := []byte("RIFF\x00\x00\x00\x00WEBPVP8X\x0a\x00\x00\x00\x00\x00\x00\x00\xff\x03\x00\xff\x03\x00")
	vp8l := append([]byte("RIFF\x00\x00\x00\x00WEBPVP8L\x00\x00\x00\x00\x2f"), 0xff, 0xc3, 0xff, 0x00, 0, 0, 0, 0, 0)
	vp8 := []byte("RIFF\x00\x00\x00\x00WEBPVP8 \x00\x00\x00\x00\x00\x00\x00\x9d\x01\x2a\x00\x04\x00\x04")
	g := tokens.New(tokens.Gemma3)
	for _, d := range [][]byte{vp8x, vp8l, vp8} {
		assert.Equal(t, 1032, g.Blob("image/webp", d), "1024x1024 webp")
	}
}

func TestBlobs(t *testing.T) {
	g := tokens.New(tokens.Gemma3)
	pdf := []byte("%PDF-1.7\n1 0 obj << /Type /Pages /Kids [2 0 R 3 0 R 4 0 R] >>\n" +
		"2 0 obj << /Type /Page >>\n3 0 obj << /Type /Page >>\n4 0 obj <</Type/Page/Parent 1 0 R>>\n")
	pdf = append(pdf, bytes.Repeat([]byte("x"), 2_000_000)...)
	assert.Equal(t, 3*258, g.Part(&genai.Part{InlineData: &genai.Blob{MIMEType: "application/pdf", Data: pdf}}))
	assert.Equal(t, 3*2250, tokens.New(tokens.Claude).Blob("application/pdf", pdf))
	// A PDF whose pages cannot be counted: one page per 100 KB.
	assert.Equal(t, 3*258, g.Blob("application/pdf", make([]byte, 250_000)))

	// Audio: WAV header read; 16 kHz mono 16-bit, 10 s.
	wav := make([]byte, 44+320_000)
	copy(wav, "RIFF")
	copy(wav[8:], "WAVEfmt ")
	wav[16] = 16
	wav[20], wav[22] = 1, 1
	wav[24], wav[25] = 0x80, 0x3e // 16000 Hz
	wav[28], wav[29] = 0x00, 0x7d // 32000 B/s
	copy(wav[36:], "data")
	wav[40], wav[41], wav[42] = 0x00, 0xe2, 0x04 // 320000
	assert.Equal(t, 321, g.Blob("audio/wav", wav))
	assert.Equal(t, 32*10+1, g.Blob("audio/mpeg", make([]byte, 160_000)))
	assert.Equal(t, 263+1, g.Blob("video/mp4", make([]byte, 125_000)))

	// Text-like blobs count as text; unknown blobs are a constant.
	assert.Equal(t, g.Text(`{"a":"b"}`), g.Blob("application/json; charset=utf-8", []byte(`{"a":"b"}`)))
	assert.Equal(t, tokens.OtherBlobTokens, g.Blob("application/octet-stream", make([]byte, 1<<20)))
	assert.Equal(t, 0, g.Blob("application/octet-stream", nil))

	// File references are constants.
	assert.Equal(t, 1032, g.Part(&genai.Part{FileData: &genai.FileData{FileURI: "gs://b/x.png", MIMEType: "image/png"}}))
	assert.Equal(t, 4*258, g.Part(&genai.Part{FileData: &genai.FileData{FileURI: "gs://b/x.pdf", MIMEType: "application/pdf"}}))
	assert.Equal(t, tokens.FileRefTextTokens, g.FileRef(""))
}

func TestNilSafety(t *testing.T) {
	for _, f := range families {
		e := tokens.New(f)
		assert.NotPanics(t, func() {
			assert.Equal(t, 0, e.Part(nil))
			assert.Equal(t, 0, e.Content(nil))
			assert.Equal(t, 0, e.Tools(nil))
			assert.Equal(t, 0, e.Tools([]*genai.Tool{nil, {}}))
			assert.Equal(t, 0, e.Part(&genai.Part{}))
			assert.Equal(t, e.Framing(), e.Content(&genai.Content{}))
			assert.Equal(t, e.Framing(), e.Content(&genai.Content{Parts: []*genai.Part{nil}}))
			e.Part(&genai.Part{FunctionCall: &genai.FunctionCall{}})
			e.Part(&genai.Part{FunctionResponse: &genai.FunctionResponse{Parts: []*genai.FunctionResponsePart{nil, {}}}})
			e.Part(&genai.Part{InlineData: &genai.Blob{}})
			e.Part(&genai.Part{FileData: &genai.FileData{}})
			e.Part(&genai.Part{ExecutableCode: &genai.ExecutableCode{}, CodeExecutionResult: &genai.CodeExecutionResult{}})
			e.Part(&genai.Part{ToolCall: &genai.ToolCall{}, ToolResponse: &genai.ToolResponse{}})
			e.Tools([]*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{nil, {}, {Parameters: &genai.Schema{Properties: map[string]*genai.Schema{"x": nil}}}}}})
			e.Value(nil)
			e.Blob("image/png", nil)
			e.Blob("image/webp", []byte("RIFF"))
			e.Blob("audio/wav", []byte("RIFF\xff\xff\xff\xffWAVEdata\xff\xff\xff\xff"))
			for _, s := range []string{"\xff\xfe\xfd", "a\xc3", "\xe4\xb8", "\xf0\x9f\x98", "\x00\x01\x02", strings.Repeat("\xe4", 100)} {
				assert.Positive(t, e.Text(s))
				e.Value(s)
			}
		})
	}
}

func TestPartsAndContent(t *testing.T) {
	e := tokens.New(tokens.O200k)
	args := map[string]any{"city": "Paris", "days": 3.0}
	argsJSON, _ := json.Marshal(args)
	call := &genai.Part{FunctionCall: &genai.FunctionCall{Name: "get_weather", Args: args}}
	assert.Equal(t, tokens.CallOverhead+e.Text("get_weather")+e.Text(string(argsJSON)), e.Part(call))

	resp := map[string]any{"temp": 21.5, "sky": "clear"}
	respJSON, _ := json.Marshal(resp)
	rp := &genai.Part{FunctionResponse: &genai.FunctionResponse{Name: "get_weather", Response: resp}}
	assert.Equal(t, tokens.CallOverhead+e.Text("get_weather")+e.Text(string(respJSON)), e.Part(rp))

	text := &genai.Part{Text: "Hello there, how are you?"}
	thought := &genai.Part{Text: "Let me think.", Thought: true, ThoughtSignature: bytes.Repeat([]byte{1}, 1000)}
	code := &genai.Part{ExecutableCode: &genai.ExecutableCode{Code: "print(1)", Language: genai.LanguagePython}}
	c := genai.NewContentFromParts([]*genai.Part{text, thought, call, rp, code}, genai.RoleModel)
	want := e.Framing() + e.Part(text) + e.Part(thought) + e.Part(call) + e.Part(rp) + e.Part(code)
	assert.Equal(t, want, e.Content(c))
	assert.Equal(t, e.Text("Let me think."), e.Part(thought))
	assert.Equal(t, 2*want, e.Contents([]*genai.Content{c, nil, c}))
	assert.Equal(t, 4, tokens.New(tokens.O200k).Framing())
	assert.Equal(t, 5, tokens.New(tokens.Gemma3).Framing())
}

func TestTools(t *testing.T) {
	e := tokens.New(tokens.O200k)
	decl := &genai.FunctionDeclaration{
		Name:        "search_docs",
		Description: "Search the documentation and return matching passages.",
		Parameters: &genai.Schema{
			Type: genai.TypeObject,
			Properties: map[string]*genai.Schema{
				"query": {Type: genai.TypeString, Description: "Full-text query."},
				"limit": {Type: genai.TypeInteger, Description: "Maximum results."},
			},
			Required: []string{"query"},
		},
	}
	want := `{"name":"search_docs","description":"Search the documentation and return matching passages.",` +
		`"parameters":{"type":"object","properties":{"limit":{"type":"integer","description":"Maximum results."},` +
		`"query":{"type":"string","description":"Full-text query."}},"required":["query"]}}`
	assert.Equal(t, tokens.FunctionDeclOverhead+e.Text(want), e.Tools([]*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{decl}}}))

	// ParametersJsonSchema counts as its compact JSON.
	js := map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}}
	decl2 := &genai.FunctionDeclaration{Name: "f", ParametersJsonSchema: js}
	want2 := `{"name":"f","parameters":{"properties":{"q":{"type":"string"}},"type":"object"}}`
	assert.Equal(t, tokens.FunctionDeclOverhead+e.Text(want2), e.Tools([]*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{decl2}}}))

	// Built-in tools are a documented constant each.
	builtin := []*genai.Tool{{GoogleSearch: &genai.GoogleSearch{}}, {CodeExecution: &genai.ToolCodeExecution{}, URLContext: &genai.URLContext{}}}
	assert.Equal(t, 3*tokens.BuiltinToolTokens, e.Tools(builtin))
}

func TestConcurrentUse(t *testing.T) {
	e := tokens.New(tokens.Gemma3)
	v := nested()
	want := e.Value(v)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 200; j++ {
				if got := e.Value(v); got != want {
					t.Errorf("Value = %d, want %d", got, want)
					return
				}
				e.Text("concurrent text 123")
			}
		}()
	}
	wg.Wait()
}

func TestTextDoesNotAllocate(t *testing.T) {
	e := tokens.New(tokens.O200k)
	s := strings.Repeat("Hello, wörld! 你好 12345 camelCaseWord\n\t  ", 50)
	assert.Zero(t, testing.AllocsPerRun(100, func() { e.Text(s) }))
	m := map[string]any{"a": []any{"x", 1.0, true}, "b": map[string]any{"c": "d"}}
	e.Value(m)
	// The JSON writer is pooled; under the race detector sync.Pool drops
	// pooled values at random, so the count is checked without it (make
	// test runs this package's allocation tests both ways).
	if !raceEnabled {
		assert.LessOrEqual(t, testing.AllocsPerRun(100, func() { e.Value(m) }), 1.0)
	}
}

func FuzzText(f *testing.F) {
	for _, s := range []string{"", "hello world", "HTTPServer2Go", "你好，世界", "\xff\xfe", "a/b+c==", "  \n\n\t|--|"} {
		f.Add(s)
	}
	e := tokens.New(tokens.Gemma3)
	f.Fuzz(func(t *testing.T, s string) {
		n := e.Text(s)
		if (s == "") != (n == 0) || n < 0 {
			t.Fatalf("Text(%q) = %d", s, n)
		}
		if b := e.Bytes([]byte(s)); b != n {
			t.Fatalf("Bytes(%q) = %d, Text = %d", s, b, n)
		}
	})
}
