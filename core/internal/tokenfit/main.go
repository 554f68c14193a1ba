// Command tokenfit fits the feature weights of internal/tokens against exact
// tokenizer counts and writes them, with a held-out error report. It runs
// from the core module's directory (cd core), where the paths below are:
//
//	go run ./internal/tokenfit            # fit, write weights and report
//	go run ./internal/tokenfit -manifest chunks.json   # chunk list for gemma3/count.mjs
//	TOKENFIT_WORST=prose_fr go run ./internal/tokenfit # also list that type's held-out texts, worst first ("*": all)
//
// Inputs: the corpus in internal/tokens/testdata/corpus (split into chunks by
// internal/tokenfit/corpus), exact o200k_base counts from
// github.com/tiktoken-go/tokenizer, and Gemma-3 counts from
// internal/tokens/testdata/gemma3_counts.json (made by gemma3/count.mjs).
//
// The fit minimises the sum of squared relative errors over the fit split,
// sum_i t_i ((x_i·w − y_i)/y_i)², where t_i gives every content type the
// same total weight, with w ≥ 0 (non-negative least squares by
// cyclic coordinate descent on the normal equations) plus a weak ridge pull
// toward prior weights, so that features absent from the corpus (Hangul, for
// instance) keep a sensible value. Everything is deterministic: the same
// corpus gives the same weights files byte for byte.
package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tiktoken-go/tokenizer"

	"github.com/adk-contextguard/contextguard/core/internal/tokenfit/corpus"
	"github.com/adk-contextguard/contextguard/core/internal/tokens"
)

// prior holds the weights the ridge term pulls toward: rough per-feature
// token costs that hold for most BPE tokenizers.
var prior = map[string]float64{
	"word1_2": 1, "word3_5": 1, "word6_8": 1.2, "word9_12": 1.8, "word13p": 2.5, "word_extra": 0.3,
	"digit": 0.3, "digit_group3": 1, "punct": 0.7, "punct_run": 0.3, "space_run": 1,
	"newline_run": 1, "tab": 0.5, "han": 1, "kana": 1, "hangul": 1, "cjk_punct": 1,
	"other_letter": 0.5, "other_run": 1, "uni_punct": 1, "symbol": 1.5, "blob": 0.6,
	"hex": 0.6, "ctrl": 1,
	// Runes that byte-pair vocabularies mostly lack: split into two to four
	// byte tokens.
	"han_rare": 3.5, "astral": 2.5, "combining": 1,
	// Counted in bytes.
	"private": 1,
	// Already in tokens (the run tables give the o200k cost).
	"box_tokens": 1, "punct_long": 1, "punct_alt": 0.5,
	// A split ideograph or kana costs a byte token more than a whole one.
	"cjk_split": 1, "kana_solo": 0.5, "elision": 0.5, "tab_punct": 0.5,
	// A word without its leading space may split once more.
	"newline_word": 0.3,
	// "_word" is often one token with its underscore.
	"snake": 0.2, "snake_upper": 0.5,
	// A French verb ending split from its stem.
	"verb_end": 0.5,
	// The contraction is part of its word's token, or one more.
	"contraction": 0.3,
	// Circumflexes, cedillas and the like split words more than é, è, à.
	"accent_rare": 0.3,
}

// minTokens is the least exact count of a text whose error is reported:
// the accuracy bounds are about texts of at least 20 tokens.
const minTokens = 20

// ridge is the strength of the pull toward prior, in units of one chunk's
// squared relative error.
const ridge = 0.5

type sample struct {
	c corpus.Chunk
	x tokens.Features
	y float64 // exact token count
}

type weightsFile struct {
	Family    string             `json:"family"`
	Tokenizer string             `json:"tokenizer"`
	Framing   float64            `json:"framing_per_message"`
	Weights   map[string]float64 `json:"weights"`
}

type gemmaCounts struct {
	Tokenizer string         `json:"tokenizer"`
	Framing   float64        `json:"framing_per_message"`
	Counts    map[string]int `json:"counts"`
}

