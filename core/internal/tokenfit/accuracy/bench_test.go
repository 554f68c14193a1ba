package accuracy_test

import (
	"bytes"
	"encoding/json"
	"image"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/coretest"
	"github.com/adk-contextguard/contextguard/core/internal/benchcpu"
	"github.com/adk-contextguard/contextguard/core/internal/tokens"
)

// benchCorpus returns up to 64 KB of each corpus content type, and all of
// them concatenated as "mixed".
func benchCorpus(b *testing.B) map[string]string {
	files, err := filepath.Glob("testdata/corpus/*.txt")
	if err != nil || len(files) == 0 {
		b.Fatal("no corpus", err)
	}
	out := map[string]string{}
	var mixed strings.Builder
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		typ, _, _ := strings.Cut(filepath.Base(f), ".")
		s := out[typ] + string(data)
		if len(s) > 64<<10 {
			s = s[:64<<10]
		}
		out[typ] = s
	}
	for _, s := range out {
		mixed.WriteString(s[:min(len(s), 16<<10)])
	}
	out["mixed"] = mixed.String()
	return out
}

func BenchmarkEstimateText(b *testing.B) {
	e := tokens.New(tokens.O200k)
	texts := benchCorpus(b)
	for _, typ := range []string{"mixed", "prose_en", "prose_es", "zh", "ja", "code_go", "json_pretty",
		"json_compact", "yaml", "md_table", "text_table", "logs", "tool_schema", "base64",
		"prose_fr", "cjk_data", "dev_output", "ids", "metrics"} {
		s := texts[typ]
		b.Run(typ, func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			b.ReportAllocs()
			cpu, n := benchcpu.Process(), 0
			for b.Loop() {
				e.Text(s)
				n++
			}
			benchcpu.Report(b, cpu, n, int64(len(s)))
		})
	}
}

func toolResult() map[string]any {
	rows := make([]any, 20)
	for i := range rows {
		rows[i] = map[string]any{"id": float64(i), "name": "item-" + strings.Repeat("x", i%7),
			"tags": []any{"alpha", "beta"}, "price": 12.5 * float64(i), "active": i%2 == 0,
			"description": "A moderately long description of the row, with punctuation; and numbers 42."}
	}
	return map[string]any{"status": "ok", "count": 20.0, "rows": rows, "next": nil}
}

func BenchmarkEstimateValue(b *testing.B) {
	e := tokens.New(tokens.O200k)
	v := toolResult()
	b.ReportAllocs()
	cpu, n := benchcpu.Process(), 0
	for b.Loop() {
		e.Value(v)
		n++
	}
	benchcpu.Report(b, cpu, n, 0)
}

func BenchmarkEstimateContent(b *testing.B) {
	e := tokens.New(tokens.Gemma3)
	texts := benchCorpus(b)
	c := &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{
		{Text: texts["prose_en"][:4000]},
		{FunctionCall: &genai.FunctionCall{Name: "query_rows", Args: map[string]any{"table": "orders", "limit": 20.0}}},
		{FunctionResponse: &genai.FunctionResponse{Name: "query_rows", Response: toolResult()}},
		{Text: texts["code_go"][:2000]},
	}}
	b.ReportAllocs()
	cpu, n := benchcpu.Process(), 0
	for b.Loop() {
		e.Content(c)
		n++
	}
	benchcpu.Report(b, cpu, n, 0)
}

// noisyPNG returns a PNG of the given size filled with random pixels, so it
// does not compress (as core/internal/tokens' own tests build theirs).
func noisyPNG(b *testing.B, w, h int) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	r := rand.New(rand.NewPCG(1, 2))
	for i := range img.Pix {
		img.Pix[i] = byte(r.UintN(256))
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

func BenchmarkEstimateImagePart(b *testing.B) {
	e := tokens.New(tokens.Gemma3)
	p := &genai.Part{InlineData: &genai.Blob{MIMEType: "image/png", Data: noisyPNG(b, 1024, 1024)}}
	b.ReportAllocs()
	for b.Loop() {
		e.Part(p)
	}
}

// BenchmarkEstimateValueKinds is Value on tool results of 40 KB of each
// generated content kind, as the guard sees them; MB/s is of the JSON.
func BenchmarkEstimateValueKinds(b *testing.B) {
	e := tokens.New(tokens.Gemma3)
	for _, kind := range coretest.Kinds() {
		v := map[string]any{"output": coretest.Generate(kind, 40_000, 1)}
		data, err := json.Marshal(v)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(string(kind), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			cpu, n := benchcpu.Process(), 0
			for b.Loop() {
				e.Value(v)
				n++
			}
			benchcpu.Report(b, cpu, n, int64(len(data)))
		})
	}
}
