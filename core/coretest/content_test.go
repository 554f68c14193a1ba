package coretest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image/png"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGenerate_DeterministicAndSized(t *testing.T) {
	for _, kind := range Kinds() {
		for _, size := range []int{1_000, 7_777, 50_000} {
			a := generate(kind, size, 42) // uncached
			b := Generate(kind, size, 42)
			require.Equal(t, a, b, "%s/%d not deterministic", kind, size)
			assert.InEpsilon(t, size, len(a), 0.05, "%s/%d: got %d bytes", kind, size, len(a))
			assert.NotEqual(t, a, Generate(kind, size, 43), "%s: seed must matter", kind)
		}
	}
	assert.Empty(t, Generate(KindLogLines, 0, 1))
	assert.Empty(t, Generate(KindLogLines, -5, 1))
	assert.NotEmpty(t, Generate(Kind("nope"), 100, 1), "unknown kind falls back to prose")
}

func TestGenerate_KindShapes(t *testing.T) {
	for _, size := range []int{60, 500, 3_000, 40_000} {
		for _, kind := range []Kind{KindPrettyJSON, KindCompactJSON} {
			var v []any
			require.NoError(t, json.Unmarshal([]byte(Generate(kind, size, 7)), &v), "%s/%d must parse", kind, size)
		}
	}
	pretty := Generate(KindPrettyJSON, 5_000, 1)
	assert.Contains(t, pretty, "\n    \"")
	assert.NotContains(t, Generate(KindCompactJSON, 5_000, 1), "\n")

	_, err := base64.StdEncoding.DecodeString(Generate(KindBase64, 4_000, 1))
	assert.NoError(t, err)

	shapes := map[Kind]string{
		KindYAML:            "apiVersion: apps/v1",
		KindKubectlTable:    "NAME ",
		KindKubectlDescribe: "Namespace:",
		KindMarkdownTable:   "|---|",
		KindLogLines:        "trace_id=",
		KindGoCode:          "func (s *Server)",
		KindPrometheus:      "{namespace=",
		KindSQLRows:         "-------+",
		KindGrep:            ".go:",
		KindTestOutput:      "=== RUN",
		KindProseSpanish:    " de",
		KindProseChinese:    "。",
	}
	for kind, want := range shapes {
		assert.Contains(t, Generate(kind, 3_000, 5), want, "%s", kind)
	}
	assert.True(t, strings.Count(Generate(KindProseEnglish, 3_000, 5), ". ") > 10)
}

func TestPNG(t *testing.T) {
	img := PNG(320, 200, 3)
	cfg, err := png.DecodeConfig(bytes.NewReader(img))
	require.NoError(t, err)
	assert.Equal(t, 320, cfg.Width)
	assert.Equal(t, 200, cfg.Height)
	assert.Greater(t, len(img), 320*200, "noisy image should not compress well")
	assert.Equal(t, img, PNG(320, 200, 3))

	_, err = png.Decode(bytes.NewReader(PNG(0, -1, 1)))
	assert.NoError(t, err)

	for _, size := range []int{10_000, 100_000} {
		b := PNGOfSize(size, 1)
		assert.InEpsilon(t, size, len(b), 0.15, "PNGOfSize(%d) = %d bytes", size, len(b))
		_, err := png.Decode(bytes.NewReader(b))
		assert.NoError(t, err)
	}
}

func TestPDF(t *testing.T) {
	b := PDF(10_000, 1)
	assert.Len(t, b, 10_000)
	assert.True(t, bytes.HasPrefix(b, []byte("%PDF-")))
	assert.True(t, bytes.HasSuffix(b, []byte("%%EOF\n")))
	assert.Equal(t, b, PDF(10_000, 1))
}