func main() {
	dir := flag.String("dir", "internal/tokens", "the internal/tokens package directory (run from the core module's directory, core/)")
	manifest := flag.String("manifest", "", "write the chunk list (key, file, start, end) as JSON to this file and exit")
	hanPairs := flag.Bool("hanpairs", false, "write hanpairs.bin (the CJK pair and split tables, from the o200k_base vocabulary) and exit")
	real := flag.Bool("real", false, "run real tools (go, git, ls, find, grep, tree, ps, df) and rewrite the corpus files real_*.out.txt first")
	flag.Parse()
	if *real {
		writeRealCorpus(*dir)
	}
	if *hanPairs {
		if err := os.WriteFile(filepath.Join(*dir, "hanpairs.bin"), hanPairTable(), 0o644); err != nil {
			log.Fatal(err)
		}
		return
	}
	if cur, err := os.ReadFile(filepath.Join(*dir, "hanpairs.bin")); err != nil || !bytes.Equal(cur, hanPairTable()) {
		log.Fatal("hanpairs.bin is missing or stale: run go run ./internal/tokenfit -hanpairs first")
	}
	chunks, err := corpus.Load(filepath.Join(*dir, "testdata", "corpus"))
	if err != nil {
		log.Fatal(err)
	}
	// The real agent conversations: read in place, never copied.
	traceDir := filepath.Join(*dir, "..", "..", "..", corpus.TracesDir) // dir is in core/
	traces, err := corpus.LoadTraces(traceDir)
	if err != nil || len(traces) == 0 {
		log.Fatalf("no agent traces in %s (%v): the fit needs them", corpus.TracesDir, err)
	}
	chunks = append(chunks, traces...)
	if *manifest != "" {
		writeManifest(*manifest, chunks)
		return
	}
	enc, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		log.Fatal(err)
	}
	var report strings.Builder
	fmt.Fprintf(&report, "Token estimator fit report (written by go run ./internal/tokenfit; do not edit).\n")
	fmt.Fprintf(&report, "Corpus: %d chunks of %d-%d bytes; held-out split: 1 chunk in %d by hash of its key.\n",
		len(chunks), corpus.MinChunk, corpus.MaxChunk, corpus.HeldOutOneIn)
	fmt.Fprintf(&report, "Of these, %d are texts of the real agent conversations in %s (types trace_*, keyed by hash;\n"+
		"the texts are read in place and not part of the repository). Types real_* are the output of real tools\n"+
		"(go build/vet/test, git log/diff/blame, ls, find, grep, tree, ps, df, go list -json) written by -real:\n"+
		"the git parts are pinned to commit %s, the scratch module is fixed; ps, df, find/grep/ls of the working\n"+
		"tree and go list -json vary from machine to machine and commit to commit.\n",
		len(traces), corpus.TracesDir, realBase)
	fmt.Fprintf(&report, "Errors are |estimate-true|/true on held-out texts of at least %d tokens only; len/4 shown for comparison.\n\n", minTokens)

	// o200k.
	var o []sample
	for _, c := range chunks {
		n, err := enc.Count(c.Text)
		if err != nil {
			log.Fatal(err)
		}
		o = append(o, sample{c: c, x: tokens.Count(c.Text), y: float64(n)})
	}
	wo := fit(o)
	framing := o200kFraming(enc, chunks)
	write(*dir, "o200k", weightsFile{Family: "o200k", Tokenizer: "o200k_base via github.com/tiktoken-go/tokenizer v0.7.0",
		Framing: framing, Weights: named(wo)})
	fmt.Fprintf(&report, "== o200k (o200k_base, tiktoken-go v0.7.0); framing per message %.2f tokens\n", framing)
	table(&report, o, wo)

	// Gemma 3.
	gpath := filepath.Join(*dir, "testdata", "gemma3_counts.json")
	if data, err := os.ReadFile(gpath); err == nil {
		var gc gemmaCounts
		if err := json.Unmarshal(data, &gc); err != nil {
			log.Fatal(err)
		}
		var g []sample
		for _, s := range o {
			n, ok := gc.Counts[s.c.Key()]
			if !ok {
				log.Fatalf("gemma3 counts lack chunk %s: re-run internal/tokenfit/gemma3/count.mjs", s.c.Key())
			}
			g = append(g, sample{c: s.c, x: s.x, y: float64(n)})
		}
		wg := fit(g)
		write(*dir, "gemma3", weightsFile{Family: "gemma3", Tokenizer: gc.Tokenizer, Framing: gc.Framing, Weights: named(wg)})
		fmt.Fprintf(&report, "\n== gemma3 (%s); framing per message %.2f tokens\n", gc.Tokenizer, gc.Framing)
		table(&report, g, wg)
	} else {
		log.Printf("no %s: Gemma-3 weights not refitted", gpath)
	}
	fmt.Fprintf(&report, "\nFitted weights are in weights_o200k.json and weights_gemma3.json.\n")
	if err := os.WriteFile(filepath.Join(*dir, "testdata", "fit_report.txt"), []byte(report.String()), 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Print(report.String())
}

