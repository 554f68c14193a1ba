package contentid

import (
	"math"
	"unsafe"

	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/sat"
)

// A tape records contents so that a later copy of them is verified without
// hashing a byte (ARCHITECTURE.md, Counting). ADK deep-copies every content
// for every model call: structs, maps and byte slices are new, but the
// copies' strings share the session events' bytes. A tape keeps each
// string it recorded, so its bytes stay alive and no other string can take
// its address; Go strings are immutable, so a string with the recorded
// address and length holds the recorded bytes. Maps are verified by looking
// up every recorded key (a map of the same length holding each of them has
// no other), byte slices by crcFold of their bytes, numbers by value.

// Tape is the recorded identity of a run of contents, one after the other.
type Tape struct {
	words []uint64
	strs  []string
	bytes int
}

// Mark is a position on a tape: where a content's record starts or ends.
type Mark struct{ w, s int }

// End is the position after the last record.
func (t *Tape) End() Mark { return Mark{len(t.words), len(t.strs)} }

// Bytes is what the tape retains: its words, its strings' headers and
// their bytes (shared with the session's events while they live).
func (t *Tape) Bytes() int { return t.bytes }

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

// Sizes of what a tape holds, for Bytes.
const (
	wordBytes      = 8
	strHeaderBytes = int(unsafe.Sizeof(""))
)

// Record appends c's identity. It returns false, appending nothing, for a
// nil content or one holding a payload value the tape cannot verify (a
// struct, a typed map, a nesting or size past the key's bounds).
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
	if c == nil || to.w > len(t.words) || to.s > len(t.strs) {
		return false
	}
	if at, ok := t.matchShort(c, from); ok {
		return at == to
	}
	s := identity{mode: sinkVerify, tape: t, at: from}
	return s.tapeContent(c) && !s.bad && s.at == to
}

// matchShort is Match for a content recorded short, in local variables: a
// steady call verifies every content of the history, most of them short.
// ok is false when c does not match or was not recorded short.
func (t *Tape) matchShort(c *genai.Content, from Mark) (at Mark, ok bool) {
	words, strs := t.words, t.strs
	w, si := from.w, from.s
	if w+2 > len(words) || words[w] != uint64(len(c.Parts)) || words[w+1] != tapeShort ||
		si >= len(strs) || !sameString(strs[si], c.Role) || !shortParts(c.Parts) {
		return from, false
	}
	w, si = w+2, si+1
	for _, p := range c.Parts {
		if p == nil {
			continue
		}
		if w >= len(words) || words[w] != shortBits(p) || si >= len(strs) || !sameString(strs[si], p.Text) {
			return from, false
		}
		w, si = w+1, si+1
		if p.ThoughtSignature != nil {
			if w >= len(words) || words[w] != crcFold(fnvOffset, p.ThoughtSignature) {
				return from, false
			}
			w++
		}
		if fc := p.FunctionCall; fc != nil {
			if w, si, ok = t.matchCall(fc.Name, fc.ID, fc.Args, w, si); !ok {
				return from, false
			}
		}
		if fr := p.FunctionResponse; fr != nil {
			if w, si, ok = t.matchCall(fr.Name, fr.ID, fr.Response, w, si); !ok {
				return from, false
			}
		}
	}
	return Mark{w, si}, true
}

// matchCall verifies a call's or a response's name, ID and payload.
func (t *Tape) matchCall(name, id string, payload map[string]any, w, si int) (int, int, bool) {
	if si+1 >= len(t.strs) || !sameString(t.strs[si], name) || !sameString(t.strs[si+1], id) {
		return w, si, false
	}
	s := identity{mode: sinkVerify, tape: t, at: Mark{w, si + 2}}
	s.tapeValue(payload)
	return s.at.w, s.at.s, !s.bad
}

// Words that start a content's record: how it was walked. A content whose
// parts hold only texts, thoughts, signatures, and calls and responses by
// name, ID and payload (what a session holds but for media) is walked by
// tapeParts, the rest by walkContent, which knows every field.
const (
	tapeShort = 1
	tapeFull  = 2
)

// tapeContent records or verifies c, short when it can.
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
		if p == nil {
			continue
		}
		if p.MediaResolution != nil || p.CodeExecutionResult != nil || p.ExecutableCode != nil || p.FileData != nil ||
			p.InlineData != nil || p.VideoMetadata != nil || p.ToolCall != nil || p.ToolResponse != nil || p.PartMetadata != nil {
			return false
		}
		if fc := p.FunctionCall; fc != nil && (fc.PartialArgs != nil || fc.WillContinue != nil) {
			return false
		}
		if fr := p.FunctionResponse; fr != nil && (fr.WillContinue != nil || fr.Scheduling != "" || fr.Parts != nil) {
			return false
		}
	}
	return true
}

// Bits of a short part's word: which of its fields are set.
const (
	shortThought = 1 << iota
	shortSignature
	shortCall
	shortResponse
)

// shortBits is the word that starts a short part's record.
func shortBits(p *genai.Part) uint64 {
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
	return bits
}

