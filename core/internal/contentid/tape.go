package contentid

import (
	"math"
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

// Match reports whether c is the content recorded between from and to.
func (t *Tape) Match(c *genai.Content, from, to Mark) bool {
	ck := t.Check(from)
	return ck.Match(c, to)
}

// Check compares contents with the records that follow each other on a
// tape, each from where the last ended: a memo's check of a history
// without starting a comparison per content.
type Check struct{ v verifier }

// Check starts a comparison at from.
func (t *Tape) Check(from Mark) Check {
	return Check{verifier{words: t.words, strs: t.strs, w: min(from.w, len(t.words)), s: min(from.s, len(t.strs))}}
}

// Match reports whether c is the content recorded up to to, the next
// comparison's start.
func (ck *Check) Match(c *genai.Content, to Mark) bool {
	ok := c != nil && ck.v.content(c) && ck.v.w == to.w && ck.v.s == to.s
	ck.v.w, ck.v.s = min(to.w, len(ck.v.words)), min(to.s, len(ck.v.strs))
	return ok
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

// shortParts reports whether every part holds only what tapePart walks.
func shortParts(ps []*genai.Part) bool {
	for _, p := range ps {
		if p != nil && !shortPart(p) {
			return false
		}
	}
	return true
}

func shortPart(p *genai.Part) bool {
	if p.MediaResolution != nil || p.CodeExecutionResult != nil || p.ExecutableCode != nil || p.FileData != nil ||
		p.InlineData != nil || p.VideoMetadata != nil || p.ToolCall != nil || p.ToolResponse != nil || p.PartMetadata != nil {
		return false
	}
	fc, fr := p.FunctionCall, p.FunctionResponse
	return (fc == nil || fc.PartialArgs == nil && fc.WillContinue == nil) &&
		(fr == nil || fr.WillContinue == nil && fr.Scheduling == "" && fr.Parts == nil)
}

// Bits of the word that starts a short part: which fields are set.
const (
	shortThought = 1 << iota
	shortSignature
	shortCall
	shortResponse
)

func (s *identity) tapePart(p *genai.Part) bool {
	var bits uint64
	if p.Thought {
		bits |= shortThought
	}
	if p.ThoughtSignature != nil {
		bits |= shortSignature
	}
	if p.FunctionCall != nil {
		bits |= shortCall
	}
	if p.FunctionResponse != nil {
		bits |= shortResponse
	}
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
		s.bad = s.bad || !s.v.word(v)
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
	s.bad = s.bad || !s.v.str(x)
}

func (s *identity) tapeValue(m map[string]any) bool {
	if s.mode == sinkVerify {
		s.bad = s.bad || !s.v.payload(m)
		return !s.bad
	}
	if m == nil {
		s.word(tagNilPayload)
		return !s.bad
	}
	budget := maxKeyNodes
	return s.tapeAny(m, 0, &budget)
}

// tapeAny records or verifies a JSON-like value, an object's keys before
// their values (a key sums its entries' keys, in any order; a verification
// looks the recorded keys up); budget is the values it may still visit.
// False past the bounds, for a type the tape does not know, or at a
// difference.
func (s *identity) tapeAny(v any, depth int, budget *int) bool {
	*budget--
	if depth > maxKeyDepth || *budget < 0 || s.bad {
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
		return s.scalar(v) && !s.bad
	}
	return !s.bad
}

// scalar records or compares a value that holds no other: false for a type
// the tape does not know.
func (s *identity) scalar(v any) bool {
	switch x := v.(type) {
	case nil:
		s.word(tagNil)
	case string:
		s.word(tagString)
		s.tapeStr(x)
	case bool:
		if x {
			s.word(tagTrue)
		} else {
			s.word(tagFalse)
		}
	case float64:
		s.word(tagFloat)
		s.word(math.Float64bits(x))
	case int:
		s.word(tagInt)
		s.word(uint64(x))
	case int64:
		s.word(tagInt64)
		s.word(uint64(x))
	case []string:
		s.word(tagStrings)
		s.word(uint64(len(x)))
		for _, e := range x {
			s.tapeStr(e)
		}
	default:
		return false
	}
	return true
}

// verifier compares a content with its record, consuming the tape's
// words and strings: a walk of its own, as Match runs for every content of
// every call. Each value consumes a word, so the tape bounds the walk.
type verifier struct {
	words []uint64
	strs  []string
	w, s  int // the next word and string to compare
}

func (v *verifier) word(x uint64) bool {
	if v.w >= len(v.words) || v.words[v.w] != x {
		return false
	}
	v.w++
	return true
}

// pair is word for a tag and a length, as a value starts.
func (v *verifier) pair(tag, n uint64) bool {
	if v.w+1 >= len(v.words) || v.words[v.w] != tag || v.words[v.w+1] != n {
		return false
	}
	v.w += 2
	return true
}

// next is the next recorded string; false past the record.
func (v *verifier) next() (string, bool) {
	if v.s >= len(v.strs) {
		return "", false
	}
	v.s++
	return v.strs[v.s-1], true
}

// str compares x with the next recorded string by address and length.
func (v *verifier) str(x string) bool {
	y, ok := v.next()
	return ok && len(x) == len(y) && (len(x) == 0 || unsafe.StringData(x) == unsafe.StringData(y))
}

func (v *verifier) content(c *genai.Content) bool {
	if !v.word(uint64(len(c.Parts))) || v.w >= len(v.words) {
		return false
	}
	if v.words[v.w] == tapeFull {
		v.w++
		s := identity{mode: sinkVerify, v: v}
		return !shortParts(c.Parts) && walkContent(c, &s) && !s.bad
	}
	if !v.word(tapeShort) || !v.str(c.Role) {
		return false
	}
	for _, p := range c.Parts {
		if p != nil && !v.part(p) {
			return false
		}
	}
	return true
}

// part is tapePart's comparison, shortParts' check of p included.
func (v *verifier) part(p *genai.Part) bool {
	if !shortPart(p) {
		return false
	}
	var bits uint64
	if p.Thought {
		bits |= shortThought
	}
	if p.ThoughtSignature != nil {
		bits |= shortSignature
	}
	if p.FunctionCall != nil {
		bits |= shortCall
	}
	if p.FunctionResponse != nil {
		bits |= shortResponse
	}
	if !v.word(bits) || !v.str(p.Text) || p.ThoughtSignature != nil && !v.word(crcFold(fnvOffset, p.ThoughtSignature)) {
		return false
	}
	if fc := p.FunctionCall; fc != nil && !(v.str(fc.Name) && v.str(fc.ID) && v.payload(fc.Args)) {
		return false
	}
	fr := p.FunctionResponse
	return fr == nil || v.str(fr.Name) && v.str(fr.ID) && v.payload(fr.Response)
}

func (v *verifier) payload(m map[string]any) bool {
	if m == nil {
		return v.word(tagNilPayload)
	}
	return v.value(m)
}

// value is tapeAny's comparison: an object's recorded keys are looked up.
func (v *verifier) value(x any) bool {
	switch x := x.(type) {
	case string:
		return v.word(tagString) && v.str(x)
	case map[string]any:
		if !v.pair(tagObject, uint64(len(x))) {
			return false
		}
		for range len(x) {
			k, ok := v.next()
			if !ok {
				return false
			}
			e, ok := x[k]
			if s, isStr := e.(string); isStr && ok { // the common value, without a call
				ok = v.word(tagString) && v.str(s)
			} else {
				ok = ok && v.value(e)
			}
			if !ok {
				return false
			}
		}
		return true
	case []any:
		if !v.pair(tagArray, uint64(len(x))) {
			return false
		}
		for _, e := range x {
			if !v.value(e) {
				return false
			}
		}
		return true
	case float64:
		return v.word(tagFloat) && v.word(math.Float64bits(x))
	case nil:
		return v.word(tagNil)
	case bool:
		if x {
			return v.word(tagTrue)
		}
		return v.word(tagFalse)
	case int:
		return v.word(tagInt) && v.word(uint64(x))
	case int64:
		return v.word(tagInt64) && v.word(uint64(x))
	case []string:
		if !v.pair(tagStrings, uint64(len(x))) {
			return false
		}
		for _, e := range x {
			if !v.str(e) {
				return false
			}
		}
		return true
	}
	return false
}