func named(w []float64) map[string]float64 {
	m := make(map[string]float64, len(w))
	for i, name := range tokens.FeatureNames {
		m[name] = math.Round(w[i]*1e5) / 1e5
	}
	return m
}

func write(dir, family string, wf weightsFile) {
	wf.Framing = math.Round(wf.Framing*100) / 100
	b, err := json.MarshalIndent(wf, "", "  ")
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "weights_"+family+".json"), append(b, '\n'), 0o644); err != nil {
		log.Fatal(err)
	}
}

// fit solves the ridge-regularised non-negative least-squares problem on
// the fit split.
func fit(samples []sample) []float64 {
	const n = tokens.NumFeatures
	var a [n][n]float64
	var b [n]float64
	// Each content type gets the same total weight, so that small types
	// (CJK prose) count as much as large ones.
	perType := map[string]float64{}
	fitN := 0.0
	for _, s := range samples {
		if !s.c.HeldOut && s.y > 0 {
			perType[s.c.Type]++
			fitN++
		}
	}
	for _, s := range samples {
		if s.c.HeldOut || s.y == 0 {
			continue
		}
		tw := math.Sqrt(fitN / float64(len(perType)) / perType[s.c.Type])
		inv := 1 / s.y
		for j := 0; j < n; j++ {
			xj := float64(s.x[j]) * inv
			if xj == 0 {
				continue
			}
			b[j] += tw * xj // x_j/y · y/y
			for k := 0; k < n; k++ {
				a[j][k] += tw * xj * float64(s.x[k]) * inv
			}
		}
	}
	for j, name := range tokens.FeatureNames {
		a[j][j] += ridge
		b[j] += ridge * prior[name]
	}
	am := make([][]float64, n)
	for j := range am {
		am[j] = a[j][:]
	}
	return nnls(am, b[:])
}

// nnls minimises w'Aw − 2b'w subject to w ≥ 0 for a symmetric positive
// definite A (the normal equations), by the Lawson–Hanson active-set method.
func nnls(a [][]float64, b []float64) []float64 {
	n := len(b)
	w := make([]float64, n)
	passive := make([]bool, n)
	for iter := 0; iter < 10*n; iter++ {
		// Gradient (negated): b − A w.
		best, bestG := -1, 1e-10
		for j := 0; j < n; j++ {
			if passive[j] {
				continue
			}
			g := b[j]
			for k := 0; k < n; k++ {
				g -= a[j][k] * w[k]
			}
			if g > bestG {
				best, bestG = j, g
			}
		}
		if best < 0 {
			break
		}
		passive[best] = true
		for {
			z := solvePassive(a, b, passive)
			alpha := 1.0
			feasible := true
			for j := 0; j < n; j++ {
				if passive[j] && z[j] <= 0 {
					feasible = false
					if d := w[j] - z[j]; d > 0 {
						alpha = math.Min(alpha, w[j]/d)
					}
				}
			}
			if feasible {
				copy(w, z)
				break
			}
			for j := 0; j < n; j++ {
				w[j] += alpha * (z[j] - w[j])
				if passive[j] && w[j] <= 1e-12 {
					passive[j] = false
					w[j] = 0
				}
			}
		}
	}
	return w
}