// tapePart records or verifies a part that shortParts admits.
func (s *identity) tapePart(p *genai.Part) bool {
	s.word(shortBits(p))
	s.tapeStr(p.Text)
	if p.ThoughtSignature != nil {
		s.word(crcFold(fnvOffset, p.ThoughtSignature))
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

// word records or compares one word.
func (s *identity) word(v uint64) {
	if s.mode == sinkRecord {
		s.tape.words = append(s.tape.words, v)
		s.tape.bytes += wordBytes
		return
	}
	if s.at.w >= len(s.tape.words) || s.tape.words[s.at.w] != v {
		s.bad = true
		return
	}
	s.at.w++
}

// tapeStr records a string, or compares its address and length with the
// recorded one's.
func (s *identity) tapeStr(x string) {
	t := s.tape
	if s.mode == sinkRecord {
		t.strs = append(t.strs, x)
		t.bytes = sat.Add(t.bytes, len(x)+strHeaderBytes)
		return
	}
	if s.at.s >= len(t.strs) || !sameString(t.strs[s.at.s], x) {
		s.bad = true
		return
	}
	s.at.s++
}

// sameString reports whether a and b are the same bytes in memory.
func sameString(a, b string) bool {
	return len(a) == len(b) && (len(a) == 0 || unsafe.StringData(a) == unsafe.StringData(b))
}

// nextStr is the next recorded string, "" (and bad) past the tape.
func (s *identity) nextStr() string {
	if s.at.s >= len(s.tape.strs) {
		s.bad = true
		return ""
	}
	s.at.s++
	return s.tape.strs[s.at.s-1]
}

// tapeValue records or verifies a payload.
func (s *identity) tapeValue(m map[string]any) bool {
	if m == nil {
		s.word(tagNilPayload)
		return true
	}
	if s.mode == sinkRecord {
		budget := maxKeyNodes
		return s.recordValue(m, 0, &budget)
	}
	s.verifyValue(m)
	return true
}

// recordValue records a JSON-like value: its shape, numbers, strings and,
// for an object, each key before its value. budget is the number of values
// the walk may still visit.
func (s *identity) recordValue(v any, depth int, budget *int) bool {
	*budget--
	if depth > maxKeyDepth || *budget < 0 {
		return false
	}
	switch x := v.(type) {
	case nil:
		s.word(tagNil)
	case string:
		s.word(tagString)
		s.tapeStr(x)
	case bool:
		s.word(boolTag(x))
	case float64:
		s.word(tagFloat)
		s.word(math.Float64bits(x))
	case int:
		s.word(tagInt)
		s.word(uint64(x))
	case int64:
		s.word(tagInt64)
		s.word(uint64(x))
	case map[string]any:
		s.word(tagObject)
		s.word(uint64(len(x)))
		for k, e := range x {
			s.tapeStr(k)
			if !s.recordValue(e, depth+1, budget) {
				return false
			}
		}
	case []any:
		s.word(tagArray)
		s.word(uint64(len(x)))
		for _, e := range x {
			if !s.recordValue(e, depth+1, budget) {
				return false
			}
		}
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

// verifyValue compares v with the value recorded next, setting bad on the
// first difference. It follows the record, so it visits no more values
// than recordValue did.
func (s *identity) verifyValue(v any) {
	switch x := v.(type) {
	case nil:
		s.expect(tagNil)
	case string:
		s.expect(tagString)
		s.tapeStr(x)
	case bool:
		s.expect(boolTag(x))
	case float64:
		s.expect2(tagFloat, math.Float64bits(x))
	case int:
		s.expect2(tagInt, uint64(x))
	case int64:
		s.expect2(tagInt64, uint64(x))
	case map[string]any:
		s.expect2(tagObject, uint64(len(x)))
		for range len(x) {
			if s.bad {
				return
			}
			e, ok := x[s.nextStr()]
			if str, isStr := e.(string); isStr && ok {
				s.expect(tagString)
				s.tapeStr(str)
				continue
			}
			if !ok {
				s.bad = true
				return
			}
			s.verifyValue(e)
		}
	case []any:
		s.expect2(tagArray, uint64(len(x)))
		for _, e := range x {
			if s.bad {
				return
			}
			s.verifyValue(e)
		}
	case []string:
		s.expect2(tagStrings, uint64(len(x)))
		for _, e := range x {
			s.tapeStr(e)
		}
	default:
		s.bad = true
	}
}

// expect compares the next recorded word with v.
func (s *identity) expect(v uint64) {
	if s.at.w < len(s.tape.words) && s.tape.words[s.at.w] == v {
		s.at.w++
		return
	}
	s.bad = true
}

// expect2 compares the next two recorded words with a and b.
func (s *identity) expect2(a, b uint64) {
	w := s.tape.words
	if i := s.at.w; i+1 < len(w) && w[i] == a && w[i+1] == b {
		s.at.w += 2
		return
	}
	s.bad = true
}

func boolTag(b bool) uint64 {
	if b {
		return tagTrue
	}
	return tagFalse
}
