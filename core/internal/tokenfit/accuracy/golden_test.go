package accuracy_test

import (
	"bufio"
	"flag"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/adk-contextguard/contextguard/core/coretest"
	"github.com/adk-contextguard/contextguard/core/internal/tokenfit/corpus"
	"github.com/adk-contextguard/contextguard/core/internal/tokens"
)

// goldenFile pins the estimates of every text below, so that a change to the
// counter that changes any count, even by one, fails TestEstimatesGolden.
// Regenerate it with -update-golden only for a change meant to move the
// estimates (a new fit, a new feature), never for an optimisation.
const goldenFile = "testdata/estimates_golden.txt"

var updateGolden = flag.Bool("update-golden", false, "rewrite "+goldenFile+" from the current estimator")

// goldenText is one pinned text: a stable key and the text.
type goldenText struct {
	key  string
	text string
}

// goldenTexts returns the pinned texts: every corpus chunk and whole corpus
// file, the generated classes, the probe generator and contextguardtest's
// content kinds at several sizes and seeds, and random fragment soups.
func goldenTexts(t *testing.T) []goldenText {
	t.Helper()
	var out []goldenText
	chunks, err := corpus.Load("testdata/corpus")
	require.NoError(t, err)
	require.NotEmpty(t, chunks)
	files := map[string]*strings.Builder{}
	var names []string
	for _, c := range chunks {
		out = append(out, goldenText{"chunk " + c.Key(), c.Text})
		b := files[c.File]
		if b == nil {
			b = &strings.Builder{}
			files[c.File] = b
			names = append(names, c.File)
		}
		b.WriteString(c.Text)
	}
	for _, name := range names {
		out = append(out, goldenText{"file " + name, files[name].String()})
	}
	for _, class := range generatedClasses {
		for seed := uint64(1); seed <= 3; seed++ {
			g := &classGen{r: rand.New(rand.NewPCG(seed, 0xc1a55))}
			out = append(out, goldenText{fmt.Sprintf("class %s %d", class, seed), g.gen(class)})
		}
	}
	for _, kind := range probeKinds {
		for _, seed := range []uint64{11, 12} {
			p := &probe{r: rand.New(rand.NewPCG(seed, 0x5eed))}
			out = append(out, goldenText{fmt.Sprintf("probe %s %d", kind, seed), p.gen(kind, 8192)})
		}
	}
	for _, kind := range coretest.Kinds() {
		for seed := int64(0); seed < 3; seed++ {
			for _, size := range []int{1, 17, 300, 5000, 40000} {
				out = append(out, goldenText{fmt.Sprintf("kind %s %d %d", kind, seed, size),
					coretest.Generate(kind, size, seed)})
			}
		}
	}
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 2000 {
		out = append(out, goldenText{fmt.Sprintf("soup %d", i), goldenSoup(r)})
	}
	return out
}

// goldenSoup is a random text of the byte classes the counter tells apart.
func goldenSoup(r *rand.Rand) string {
	pieces := []string{"a", "Word", "HTTPServer", "camelCase", "snake_case", "x79b1", "0", "2024", "/", "+",
		" ", "  ", "\n", "\r\n", "\t", "|", "-", "----", "=-=-=-=-", "'s", "l'homme", "'", "\"",
		"é", "ÉCOLE", "naïve", "parlait", "chantèrent", "你好", "世界", "の", "カタカナ", "。", "한", "α", "Ж",
		"\u2014", "🌍", "─────", "\u0301", "", "𠀀", "𝐀", "\x00", "\xff", "\xe4\xb8",
		"deadbeef0123", "aGVsbG8gd29ybGQhIHRoaXMgaXMgYmFzZTY0"}
	var b strings.Builder
	for range r.IntN(200) {
		p := pieces[r.IntN(len(pieces))]
		if r.IntN(8) == 0 {
			p = strings.Repeat(p, 2+r.IntN(10))
		}
		b.WriteString(p)
	}
	return b.String()
}

// goldenLine is the pinned line of one text: its estimate for each family
// by Text, the O200k estimate by Value of the text as a JSON string, and an
// FNV-1a hash of its feature vector.
func goldenLine(g goldenText) string {
	h := fnv.New64a()
	f := tokens.Count(g.text)
	for _, c := range f {
		fmt.Fprintf(h, "%d,", c)
	}
	return fmt.Sprintf("%s\t%d\t%d\t%d\t%d\t%016x", g.key,
		tokens.New(tokens.O200k).Text(g.text), tokens.New(tokens.Gemma3).Text(g.text),
		tokens.New(tokens.Claude).Text(g.text), tokens.New(tokens.O200k).Value(g.text), h.Sum64())
}

// TestEstimatesGolden checks that every pinned text has the estimates and
// the feature vector recorded in goldenFile.
func TestEstimatesGolden(t *testing.T) {
	texts := goldenTexts(t)
	if *updateGolden {
		var b strings.Builder
		b.WriteString("# key\to200k\tgemma3\tclaude\to200k Value\tfeature hash\n")
		for _, g := range texts {
			b.WriteString(goldenLine(g) + "\n")
		}
		require.NoError(t, os.WriteFile(goldenFile, []byte(b.String()), 0o644))
		return
	}
	fh, err := os.Open(goldenFile)
	require.NoError(t, err)
	defer fh.Close()
	want := map[string]string{}
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		key, _, _ := strings.Cut(line, "\t")
		want[key] = line
	}
	require.NoError(t, sc.Err())
	require.Len(t, want, len(texts), "the golden file pins a different set of texts")
	for _, g := range texts {
		assert.Equal(t, want[g.key], goldenLine(g), "estimates of %q changed", g.key)
	}
}