// solvePassive solves A_PP z_P = b_P by Gaussian elimination with partial
// pivoting; z is zero outside P.
func solvePassive(a [][]float64, b []float64, passive []bool) []float64 {
	var idx []int
	for j, p := range passive {
		if p {
			idx = append(idx, j)
		}
	}
	m := len(idx)
	mat := make([][]float64, m)
	for r, j := range idx {
		mat[r] = make([]float64, m+1)
		for c, k := range idx {
			mat[r][c] = a[j][k]
		}
		mat[r][m] = b[j]
	}
	for c := 0; c < m; c++ {
		piv := c
		for r := c + 1; r < m; r++ {
			if math.Abs(mat[r][c]) > math.Abs(mat[piv][c]) {
				piv = r
			}
		}
		mat[c], mat[piv] = mat[piv], mat[c]
		for r := c + 1; r < m; r++ {
			f := mat[r][c] / mat[c][c]
			for k := c; k <= m; k++ {
				mat[r][k] -= f * mat[c][k]
			}
		}
	}
	z := make([]float64, len(b))
	for r := m - 1; r >= 0; r-- {
		v := mat[r][m]
		for k := r + 1; k < m; k++ {
			v -= mat[r][k] * z[idx[k]]
		}
		z[idx[r]] = v / mat[r][r]
	}
	return z
}

func estimate(w []float64, x tokens.Features) float64 {
	s := 0.0
	for i, c := range x {
		s += w[i] * float64(c)
	}
	return math.Max(1, math.Round(s))
}

type stats struct{ n, med, p90, max float64 }

func summarize(errs []float64) stats {
	if len(errs) == 0 {
		return stats{}
	}
	sort.Float64s(errs)
	q := func(p float64) float64 { return errs[int(math.Ceil(p*float64(len(errs))))-1] }
	return stats{n: float64(len(errs)), med: q(0.5), p90: q(0.9), max: errs[len(errs)-1]}
}

// table writes per-type held-out error statistics of the fitted estimator and
// of len/4.
func table(w io.Writer, samples []sample, wt []float64) {
	byType := map[string][2][]float64{}
	var all [2][]float64
	for _, s := range samples {
		if !s.c.HeldOut || s.y < minTokens {
			continue
		}
		e1 := math.Abs(estimate(wt, s.x)-s.y) / s.y
		e2 := math.Abs(math.Ceil(float64(len(s.c.Text))/4)-s.y) / s.y
		t := byType[s.c.Type]
		t[0] = append(t[0], e1)
		t[1] = append(t[1], e2)
		byType[s.c.Type] = t
		all[0] = append(all[0], e1)
		all[1] = append(all[1], e2)
	}
	types := make([]string, 0, len(byType))
	for t := range byType {
		types = append(types, t)
	}
	sort.Strings(types)
	fmt.Fprintf(w, "%-13s %4s | %7s %7s %7s | %7s %7s %7s\n", "type", "n", "median", "p90", "max", "len/4", "p90", "max")
	row := func(name string, e [2][]float64) {
		a, b := summarize(e[0]), summarize(e[1])
		fmt.Fprintf(w, "%-13s %4.0f | %6.1f%% %6.1f%% %6.1f%% | %6.1f%% %6.1f%% %6.1f%%\n", name, a.n,
			100*a.med, 100*a.p90, 100*a.max, 100*b.med, 100*b.p90, 100*b.max)
	}
	for _, t := range types {
		row(t, byType[t])
	}
	row("ALL", all)
	worst, worstP90 := "", 0.0
	for _, t := range types {
		if p := summarize(byType[t][0]).p90; p > worstP90 {
			worst, worstP90 = t, p
		}
	}
	a := summarize(all[0])
	fmt.Fprintf(w, "item 5 figures: median %.1f%% (at most 3%%), p90 %.1f%% (at most 8%%), worst kind p90 %.1f%% (%s; at most 12%%)\n",
		100*a.med, 100*a.p90, 100*worstP90, worst)
	if typ := os.Getenv("TOKENFIT_WORST"); typ != "" {
		// Diagnostics: the held-out texts of one type, worst first.
		var rows []sample
		for _, s := range samples {
			if s.c.HeldOut && s.y >= minTokens && (s.c.Type == typ || typ == "*") {
				rows = append(rows, s)
			}
		}
		rel := func(s sample) float64 { return (estimate(wt, s.x) - s.y) / s.y }
		sort.Slice(rows, func(i, j int) bool { return math.Abs(rel(rows[i])) > math.Abs(rel(rows[j])) })
		for _, s := range rows {
			fmt.Fprintf(os.Stderr, "%+6.1f%% %5.0f %s %s %q\n", 100*rel(s), s.y, s.c.Type, s.c.Key(), head(s.c.Text, 100))
		}
	}
	if os.Getenv("TOKENFIT_BIAS") != "" {
		bias := map[string][]float64{}
		for _, s := range samples {
			bias[s.c.Type] = append(bias[s.c.Type], (estimate(wt, s.x)-s.y)/s.y)
		}
		for _, t := range types {
			b := bias[t]
			sort.Float64s(b)
			fmt.Fprintf(os.Stderr, "bias %-13s median %+.1f%%\n", t, 100*b[len(b)/2])
		}
	}
}

