package contentid

import (
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"
)

// adkClone copies c as ADK does for every model call (a reflection deep
// copy, internal/llminternal's clone): new structs, slices, maps and byte
// slices; strings and the values held in an interface are shared.
func adkClone(c *genai.Content) *genai.Content {
	var cp func(src, dst reflect.Value)
	cp = func(src, dst reflect.Value) {
		switch src.Kind() {
		case reflect.Struct:
			for i := range src.NumField() {
				cp(src.Field(i), dst.Field(i))
			}
		case reflect.Slice:
			if src.IsNil() {
				return
			}
			dst.Set(reflect.MakeSlice(src.Type(), src.Len(), src.Cap()))
			for i := range src.Len() {
				cp(src.Index(i), dst.Index(i))
			}
		case reflect.Map:
			if src.IsNil() {
				return
			}
			dst.Set(reflect.MakeMap(src.Type()))
			for _, k := range src.MapKeys() {
				dst.SetMapIndex(k, src.MapIndex(k))
			}
		case reflect.Pointer:
			if src.IsNil() {
				return
			}
			p := reflect.New(src.Elem().Type())
			cp(src.Elem(), p.Elem())
			dst.Set(p)
		default:
			dst.Set(src)
		}
	}
	out := reflect.New(reflect.TypeOf(*c))
	cp(reflect.ValueOf(c).Elem(), out.Elem())
	return out.Interface().(*genai.Content)
}

// tapeHistory is one content of each shape a session holds: text with a
// thought signature, a call with nested arguments, a response with nested
// values, inline data.
func tapeHistory() []*genai.Content {
	call := callMsg("read_logs", map[string]any{"query": map[string]any{"service": "api", "limit": 50.0, "fields": []any{"ts", "msg"}}, "tail": 10})
	call.Parts[0].ThoughtSignature = []byte("signature of the call")
	answer := modelMsg("The api restarted twice.")
	answer.Parts[0].ThoughtSignature = []byte("signature of the answer")
	return []*genai.Content{
		userMsg("Why did the api restart?"),
		call,
		respMsg("read_logs", map[string]any{"lines": []any{"boot", map[string]any{"level": "error", "n": int64(2)}}, "tags": []string{"a", "b"}, "ok": true, "none": nil}),
		{Role: genai.RoleUser, Parts: []*genai.Part{{InlineData: &genai.Blob{MIMEType: "image/png", Data: []byte("\x89PNG fake image bytes")}}}},
		answer,
	}
}

// recordAll records cs on a new tape, returning each content's end.
func recordAll(t *testing.T, cs []*genai.Content) (*Tape, []Mark) {
	t.Helper()
	var tp Tape
	var ends []Mark
	for _, c := range cs {
		require.True(t, tp.Record(c))
		ends = append(ends, tp.End())
	}
	return &tp, ends
}

// matches reports whether cs match the tape, content by content.
func matches(tp *Tape, ends []Mark, cs []*genai.Content) []bool {
	out := make([]bool, len(cs))
	from := Mark{}
	for i, c := range cs {
		out[i] = match(tp, c, from, ends[i])
		from = ends[i]
	}
	return out
}

// TestTape_MatchesADKCopies: the contents themselves and ADK's copies of
// them match their records, though every struct, map and byte slice of a
// copy is new.
func TestTape_MatchesADKCopies(t *testing.T) {
	h := tapeHistory()
	tp, ends := recordAll(t, h)
	copies := make([]*genai.Content, len(h))
	for i, c := range h {
		copies[i] = adkClone(c)
	}
	require.NotSame(t, &h[1].Parts[0].ThoughtSignature[0], &copies[1].Parts[0].ThoughtSignature[0])
	all := []bool{true, true, true, true, true}
	assert.Equal(t, all, matches(tp, ends, h))
	assert.Equal(t, all, matches(tp, ends, copies))
}

