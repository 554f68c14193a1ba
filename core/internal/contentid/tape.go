package contentid

import (
	"slices"
	"unsafe"

	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/sat"
)

// Tape is the recorded identity of a run of contents, which verifies a
// later copy without hashing its strings (ARCHITECTURE.md, Counting): the
// tape keeps the strings it recorded alive, so a string at a recorded
// address and length holds the recorded bytes. Byte slices are compared by
// crcFold.
type Tape struct {
	words []uint64
	strs  []string
	bytes int
}

// Mark is a position on a tape, where a content's record starts or ends.
type Mark struct{ w, s int }

// End is the position after the last record.
func (t *Tape) End() Mark { return Mark{len(t.words), len(t.strs)} }

// Bytes is what the tape retains, its strings' bytes included.
func (t *Tape) Bytes() int { return t.bytes }

const (
	wordBytes      = 8
	strHeaderBytes = int(unsafe.Sizeof(""))
)

// Grow makes room for about n more records, so that recording a whole
// history allocates once.
func (t *Tape) Grow(n int) {
	const wordsPerContent, strsPerContent = 12, 6
	t.words = slices.Grow(t.words, n*wordsPerContent)
	t.strs = slices.Grow(t.strs, n*strsPerContent)
}

// Truncate drops the records after m.
func (t *Tape) Truncate(m Mark) {
	if m.w > len(t.words) || m.s > len(t.strs) {
		return
	}
	for _, x := range t.strs[m.s:] {
		t.bytes -= len(x) + strHeaderBytes
	}
	clear(t.strs[m.s:])
	t.bytes -= (len(t.words) - m.w) * wordBytes
	t.words, t.strs = t.words[:m.w], t.strs[:m.s]
}

// Record appends c's identity; false, appending nothing, for nil or a
// payload the tape cannot look into (a struct, a typed map, too deep).
func (t *Tape) Record(c *genai.Content) bool {
	if c == nil {
		return false
	}
	from := t.End()
	s := identity{mode: sinkRecord, tape: t}
	if !s.tapeContent(c) {
		t.Truncate(from)
		return false
	}
	return true
}

// A record starts with how the content was walked: short, by tapePart, for
// a session's common contents (shortParts), else by walkContent.
const (
	tapeShort = 1
	tapeFull  = 2
)

func (s *identity) tapeContent(c *genai.Content) bool {
	s.word(uint64(len(c.Parts)))
	if !shortParts(c.Parts) {
		s.word(tapeFull)
		return walkContent(c, s)
	}
	s.word(tapeShort)
	s.tapeStr(c.Role)
	for _, p := range c.Parts {
		if p != nil && !s.tapePart(p) {
			return false
		}
	}
	return true
}

func (s *identity) tapePart(p *genai.Part) bool {
	bits := shortBits(p)
	s.word(bits)
	s.tapeStr(p.Text)
	if p.ThoughtSignature != nil {
		s.blob(p.ThoughtSignature)
	}
	if fc := p.FunctionCall; fc != nil {
		s.tapeStr(fc.Name)
		s.tapeStr(fc.ID)
		if !s.tapeValue(fc.Args) {
			return false
		}
	}
	if fr := p.FunctionResponse; fr != nil {
		s.tapeStr(fr.Name)
		s.tapeStr(fr.ID)
		return s.tapeValue(fr.Response)
	}
	return true
}

// word records, compares, keys or sizes v.
func (s *identity) word(v uint64) {
	switch {
	case s.mode == sinkVerify:
		s.bad = s.bad || !s.v.is(s.at.w, v)
		s.at.w++
	case s.mode == sinkRecord:
		s.tape.words = append(s.tape.words, v)
		s.tape.bytes += wordBytes
	case s.mode == sinkKey:
		s.k.Add(v)
	default:
		s.size = sat.Add(s.size, wordBytes)
	}
}

// tapeStr is word for a string: by address and length.
func (s *identity) tapeStr(x string) {
	t := s.tape
	switch s.mode {
	case sinkKey:
		s.k.str(x)
		return
	case sinkSize:
		s.size = sat.Add(s.size, len(x)+strHeaderBytes)
		return
	case sinkRecord:
		t.strs = append(t.strs, x)
		t.bytes = sat.Add(t.bytes, len(x)+strHeaderBytes)
		return
	}
	s.bad = s.bad || !s.v.same(s.at.s, x)
	s.at.s++
}

func (s *identity) tapeValue(m map[string]any) bool {
	if s.mode == sinkVerify {
		at, ok := s.v.payload(m, s.at)
		s.at, s.bad = at, s.bad || !ok
		return !s.bad
	}
	if m == nil {
		s.word(tagNilPayload)
		return true
	}
	budget := maxKeyNodes
	return s.tapeAny(m, 0, &budget)
}

// tapeAny records or keys a JSON-like value, an object's keys before their
// values (a key sums its entries' keys, in any order); budget is the values
// it may still visit. False past the bounds or for a type the tape does not
// know.
func (s *identity) tapeAny(v any, depth int, budget *int) bool {
	*budget--
	if depth > maxKeyDepth || *budget < 0 {
		return false
	}
	switch x := v.(type) {
	case map[string]any:
		s.word(tagObject)
		s.word(uint64(len(x)))
		outer, sum := s.k, uint64(0)
		for k, e := range x {
			s.k = Keyer{h: keySeedEntry}
			s.tapeStr(k)
			if !s.tapeAny(e, depth+1, budget) {
				return false
			}
			sum += s.k.h
		}
		s.k = outer
		if s.mode == sinkKey {
			s.k.Add(sum)
		}
	case []any:
		s.word(tagArray)
		s.word(uint64(len(x)))
		for _, e := range x {
			if !s.tapeAny(e, depth+1, budget) {
				return false
			}
		}
	default:
		return s.scalar(v)
	}
	return true
}

// scalar records or keys a value that holds no other: false for a type
// the tape does not know.
func (s *identity) scalar(v any) bool {
	switch x := v.(type) {
	case string:
		s.word(tagString)
		s.tapeStr(x)
	case []string:
		s.word(tagStrings)
		s.word(uint64(len(x)))
		for _, e := range x {
			s.tapeStr(e)
		}
	default:
		tag, bits, n := scalarWords(v)
		if n == 0 {
			return false
		}
		s.word(tag)
		if n == 2 {
			s.word(bits)
		}
	}
	return true
}
