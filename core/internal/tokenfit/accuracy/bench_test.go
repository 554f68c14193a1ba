package accuracy_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

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

// Sizes of BenchmarkEstimatorScaling: the time per byte of a text of
// scaleLarge bytes is compared with that of its scaleLarge/scaleSmall
// pieces of scaleSmall bytes, each estimated apart, so that both sides read
// the same bytes from the same level of memory (one small text estimated
// again and again would be read from the cache, the large one from memory,
// which on a machine shared with others costs up to twice as much per
// byte, whatever the counter does).
const (
	scaleSmall = 64 << 10
	scaleLarge = 4 << 20
)

// scaleClass is a class of text of BenchmarkEstimatorScaling: gen returns
// a text of about n bytes (at least n), drawn from r.
type scaleClass struct {
	name string
	gen  func(r *rand.Rand, n int) string
}

// scaleClasses are the classes of BenchmarkEstimatorScaling: each hostile
// class of TestEstimatorHostileClasses, as drawn (texts of a few KB, each
// of one or two generators, laid end to end) and as one line (the same
// with every space, tab and newline taken out, so that its runs are as long
// as the text), and the single runs a tool result may be made of: one
// character repeated, base64 and hex without newlines, minified code on one
// line, a hex dump.
func scaleClasses() []scaleClass {
	var out []scaleClass
	for _, c := range hostileClasses {
		draw := func(r *rand.Rand, n int) string {
			var b strings.Builder
			for b.Len() < n {
				b.WriteString(hostileText(r, c, 800+r.IntN(8000)))
			}
			return b.String()
		}
		out = append(out,
			scaleClass{c.name, draw},
			scaleClass{c.name + "_line", func(r *rand.Rand, n int) string {
				var b strings.Builder
				for b.Len() < n {
					b.WriteString(strings.NewReplacer(" ", "", "\n", "", "\t", "").Replace(draw(r, n-b.Len())))
				}
				return b.String()
			}},
		)
	}
	repeat := func(s string) func(*rand.Rand, int) string {
		return func(_ *rand.Rand, n int) string { return strings.Repeat(s, (n+len(s)-1)/len(s)) }
	}
	randomBytes := func(r *rand.Rand, n int) []byte {
		raw := make([]byte, n)
		for i := range raw {
			raw[i] = byte(r.IntN(256))
		}
		return raw
	}
	minified := hostileClasses[slices.IndexFunc(hostileClasses, func(c hostileClass) bool { return c.name == "minified_code" })]
	hex := hostileClasses[slices.IndexFunc(hostileClasses, func(c hostileClass) bool { return c.name == "hex_base64" })]
	return append(out,
		scaleClass{"char_lower", repeat("a")},
		scaleClass{"char_upper", repeat("Q")},
		scaleClass{"char_digit", repeat("7")},
		scaleClass{"char_punct", repeat("=")},
		scaleClass{"char_space", repeat(" ")},
		scaleClass{"char_newline", repeat("\n")},
		scaleClass{"char_accent", repeat("é")},
		scaleClass{"char_han", repeat("字")},
		scaleClass{"char_emoji", repeat("\U0001F600")},
		scaleClass{"letter_runs_line", func(r *rand.Rand, n int) string {
			// Runs of one letter between short words, lower case or
			// capitals, without a space: a word is cut before each run.
			var b strings.Builder
			for b.Len() < n {
				alpha := pickStr(r, lowerAlpha, upperAlpha)
				b.WriteString(someOf(r, alpha, 6))
				b.WriteString(strings.Repeat(string(alpha[r.IntN(26)]), 4+r.IntN(6)))
			}
			return b.String()
		}},
		scaleClass{"base64_line", func(r *rand.Rand, n int) string {
			return base64.StdEncoding.EncodeToString(randomBytes(r, n*3/4+3))
		}},
		scaleClass{"hex_line", func(r *rand.Rand, n int) string {
			return fmt.Sprintf("%x", randomBytes(r, n/2+1))
		}},
		scaleClass{"minified_line", func(r *rand.Rand, n int) string {
			var b strings.Builder
			for b.Len() < n {
				minified.gens[0](r, &b)
			}
			return b.String()
		}},
		scaleClass{"hex_dump", func(r *rand.Rand, n int) string {
			var b strings.Builder
			for b.Len() < n {
				hex.gens[0](r, &b)
			}
			return b.String()
		}},
	)
}

