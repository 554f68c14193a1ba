package coretest

import (
	"fmt"
	"hash/fnv"
	"hash/maphash"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/genai"
)

// Markers: the unique strings planted in every turn, found again in requests
// and summaries to prove nothing is lost.

// MarkerPattern matches the markers the kit plants in user messages and tool
// outputs (MARK- followed by hex digits). Tests check that markers survive
// compaction by looking for them in later requests and in summaries.
var MarkerPattern = regexp.MustCompile(`MARK-[0-9a-f]+`)

// Marker returns the deterministic marker for a seed, e.g. "MARK-3fa85f64".
func Marker(seed int64) string {
	return fmt.Sprintf("MARK-%08x", uint32(mix(seed, 0x6d61726b)))
}

// mix is a small deterministic 64-bit hash of its inputs (splitmix64 style).
func mix(vals ...int64) int64 {
	var h uint64 = 0x9e3779b97f4a7c15
	for _, v := range vals {
		h ^= uint64(v) + 0x9e3779b97f4a7c15 + (h << 6) + (h >> 2)
		h ^= h >> 30
		h *= 0xbf58476d1ce4e5b9
		h ^= h >> 27
		h *= 0x94d049bb133111eb
		h ^= h >> 31
	}
	return int64(h & 0x7fffffffffffffff)
}

var turnTagPattern = regexp.MustCompile(`\[turn (\d+)\]`)

// TurnTag returns the tag "[turn N]" that user messages built by
// [UserMessage] start with; the [Script] reads it to know which turn a
// request belongs to.
func TurnTag(turn int) string { return "[turn " + strconv.Itoa(turn) + "]" }

// UserMessage returns the text of a user message for the given turn: the
// turn tag, the marker, then body.
func UserMessage(turn int, marker, body string) string {
	return TurnTag(turn) + " " + marker + " " + body
}

// textKey identifies a text by its hash and length.
type textKey struct {
	h uint64
	n int
}

// markerCacheLimit bounds the text bytes whose markers are cached; when it
// is exceeded the cache starts over.
const markerCacheLimit = 512 << 20

var markerCache = struct {
	sync.Mutex
	m     map[textKey][]string
	bytes int
}{m: map[textKey][]string{}}

// markersOf returns the markers in s, cached per distinct string.
func markersOf(s string) []string {
	if len(s) < 13 {
		return nil
	}
	if len(s) < 4096 {
		return MarkerPattern.FindAllString(s, -1)
	}
	key := textKey{h: maphash.String(hashSeed, s), n: len(s)}
	markerCache.Lock()
	ms, ok := markerCache.m[key]
	markerCache.Unlock()
	if ok {
		return ms
	}
	ms = MarkerPattern.FindAllString(s, -1)
	markerCache.Lock()
	if markerCache.bytes+len(s) > markerCacheLimit {
		markerCache.m = map[textKey][]string{}
		markerCache.bytes = 0
	}
	markerCache.m[key] = ms
	markerCache.bytes += len(s)
	markerCache.Unlock()
	return ms
}

// requestMarkers returns the distinct markers in contents, in order of first
// appearance.
func requestMarkers(contents []*genai.Content) []string {
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		for _, mk := range markersOf(s) {
			if !seen[mk] {
				seen[mk] = true
				out = append(out, mk)
			}
		}
	}
	for _, c := range contents {
		if c == nil {
			continue
		}
		for _, p := range c.Parts {
			if p == nil {
				continue
			}
			add(p.Text)
			if p.FunctionCall != nil {
				add(compactJSON(p.FunctionCall.Args))
			}
			if p.FunctionResponse != nil {
				add(compactJSON(p.FunctionResponse.Response))
			}
		}
	}
	return out
}

func lastUserText(contents []*genai.Content) string {
	for i := len(contents) - 1; i >= 0; i-- {
		c := contents[i]
		if c == nil || c.Role != genai.RoleUser {
			continue
		}
		for j := len(c.Parts) - 1; j >= 0; j-- {
			if p := c.Parts[j]; p != nil && p.Text != "" {
				return cut(p.Text, 200)
			}
		}
	}
	return ""
}

// FlattenText renders contents as plain text: texts, function calls and
// responses as name plus compact JSON, one line per part, inline data as a
// placeholder. It is meant for assertions ("does the request mention X").
func FlattenText(contents []*genai.Content) string {
	var b strings.Builder
	for _, c := range contents {
		if c == nil {
			continue
		}
		for _, p := range c.Parts {
			switch {
			case p == nil:
			case p.FunctionCall != nil:
				fmt.Fprintf(&b, "%s: call %s %s\n", c.Role, p.FunctionCall.Name, compactJSON(p.FunctionCall.Args))
			case p.FunctionResponse != nil:
				fmt.Fprintf(&b, "%s: response %s %s\n", c.Role, p.FunctionResponse.Name, compactJSON(p.FunctionResponse.Response))
			case p.InlineData != nil:
				fmt.Fprintf(&b, "%s: [inline %s, %d bytes]\n", c.Role, p.InlineData.MIMEType, len(p.InlineData.Data))
			default:
				fmt.Fprintf(&b, "%s: %s\n", c.Role, p.Text)
			}
		}
	}
	return b.String()
}

// summaryHeader starts the guard's summary message (core's summary_message.go,
// which coretest cannot import: core's tests import coretest).
const summaryHeader = "[Conversation summary:"

// summaryID identifies the summary message contents start with: a hash of
// its first text, 0 when contents start with none.
func summaryID(contents []*genai.Content) uint64 {
	if len(contents) == 0 || contents[0] == nil || len(contents[0].Parts) == 0 || contents[0].Parts[0] == nil {
		return 0
	}
	text := contents[0].Parts[0].Text
	if !strings.HasPrefix(text, summaryHeader) {
		return 0
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(text))
	return max(h.Sum64(), 1)
}
