package contextguard

import (
	"encoding/binary"
	"hash/maphash"
	"reflect"
	"strings"

	"google.golang.org/genai"
)

// Content fingerprints: the cheap identity that aligns a request's contents
// with the replay (lengths and ends of texts, names and IDs of calls).

// finish computes the slot's fingerprint; it reports false when ADK puts
// no content into the request for the slot (no part left once empty ones
// are dropped).
func (s *slot) finish() bool {
	var h maphash.Hash
	h.SetSeed(fingerprintSeed)
	h.WriteString(s.role)
	count := 0
	if s.foreign != "" {
		h.WriteByte('F')
		count++
	}
	for _, p := range s.parts {
		if emptyPart(p) {
			continue
		}
		count++
		if s.foreign != "" {
			writeForeignPart(&h, s.foreign, p)
		} else {
			writePart(&h, p)
		}
	}
	s.print = h.Sum64()
	return count > 0
}

// contentPrint computes the fingerprint of a request content the way
// finish computes a slot's; ok is false for a content without parts. A
// user content that reads as another agent's converted event also gets
// plain, its fingerprint as the user's own (a user may type "For
// context:"); plain is p otherwise.
func contentPrint(c *genai.Content) (p, plain uint64, ok bool) {
	if c == nil {
		return 0, 0, false
	}
	plain, ok = printParts(c, false)
	if !ok || c.Role != roleUser || len(c.Parts) == 0 || !isMarker(c.Parts[0]) {
		return plain, plain, ok
	}
	p, _ = printParts(c, true)
	return p, plain, true
}

func isMarker(p *genai.Part) bool {
	return p != nil && p.Text == foreignMarker && p.FunctionCall == nil && p.FunctionResponse == nil
}

func printParts(c *genai.Content, converted bool) (uint64, bool) {
	var h maphash.Hash
	h.SetSeed(fingerprintSeed)
	h.WriteString(c.Role)
	parts := c.Parts
	if converted {
		h.WriteByte('F')
		parts = parts[1:]
	}
	count := 0
	for _, p := range parts {
		if emptyPart(p) {
			continue
		}
		count++
		if converted && p.Text != "" {
			if author, kind, rest, ok := parseForeign(p.Text); ok {
				writeForeign(&h, author, kind, rest)
				continue
			}
		}
		writePart(&h, p)
	}
	return h.Sum64(), count > 0 || converted
}

// emptyPart reports whether ADK drops the part from the request.
func emptyPart(p *genai.Part) bool {
	if p == nil {
		return true
	}
	if p.Text != "" || p.FunctionCall != nil || p.FunctionResponse != nil {
		return false
	}
	return reflect.ValueOf(*p).IsZero()
}

// writePart writes the fingerprint of a part of the agent's own (or the
// user's) event: call and response by name and ID, text by length and ends,
// media by type and size.
func writePart(h *maphash.Hash, p *genai.Part) {
	switch {
	case p.FunctionCall != nil:
		h.WriteByte('c')
		writeString(h, p.FunctionCall.Name)
		writeString(h, requestID(p.FunctionCall.ID))
	case p.FunctionResponse != nil:
		h.WriteByte('r')
		writeString(h, p.FunctionResponse.Name)
		writeString(h, requestID(p.FunctionResponse.ID))
	case p.Text != "":
		h.WriteByte('t')
		if p.Thought {
			h.WriteByte('!')
		}
		writeText(h, p.Text)
	case p.InlineData != nil:
		h.WriteByte('i')
		writeString(h, p.InlineData.MIMEType)
		writeInt(h, len(p.InlineData.Data))
	case p.FileData != nil:
		h.WriteByte('f')
		writeString(h, p.FileData.FileURI)
	default:
		h.WriteByte('o')
	}
}

// writeForeignPart writes the fingerprint of a part of another agent's
// event as ADK converts it: a text, a call or a response become a text
// naming the author (the call's arguments and the response are not read:
// only the function's name), other parts stay as they are.
func writeForeignPart(h *maphash.Hash, author string, p *genai.Part) {
	switch {
	case p.Text != "":
		writeForeign(h, author, foreignText, p.Text)
	case p.FunctionCall != nil:
		writeForeign(h, author, foreignCall, p.FunctionCall.Name)
	case p.FunctionResponse != nil:
		writeForeign(h, author, foreignResp, p.FunctionResponse.Name)
	default:
		writePart(h, p)
	}
}

func writeForeign(h *maphash.Hash, author string, kind byte, s string) {
	h.WriteByte(kind)
	writeString(h, author)
	if kind == foreignText {
		writeText(h, s)
		return
	}
	writeString(h, s)
}

// parseForeign splits a converted part's text into its author, its kind
// and the original text (kind foreignText) or function name.
func parseForeign(text string) (author string, kind byte, rest string, ok bool) {
	if !strings.HasPrefix(text, "[") {
		return "", 0, "", false
	}
	head := text[:min(len(text), maxAuthorSearch)]
	end := strings.Index(head, "] ")
	if end < 0 {
		return "", 0, "", false
	}
	author, tail := text[1:end], text[end+2:]
	switch {
	case strings.HasPrefix(tail, foreignSaid):
		return author, foreignText, tail[len(foreignSaid):], true
	case strings.HasPrefix(tail, foreignCalled):
		name, _, found := strings.Cut(tail[len(foreignCalled):], "`")
		return author, foreignCall, name, found
	case strings.HasPrefix(tail, foreignReturned):
		name, _, found := strings.Cut(tail[len(foreignReturned):], "`")
		return author, foreignResp, name, found
	}
	return "", 0, "", false
}

// requestID is a function call ID as ADK writes it into the request.
func requestID(id string) string {
	if strings.HasPrefix(id, clientCallIDPrefix) {
		return ""
	}
	return id
}

func writeText(h *maphash.Hash, s string) {
	writeInt(h, len(s))
	if len(s) <= 2*textEdge {
		h.WriteString(s)
		return
	}
	h.WriteString(s[:textEdge])
	h.WriteString(s[len(s)-textEdge:])
}

func writeString(h *maphash.Hash, s string) {
	writeInt(h, len(s))
	h.WriteString(s)
}

func writeInt(h *maphash.Hash, n int) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(n))
	h.Write(b[:])
}

// fingerprintSeed seeds every content fingerprint; fingerprints are only
// compared within one process.
var fingerprintSeed = maphash.MakeSeed()

// The kinds of a converted part, after "[author] ".
const (
	foreignText byte = 'T'
	foreignCall byte = 'C'
	foreignResp byte = 'R'
)
