package contentid

import (
	"math"
	"unsafe"

	"google.golang.org/genai"
)

// Check compares contents with the records that follow each other on a
// tape as it was, each from where the last ended: a walk of its own, run
// for every content of every call, that takes the position to compare and
// returns the next (kept in registers). The tape bounds it: each value
// consumes a word.
type Check struct {
	words []uint64
	strs  []string
	at    Mark
}

// Check starts a comparison at from.
func (t *Tape) Check(from Mark) Check { return Check{t.words, t.strs, from} }

// Match reports whether c is the content recorded up to to, the next
// comparison's start.
func (ck *Check) Match(c *genai.Content, to Mark) bool {
	at, ok := ck.at, false
	if c != nil {
		at, ok = ck.content(c, at)
	}
	ck.at = to
	return ok && at == to
}

// is reports whether the word at w is x.
func (ck *Check) is(w int, x uint64) bool { return w < len(ck.words) && ck.words[w] == x }

// same reports whether the string at s is x, by address and length.
func (ck *Check) same(s int, x string) bool {
	return s < len(ck.strs) && len(x) == len(ck.strs[s]) && (len(x) == 0 || unsafe.StringData(x) == unsafe.StringData(ck.strs[s]))
}

func (ck *Check) content(c *genai.Content, at Mark) (Mark, bool) {
	if ck.is(at.w, uint64(len(c.Parts))) && ck.is(at.w+1, tapeFull) {
		s := identity{mode: sinkVerify, v: ck, at: Mark{at.w + 2, at.s}}
		ok := !shortParts(c.Parts) && walkContent(c, &s) && !s.bad
		return s.at, ok
	}
	ok := ck.is(at.w, uint64(len(c.Parts))) && ck.is(at.w+1, tapeShort) && ck.same(at.s, c.Role)
	at = Mark{at.w + 2, at.s + 1}
	for i := 0; ok && i < len(c.Parts); i++ {
		if p := c.Parts[i]; p != nil {
			at, ok = ck.part(p, at)
		}
	}
	return at, ok
}

// part is tapePart's comparison, shortParts' check of p included.
func (ck *Check) part(p *genai.Part, at Mark) (Mark, bool) {
	ok := shortPart(p) && ck.is(at.w, shortBits(p)) && ck.same(at.s, p.Text)
	at = Mark{at.w + 1, at.s + 1}
	// The signature's word follows the bits; it is compared last, as its
	// bytes are hashed (ADK copies them), after the cheaper comparisons.
	sig := at.w
	if p.ThoughtSignature != nil {
		at.w++
	}
	if fc := p.FunctionCall; fc != nil && ok {
		if ok = ck.same(at.s, fc.Name) && ck.same(at.s+1, fc.ID); ok {
			at, ok = ck.payload(fc.Args, Mark{at.w, at.s + 2})
		}
	}
	if fr := p.FunctionResponse; fr != nil && ok {
		if ok = ck.same(at.s, fr.Name) && ck.same(at.s+1, fr.ID); ok {
			at, ok = ck.payload(fr.Response, Mark{at.w, at.s + 2})
		}
	}
	if p.ThoughtSignature != nil && ok {
		ok = ck.is(sig, crcFold(fnvOffset, p.ThoughtSignature))
	}
	return at, ok
}

func (ck *Check) payload(m map[string]any, at Mark) (Mark, bool) {
	if m == nil {
		return Mark{at.w + 1, at.s}, ck.is(at.w, tagNilPayload)
	}
	return ck.object(m, at)
}

// value is tapeAny's comparison: an object's recorded keys are looked up.
func (ck *Check) value(x any, at Mark) (Mark, bool) {
	w, s := at.w, at.s
	switch x := x.(type) {
	case string:
		return Mark{w + 1, s + 1}, ck.is(w, tagString) && ck.same(s, x)
	case map[string]any:
		return ck.object(x, at)
	case []any:
		ok := ck.is(w, tagArray) && ck.is(w+1, uint64(len(x)))
		at.w += 2
		for i := 0; ok && i < len(x); i++ {
			at, ok = ck.value(x[i], at)
		}
		return at, ok
	case []string:
		ok := ck.is(w, tagStrings) && ck.is(w+1, uint64(len(x)))
		for i := 0; ok && i < len(x); i++ {
			ok = ck.same(s+i, x[i])
		}
		return Mark{w + 2, s + len(x)}, ok
	}
	tag, bits, n := scalarWords(x)
	return Mark{w + n, s}, n > 0 && ck.is(w, tag) && (n == 1 || ck.is(w+1, bits))
}

// object compares a map, and a string value, the common one, without a
// call.
func (ck *Check) object(m map[string]any, at Mark) (Mark, bool) {
	if !ck.is(at.w, tagObject) || !ck.is(at.w+1, uint64(len(m))) {
		return at, false
	}
	at.w += 2
	for range len(m) {
		if at.s >= len(ck.strs) {
			return at, false
		}
		e, ok := m[ck.strs[at.s]]
		at.s++
		if str, isStr := e.(string); isStr {
			ok = ck.is(at.w, tagString) && ck.same(at.s, str)
			at = Mark{at.w + 1, at.s + 1}
		} else if ok {
			at, ok = ck.value(e, at)
		}
		if !ok {
			return at, false
		}
	}
	return at, true
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
