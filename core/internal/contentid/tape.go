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

// Check compares contents with the records that follow each other on a
// tape, each from where the last ended: a memo's check of a history
// without starting a comparison per content.
type Check struct {
	v  verifier
	at Mark
}

// Check starts a comparison at from.
func (t *Tape) Check(from Mark) Check {
	return Check{verifier{t.words, t.strs}, Mark{min(from.w, len(t.words)), min(from.s, len(t.strs))}}
}

// Match reports whether c is the content recorded up to to, the next
// comparison's start.
func (ck *Check) Match(c *genai.Content, to Mark) bool {
	at, ok := ck.at, false
	if c != nil {
		at, ok = ck.v.content(c, at)
	}
	ck.at = Mark{min(to.w, len(ck.v.words)), min(to.s, len(ck.v.strs))}
	return ok && at == to
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

// shortBits is the word that starts p's short record, which of its fields
// are set: bit 0 a thought, 1 a signature, 2 a call, 3 a response.
func shortBits(p *genai.Part) uint64 {
	return b2u(p.Thought) | b2u(p.ThoughtSignature != nil)<<1 | b2u(p.FunctionCall != nil)<<2 | b2u(p.FunctionResponse != nil)<<3
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
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

// scalarWords is the record of a value that holds no string: its tag,
// then, for a number, its bits; n is how many words, 0 for another type.
func scalarWords(v any) (tag, bits uint64, n int) {
	switch x := v.(type) {
	case nil:
		return tagNil, 0, 1
	case bool:
		if x {
			return tagTrue, 0, 1
		}
		return tagFalse, 0, 1
	case float64:
		return tagFloat, math.Float64bits(x), 2
	case int:
		return tagInt, uint64(x), 2
	case int64:
		return tagInt64, uint64(x), 2
	}
	return 0, 0, 0
}

// verifier compares a content with the records of a tape: a walk of its
// own, as a Check runs for every content of every call. Each method takes
// the position of the record to compare and returns the one after it, so
// that it stays in registers; false at the first difference. Each value
// consumes a word, so the tape bounds the walk.
type verifier struct {
	words []uint64
	strs  []string
}

// is reports whether the word at w is x.
func (v *verifier) is(w int, x uint64) bool { return w < len(v.words) && v.words[w] == x }

// same reports whether the string at s is x, by address and length.
func (v *verifier) same(s int, x string) bool {
	if s >= len(v.strs) {
		return false
	}
	y := v.strs[s]
	return len(x) == len(y) && (len(x) == 0 || unsafe.StringData(x) == unsafe.StringData(y))
}

func (v *verifier) content(c *genai.Content, at Mark) (Mark, bool) {
	if !v.is(at.w, uint64(len(c.Parts))) {
		return at, false
	}
	if v.is(at.w+1, tapeFull) {
		s := identity{mode: sinkVerify, v: v, at: Mark{at.w + 2, at.s}}
		ok := !shortParts(c.Parts) && walkContent(c, &s) && !s.bad
		return s.at, ok
	}
	if !v.is(at.w+1, tapeShort) || !v.same(at.s, c.Role) {
		return at, false
	}
	at = Mark{at.w + 2, at.s + 1}
	ok := true
	for _, p := range c.Parts {
		if p != nil {
			if at, ok = v.part(p, at); !ok {
				break
			}
		}
	}
	return at, ok
}

// part is tapePart's comparison, shortParts' check of p included.
func (v *verifier) part(p *genai.Part, at Mark) (Mark, bool) {
	if !shortPart(p) || !v.is(at.w, shortBits(p)) || !v.same(at.s, p.Text) {
		return at, false
	}
	at = Mark{at.w + 1, at.s + 1}
	if p.ThoughtSignature != nil {
		if !v.is(at.w, crcFold(fnvOffset, p.ThoughtSignature)) {
			return at, false
		}
		at.w++
	}
	ok := true
	if fc := p.FunctionCall; fc != nil {
		if !v.same(at.s, fc.Name) || !v.same(at.s+1, fc.ID) {
			return at, false
		}
		at, ok = v.payload(fc.Args, Mark{at.w, at.s + 2})
	}
	if fr := p.FunctionResponse; fr != nil && ok {
		if !v.same(at.s, fr.Name) || !v.same(at.s+1, fr.ID) {
			return at, false
		}
		at, ok = v.payload(fr.Response, Mark{at.w, at.s + 2})
	}
	return at, ok
}

func (v *verifier) payload(m map[string]any, at Mark) (Mark, bool) {
	if m == nil {
		return Mark{at.w + 1, at.s}, v.is(at.w, tagNilPayload)
	}
	return v.object(m, at)
}

// value is tapeAny's comparison: an object's recorded keys are looked up.
func (v *verifier) value(x any, at Mark) (Mark, bool) {
	w, s := at.w, at.s
	switch x := x.(type) {
	case string:
		return Mark{w + 1, s + 1}, v.is(w, tagString) && v.same(s, x)
	case map[string]any:
		return v.object(x, at)
	case []any:
		if !v.is(w, tagArray) || !v.is(w+1, uint64(len(x))) {
			return at, false
		}
		at.w += 2
		ok := true
		for _, e := range x {
			if at, ok = v.value(e, at); !ok {
				break
			}
		}
		return at, ok
	case []string:
		ok := v.is(w, tagStrings) && v.is(w+1, uint64(len(x)))
		for i := 0; ok && i < len(x); i++ {
			ok = v.same(s+i, x[i])
		}
		return Mark{w + 2, s + len(x)}, ok
	}
	tag, bits, n := scalarWords(x)
	return Mark{w + n, s}, n > 0 && v.is(w, tag) && (n == 1 || v.is(w+1, bits))
}

// object compares a map, and a string value, the common one, without a
// call.
func (v *verifier) object(m map[string]any, at Mark) (Mark, bool) {
	if !v.is(at.w, tagObject) || !v.is(at.w+1, uint64(len(m))) {
		return at, false
	}
	at.w += 2
	for range len(m) {
		if at.s >= len(v.strs) {
			return at, false
		}
		e, ok := m[v.strs[at.s]]
		at.s++
		if str, isStr := e.(string); isStr {
			ok = v.is(at.w, tagString) && v.same(at.s, str)
			at = Mark{at.w + 1, at.s + 1}
		} else if ok {
			at, ok = v.value(e, at)
		}
		if !ok {
			return at, false
		}
	}
	return at, true
}