// o200kFraming measures the tokens OpenAI's chat format adds per message:
// <|im_start|>{role}<|im_sep|>{content}<|im_end|>, the three markers being
// one special token each. It renders every chunk as a message for each role
// and averages tokens(rendered) − tokens(content), which also captures
// merges of the role name and of the content's edges.
func o200kFraming(enc tokenizer.Codec, chunks []corpus.Chunk) float64 {
	total, n := 0.0, 0
	for i, c := range chunks {
		if i%7 != 0 {
			continue
		}
		content, _ := enc.Count(c.Text)
		for _, role := range []string{"system", "user", "assistant", "tool"} {
			// Special tokens are counted as 1 each; the text between them is
			// tokenized as one piece.
			inner, _ := enc.Count(role)
			total += float64(3+inner+content) - float64(content)
			n++
		}
	}
	return total / float64(n)
}

func writeManifest(path string, chunks []corpus.Chunk) {
	// Chunks of the agent traces carry their text (the manifest is a
	// temporary file, never committed); corpus chunks their offsets.
	type entry struct {
		Key   string `json:"key"`
		File  string `json:"file,omitempty"`
		Start int    `json:"start"`
		End   int    `json:"end"`
		Text  string `json:"text,omitempty"`
	}
	out := make([]entry, len(chunks))
	for i, c := range chunks {
		if c.ID != "" {
			out[i] = entry{Key: c.Key(), Text: c.Text}
		} else {
			out[i] = entry{c.Key(), c.File, c.Start, c.End, ""}
		}
	}
	b, _ := json.Marshal(out)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		log.Fatal(err)
	}
}

// hanPairTable builds the CJK tables of internal/tokens (hanpairs.bin; see
// hanpairs.go there) from the o200k_base vocabulary: the Han pair bit set
// (every pair of adjacent ideographs inside a token made only of
// ideographs), the Han and kana split bit sets (runes that are not a token
// alone) and the kana pair bit set (every pair of adjacent kana inside a
// token made only of kana).
func hanPairTable() []byte {
	enc, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		log.Fatal(err)
	}
	pairs := make([]uint64, tokens.HanPairBits/64)
	kanaN := tokens.KanaLast - tokens.KanaFirst + 1
	kanaPairs := make([]uint64, kanaN*kanaN/64)
	set := func(t []uint64, i uint32) { t[i>>6] |= 1 << (i & 63) }
	isKana := func(r rune) bool { return r >= tokens.KanaFirst && r <= tokens.KanaLast }
	for id := uint(0); id < 200019; id++ {
		s, err := enc.Decode([]uint{id})
		if err != nil {
			continue
		}
		rs := []rune(s)
		if len(rs) < 2 {
			continue
		}
		han, kana := true, true
		for _, r := range rs {
			han = han && unicode.Is(unicode.Han, r)
			kana = kana && isKana(r)
		}
		for i := 0; i+1 < len(rs); i++ {
			if han {
				set(pairs, tokens.HanPairHash(rs[i], rs[i+1]))
			}
			if kana {
				set(kanaPairs, tokens.KanaPairIndex(rs[i], rs[i+1]))
			}
		}
	}
	split := func(first, last rune) []uint64 {
		t := make([]uint64, (last-first+1)/64)
		for r := first; r <= last; r++ {
			if n, err := enc.Count(string(r)); err != nil || n > 1 {
				set(t, uint32(r-first))
			}
		}
		return t
	}
	var out []byte
	for _, t := range [][]uint64{pairs, split(tokens.HanSplitFirst, tokens.HanSplitLast), split(tokens.KanaFirst, tokens.KanaLast), kanaPairs} {
		for _, w := range t {
			out = binary.LittleEndian.AppendUint64(out, w)
		}
	}
	if len(out) != tokens.HanTablesSize {
		log.Fatalf("CJK tables: %d bytes, want %d", len(out), tokens.HanTablesSize)
	}
	return out
}

// head returns the first n bytes of s, or fewer at a rune boundary.
func head(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
