// Command tokenfit fits the feature weights of internal/tokens against exact
// tokenizer counts and writes them, with a held-out error report. It runs
// from the core module's directory (cd core), where the paths below are:
//
//	go run ./internal/tokenfit            # fit, write weights and report
//	go run ./internal/tokenfit -manifest chunks.json   # chunk list for gemma3/count.mjs
//	go run ./internal/tokenfit -gemmabpe  # Gemma-3 vocabulary subset of the hostile-class test
//	go run ./internal/tokenfit -tables    # vocabulary tables of the feature counter
//	TOKENFIT_WORST=prose_fr go run ./internal/tokenfit # also list that type's held-out texts, worst first ("*": all)
//
// Inputs: the corpus in internal/tokenfit/accuracy/testdata/corpus (split
// into chunks by internal/tokenfit/corpus), exact o200k_base counts from
// github.com/tiktoken-go/tokenizer, and Gemma-3 counts from
// internal/tokenfit/accuracy/testdata/gemma3_counts.json (made by
// gemma3/count.mjs). This directory is a module of its own, never released,
// so that none of it reaches core's module zip; the repository's workspace
// (go.work) lets the commands above run from core/.
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
	"log"
	"math"
	"os"
	"path/filepath"
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
	// A pair or triple of punctuation bytes that is one token, and a byte
	// that is none of them, in long runs.
	"punct_pair": 1, "punct_mixed": 1, "punct_mixed_pair": 1, "punct_mixed_triple": 1, "punct_triple": 1,
	// A repeated letter of another script is a token.
	"other_repeat": 1,
	// Gemma 3 keeps a space before a symbol as a token of its own.
	"space_symbol": 0.5,
	// A repeated ideograph or kana is a token of its own.
	"cjk_repeat": 1,
	// A rare letter pair inside a word that is not a word is where both
	// families cut it once more (about one token each in random letters,
	// the only text that has many: the corpus has few).
	"rare_bigram": 1,
}

// familyPrior overrides prior per family for the features counted with one
// family's tables (in that family's tokens): each family's prior is 1 on its
// own table and 0 on the other's, so that where the corpus has no such text
// (runs of one letter, rare symbols) each family's estimate is its own
// table's cost.
var familyPrior = map[string]map[string]float64{
	"o200k": {"punct_long_more": 1, "punct_long_more_g": 0, "letter_run": 1, "letter_run_g": 0, "symbol_o200k": 1, "symbol_gemma": 0,
		"box_tokens": 1, "box_tokens_g": 0, "cjk_repeat_split": 1, "cjk_repeat_split_g": 0, "kana_solo_g": 0, "kana_solo2_g": 0,
		"wide_split": 1, "space_symbol_g": 0, "latin_repeat": 1, "latin_repeat_g": 0},
	"gemma3": {"punct_long_more": 0, "punct_long_more_g": 1, "letter_run": 0, "letter_run_g": 1, "symbol_o200k": 0, "symbol_gemma": 1,
		"box_tokens": 0, "box_tokens_g": 1, "cjk_repeat_split": 0, "cjk_repeat_split_g": 1, "kana_solo_g": 0.5, "kana_solo2_g": 0.5,
		"wide_split": 0, "space_symbol_g": 1, "latin_repeat": 0, "latin_repeat_g": 1},
}

// priorOf returns the prior weight of a feature for a family.
func priorOf(family, name string) float64 {
	if p, ok := familyPrior[family][name]; ok {
		return p
	}
	return prior[name]
}

// minTokens is the least exact count of a text whose error is reported:
// the accuracy bounds are about texts of at least 20 tokens.
const minTokens = 20

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
	data := flag.String("data", "internal/tokenfit/accuracy/testdata", "the fit's data directory: the corpus, the Gemma-3 counts and vocabulary subset, the fit report")
	manifest := flag.String("manifest", "", "write the chunk list (key, file, start, end) as JSON to this file and exit")
	hanPairs := flag.Bool("hanpairs", false, "write hanpairs.bin (the CJK pair and split tables, from the o200k_base vocabulary) and exit")
	gemmaSubset := flag.Bool("gemmabpe", false, "write gemma3_bpe.bz2 in -data (the Gemma-3 vocabulary subset of the hostile-class test) from the npm package of gemma3/ and exit")
	tables := flag.Bool("tables", false, "write internal/tokens/features_tables.go (punctuation pairs, run lengths, symbol costs) from the vocabularies and exit")
	real := flag.Bool("real", false, "run real tools (go, git, ls, find, grep, tree, ps, df) and rewrite the corpus files real_*.out.txt first")
	flag.Parse()
	if *gemmaSubset {
		writeGemmaSubset(*data)
		return
	}
	if *tables {
		writeTables(*dir, *data)
		return
	}
	if *real {
		writeRealCorpus(*dir, *data)
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
	chunks, err := corpus.Load(filepath.Join(*data, "corpus"))
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
	wo := fit(o, "o200k")
	framing := o200kFraming(enc, chunks)
	write(*dir, "o200k", weightsFile{Family: "o200k", Tokenizer: "o200k_base via github.com/tiktoken-go/tokenizer v0.7.0",
		Framing: framing, Weights: named(wo)})
	fmt.Fprintf(&report, "== o200k (o200k_base, tiktoken-go v0.7.0); framing per message %.2f tokens\n", framing)
	table(&report, o, wo)

	// Gemma 3.
	gpath := filepath.Join(*data, "gemma3_counts.json")
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
		wg := fit(g, "gemma3")
		write(*dir, "gemma3", weightsFile{Family: "gemma3", Tokenizer: gc.Tokenizer, Framing: gc.Framing, Weights: named(wg)})
		fmt.Fprintf(&report, "\n== gemma3 (%s); framing per message %.2f tokens\n", gc.Tokenizer, gc.Framing)
		table(&report, g, wg)
	} else {
		log.Printf("no %s: Gemma-3 weights not refitted", gpath)
	}
	fmt.Fprintf(&report, "\nFitted weights are in weights_o200k.json and weights_gemma3.json.\n")
	if err := os.WriteFile(filepath.Join(*data, "fit_report.txt"), []byte(report.String()), 0o644); err != nil {
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
