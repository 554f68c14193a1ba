// Package corpus splits the token corpus
// (internal/tokenfit/accuracy/testdata/corpus) into message-sized chunks
// and assigns each chunk to the fit or the held-out split. The split is a pure function of the corpus bytes, so the
// fit program, the accuracy test and the Gemma-3 counting script all see the
// same chunks.
package corpus

import (
	"hash/fnv"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"
)

// Chunk sizes are drawn log-uniformly from [MinChunk, MaxChunk] bytes,
// like real chat messages and tool results.
const (
	MinChunk = 200
	MaxChunk = 8192
	// HeldOutOneIn puts one chunk in HeldOutOneIn in the held-out split.
	HeldOutOneIn = 4
	// FitOnlyType is the type of text that is all in the fit split: noise
	// (random punctuation, runs of one character, random runes), which
	// teaches the fit what hostile text costs but is no content kind whose
	// accuracy the held-out report measures; internal/tokens' hostile-class
	// test checks the estimator on it instead.
	FitOnlyType = "noise"
)

// Chunk is a piece of a corpus file.
type Chunk struct {
	File    string // file name inside the corpus directory
	Type    string // content type: the file name up to the first '.'
	Start   int    // byte offset in the file
	End     int    // byte offset after the chunk
	Text    string // the chunk's text
	HeldOut bool   // whether the chunk is in the held-out split
	ID      string // if set, the chunk's key (a hash of a text that is not in the repository)
}

// Key identifies a chunk: "file:start:end", or its ID if it has one.
func (c Chunk) Key() string {
	if c.ID != "" {
		return c.ID
	}
	return c.File + ":" + itoa(c.Start) + ":" + itoa(c.End)
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}

// Load reads every *.txt file of dir and splits it into chunks, in file name
// order.
func Load(dir string) ([]Chunk, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var out []Chunk
	for _, path := range names {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		out = append(out, Split(filepath.Base(path), string(data))...)
	}
	return out, nil
}

// Split cuts the text of one file into chunks.
func Split(file, text string) []Chunk {
	typ, _, _ := strings.Cut(file, ".")
	h := fnv.New64a()
	h.Write([]byte(file))
	state := h.Sum64() | 1
	var out []Chunk
	start := 0
	for start < len(text) {
		// xorshift64: a tiny deterministic generator.
		state ^= state << 13
		state ^= state >> 7
		state ^= state << 17
		u := float64(state>>11) / float64(1<<53)
		// Small files get smaller chunks, so that every file yields at least
		// about four dozen of them.
		hi := math.Min(MaxChunk, math.Max(4*MinChunk, float64(len(text))/25))
		size := int(math.Exp(math.Log(MinChunk) + u*(math.Log(hi)-math.Log(MinChunk))))
		end := start + size
		if end >= len(text) || len(text)-end < MinChunk/2 {
			end = len(text)
		} else {
			end = cut(text, start, end)
		}
		c := Chunk{File: file, Type: typ, Start: start, End: end, Text: text[start:end]}
		hk := fnv.New32a()
		hk.Write([]byte(c.Key()))
		c.HeldOut = hk.Sum32()%HeldOutOneIn == 0 && typ != FitOnlyType
		if strings.TrimSpace(c.Text) != "" {
			out = append(out, c)
		}
		start = end
	}
	return out
}

// cut moves end back to just after a newline or a space in the second half of
// text[start:end], else to a UTF-8 boundary.
func cut(text string, start, end int) int {
	half := start + (end-start)/2
	if i := strings.LastIndexByte(text[half:end], '\n'); i >= 0 {
		return half + i + 1
	}
	if i := strings.LastIndexByte(text[half:end], ' '); i >= 0 {
		return half + i + 1
	}
	for end > start+1 && !utf8.RuneStart(text[end]) {
		end--
	}
	return end
}