// TestTape_SeesEveryEdit: an edit of a recorded content, made in place on
// the recorded content itself (the same pointers) or on ADK's copy of it,
// fails its match, whatever it changes: a text at the same length, the
// same text in new bytes, a map entry at any depth, a number, a byte of a
// byte slice, a part added. Contents the edit did not touch still match.
func TestTape_SeesEveryEdit(t *testing.T) {
	for _, tc := range []struct {
		name string
		at   int
		edit func(cs []*genai.Content)
	}{
		{"a text changed in place at the same length", 0, func(cs []*genai.Content) {
			cs[0].Parts[0].Text = strings.ToUpper(cs[0].Parts[0].Text)
		}},
		{"the same text in new bytes", 4, func(cs []*genai.Content) {
			cs[4].Parts[0].Text = strings.Clone(cs[4].Parts[0].Text)
		}},
		{"a top-level argument changed", 1, func(cs []*genai.Content) {
			cs[1].Parts[0].FunctionCall.Args["tail"] = 11
		}},
		{"a nested argument changed in place", 1, func(cs []*genai.Content) {
			cs[1].Parts[0].FunctionCall.Args["query"].(map[string]any)["service"] = "db!"
		}},
		{"a nested argument added", 1, func(cs []*genai.Content) {
			cs[1].Parts[0].FunctionCall.Args["query"].(map[string]any)["since"] = "1h"
		}},
		{"an array element changed in place", 1, func(cs []*genai.Content) {
			cs[1].Parts[0].FunctionCall.Args["query"].(map[string]any)["fields"].([]any)[1] = "lvl"
		}},
		{"a key renamed", 2, func(cs []*genai.Content) {
			r := cs[2].Parts[0].FunctionResponse.Response
			r["nothing"] = r["none"]
			delete(r, "none")
		}},
		{"a deep number changed", 2, func(cs []*genai.Content) {
			cs[2].Parts[0].FunctionResponse.Response["lines"].([]any)[1].(map[string]any)["n"] = int64(3)
		}},
		{"a number's type changed", 2, func(cs []*genai.Content) {
			cs[2].Parts[0].FunctionResponse.Response["lines"].([]any)[1].(map[string]any)["n"] = 2.0
		}},
		{"a []string element changed in place", 2, func(cs []*genai.Content) {
			cs[2].Parts[0].FunctionResponse.Response["tags"].([]string)[0] = "c"
		}},
		{"a byte of inline data changed in place", 3, func(cs []*genai.Content) {
			cs[3].Parts[0].InlineData.Data[5] ^= 1
		}},
		{"a byte of a thought signature changed in place", 4, func(cs []*genai.Content) {
			cs[4].Parts[0].ThoughtSignature[0] ^= 1
		}},
		{"a part added", 0, func(cs []*genai.Content) {
			cs[0].Parts = append(cs[0].Parts, &genai.Part{Text: "and"})
		}},
		{"a role changed", 3, func(cs []*genai.Content) {
			cs[3].Role = genai.RoleModel
		}},
	} {
		for _, copied := range []bool{false, true} {
			t.Run(tc.name+map[bool]string{false: "/in place", true: "/on ADK's copy"}[copied], func(t *testing.T) {
				h := tapeHistory()
				tp, ends := recordAll(t, h)
				cs := h
				if copied {
					cs = make([]*genai.Content, len(h))
					for i, c := range h {
						cs[i] = adkClone(c)
					}
				}
				tc.edit(cs)
				want := []bool{true, true, true, true, true}
				want[tc.at] = false
				assert.Equal(t, want, matches(tp, ends, cs))
			})
		}
	}
}

// TestTape_RecordsWhatItCanVerify: a content holding a payload value the
// tape cannot look into (a struct, a typed map) is not recorded, and the
// tape is left as it was; a nil content is not recorded either.
func TestTape_RecordsWhatItCanVerify(t *testing.T) {
	var tp Tape
	require.True(t, tp.Record(userMsg("hello")))
	end, bytes := tp.End(), tp.Bytes()
	for _, c := range []*genai.Content{
		nil,
		callMsg("f", map[string]any{"v": struct{ X int }{1}}),
		respMsg("f", map[string]any{"ok": "yes", "m": map[string]string{"a": "b"}}),
	} {
		assert.False(t, tp.Record(c))
		assert.Equal(t, end, tp.End())
		assert.Equal(t, bytes, tp.Bytes())
	}
	tp.Truncate(Mark{})
	assert.Zero(t, tp.Bytes(), "an empty tape retains nothing")
}