// BenchmarkEstimatorScaling compares, for each class of scaleClasses, the
// time per byte of Text on a text of scaleLarge bytes with that on its
// pieces of scaleSmall bytes, in CPU time, measured in the same iterations:
// the ratio metric (large/small) is about 1 for a counter linear in its
// input, whatever the machine's speed, and must stay under 2 (a counter
// that reads a run again for each word cut from it grows with the run's
// length: 35 to 110 for a 4 MB run of one letter, digit or hex before it
// was linear).
func BenchmarkEstimatorScaling(b *testing.B) {
	e := tokens.New(tokens.O200k)
	for ci, c := range scaleClasses() {
		r := rand.New(rand.NewPCG(uint64(ci), 1))
		large := c.gen(r, scaleLarge)[:scaleLarge]
		b.Run(c.name, func(b *testing.B) {
			var dSmall, dLarge time.Duration
			for b.Loop() {
				t0 := benchcpu.Process()
				for k := 0; k < scaleLarge; k += scaleSmall {
					e.Text(large[k : k+scaleSmall])
				}
				t1 := benchcpu.Process()
				e.Text(large)
				t2 := benchcpu.Process()
				dSmall, dLarge = dSmall+t1-t0, dLarge+t2-t1
			}
			perByte := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(b.N) / scaleLarge }
			b.ReportMetric(perByte(dSmall), "ns/B-64K")
			b.ReportMetric(perByte(dLarge), "ns/B-4M")
			b.ReportMetric(float64(dLarge)/float64(dSmall), "large/small")
		})
	}
}

// valueScaleClasses are the JSON values of BenchmarkEstimatorScalingValue:
// gen returns a value whose compact JSON has about n bytes.
var valueScaleClasses = []struct {
	name string
	gen  func(r *rand.Rand, n int) any
}{
	// One string of hostile lines, escaped in the JSON (newlines, quotes,
	// backslashes, control bytes).
	{"string", func(r *rand.Rand, n int) any {
		var b strings.Builder
		for b.Len() < n*3/4 {
			c := hostileClasses[r.IntN(len(hostileClasses))]
			b.WriteString(hostileText(r, c, 800+r.IntN(8000)))
		}
		return map[string]any{"output": b.String()}
	}},
	// An array of small rows, as a query tool returns.
	{"wide", func(r *rand.Rand, n int) any {
		var rows []any
		for size := 0; size < n; size += 60 {
			rows = append(rows, map[string]any{"id": float64(r.IntN(1e6)), "name": someOf(r, lowerAlpha, 12), "ok": r.IntN(2) == 0})
		}
		return rows
	}},
	// Objects nested in objects, each with a short text: far deeper than
	// the walk tracks its path from (trackDepth).
	{"deep", func(r *rand.Rand, n int) any {
		var v any = nil
		for size := 0; size < n; size += 36 {
			v = map[string]any{"text": someOf(r, lowerAlpha+" ", 12), "next": v}
		}
		return v
	}},
}

// BenchmarkEstimatorScalingValue is BenchmarkEstimatorScaling for Value:
// scaleLarge/scaleSmall values of scaleSmall bytes of JSON against one of
// scaleLarge bytes. The walk reads no value twice; what it pays per node
// grows with nesting past the writer pool's bounds (putWriter): a value
// nested a hundred thousand deep allocates its walk's stack and path anew
// on every call, and their garbage collection scans the program's live
// heap: about four times the cost per byte of values nested two thousand
// deep, which grows no faster than that heap (27 ns per byte at 1 MB, 37
// at 16 MB, on the machine it was measured on).
func BenchmarkEstimatorScalingValue(b *testing.B) {
	e := tokens.New(tokens.O200k)
	for ci, c := range valueScaleClasses {
		r := rand.New(rand.NewPCG(uint64(ci), 2))
		large := c.gen(r, scaleLarge)
		smalls := make([]any, scaleLarge/scaleSmall)
		for i := range smalls {
			smalls[i] = c.gen(r, scaleSmall)
		}
		b.Run(c.name, func(b *testing.B) {
			var dSmall, dLarge time.Duration
			for b.Loop() {
				t0 := benchcpu.Process()
				for _, v := range smalls {
					e.Value(v)
				}
				t1 := benchcpu.Process()
				e.Value(large)
				t2 := benchcpu.Process()
				dSmall, dLarge = dSmall+t1-t0, dLarge+t2-t1
			}
			perByte := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(b.N) / scaleLarge }
			b.ReportMetric(perByte(dSmall), "ns/B-64K")
			b.ReportMetric(perByte(dLarge), "ns/B-4M")
			b.ReportMetric(float64(dLarge)/float64(dSmall), "large/small")
		})
	}
}
