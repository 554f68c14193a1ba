package core

import (
	"encoding/binary"
	"math"
	"reflect"
	"time"

	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/state"
)

// Generators of the fuzz targets' harder inputs: cyclic, shared and deep
// values, media whose headers claim huge sizes, parts with every genai.Part
// field set, and provider usage reports. Sizes are bounded by the reader's
// node budget, so one input stays fast whatever the fuzzer makes of it.

// fuzzNodeBudget bounds the containers one reader builds in deep chains and
// the leaves shared sub-values expand to, so a fuzz input stays fast
// however it is mutated (a 12,000-deep value alone takes milliseconds to
// estimate and fingerprint).
const fuzzNodeBudget = 14_000

// spend takes up to n nodes from the reader's budget and returns how many
// it got.
func (r *fuzzReader) spend(n int) int {
	n = max(0, min(n, fuzzNodeBudget-r.spent))
	r.spent += n
	return n
}

// leaf returns a scalar of one of the types decoded JSON and Go tools hold.
func (r *fuzzReader) leaf() any {
	switch r.intn(6) {
	case 0:
		return nil
	case 1:
		return r.bool()
	case 2:
		return math.Float64frombits(r.u64())
	case 3:
		return int64(r.u64())
	default:
		return r.str(12)
	}
}

// typedCycleCost is what a cycle through a typed container or a struct
// costs to walk, in nodes: walkers hand such values to encoding/json, which
// only notices the cycle 1,000 levels down.
const typedCycleCost = 1000

// cyclic returns a map or slice that contains itself: directly, through a
// child, through a typed container or a struct, through a sub-slice of
// itself, or around a loop long enough to pass every walker's tracking
// depth.
func (r *fuzzReader) cyclic(depth int) any {
	k := r.intn(9)
	if (k == 5 || k == 6) && r.spend(typedCycleCost) < typedCycleCost {
		k = 0
	}
	switch k {
	case 0: // a map holding itself, among other keys
		m := map[string]any{}
		for range r.intn(3) {
			m[r.str(6)] = r.value(depth + 1)
		}
		m[r.str(4)] = m
		return m
	case 1: // a slice holding itself
		s := make([]any, 1+r.intn(4))
		for i := range s {
			s[i] = r.leaf()
		}
		s[r.intn(len(s))] = s
		return s
	case 2: // a slice holding a shorter view of itself
		s := make([]any, 2+r.intn(4))
		for i := range s {
			s[i] = r.leaf()
		}
		s[0] = s[:1+r.intn(len(s))]
		return s
	case 3: // map -> slice -> map
		m := map[string]any{"x": r.leaf()}
		m["list"] = []any{r.leaf(), m, r.leaf()}
		return m
	case 4: // slice -> map -> slice
		s := []any{r.leaf(), nil}
		s[1] = map[string]any{"back": s}
		return s
	case 5: // map -> []map[string]any -> map
		m := map[string]any{}
		m["items"] = []map[string]any{{"a": r.leaf()}, m}
		return m
	case 6: // through a struct and a pointer, which walkers hand to encoding/json
		m := map[string]any{}
		m["s"] = struct{ V any }{m}
		if r.bool() {
			m["p"] = &m
		}
		return m
	case 7: // a loop of up to 300 containers, the last pointing at the first
		n := 2 + r.spend(r.intn(300))
		first := map[string]any{}
		cur := first
		for i := range n {
			if r.bool() && i%2 == 0 {
				next := map[string]any{}
				cur["n"] = []any{i, next}
				cur = next
				continue
			}
			next := map[string]any{"i": i}
			cur["n"] = next
			cur = next
		}
		cur["loop"] = first
		return first
	default: // two containers holding each other and themselves, shared twice
		a := map[string]any{}
		b := []any{a, nil}
		a["b"], a["b2"], a["self"] = b, b, a
		b[1] = b
		return []any{a, b, a}
	}
}

// shared returns a value whose sub-values are referenced many times: a
// small value whose expansion, as JSON, is up to thousands of times larger.
// The expansion is charged to the budget: every walker may expand it.
func (r *fuzzReader) shared(depth int) any {
	before := r.spent
	// The shared value is small: a deep one expanded thousands of times
	// (typed containers go through encoding/json) is seconds of work.
	var v any = r.str(16)
	if r.bool() {
		v = map[string]any{r.str(4): r.leaf(), "n": []any{r.leaf(), r.leaf()}}
	}
	size := 1 + r.spent - before // nodes of v, expanded
	copies := 1 + r.intn(16)
	if r.spend(size*copies) < size*copies {
		return r.str(8)
	}
	for range r.intn(15) {
		if r.spend(size*copies) < size*copies {
			break
		}
		size *= 2
		switch r.intn(3) {
		case 0:
			v = []any{v, v}
		case 1:
			v = map[string]any{"l": v, "r": v}
		default:
			v = []map[string]any{{"a": v}, {"b": v}}
		}
	}
	s := make([]any, copies)
	for i := range s {
		s[i] = v
	}
	return s
}

// deep returns a value nested hundreds to 12,500 levels deep, built in a
// loop: maps, slices and typed containers in a pattern drawn from the
// input, sometimes with siblings, sometimes with the innermost level
// pointing back at the outermost.
func (r *fuzzReader) deep() any {
	n := 100 + r.intn(1000)
	if r.intn(8) == 0 {
		n = 10_000 + r.intn(2_500)
	}
	n = r.spend(n)
	pattern := []byte{r.byte(), r.byte(), r.byte()}
	var v any = r.leaf()
	var innermost map[string]any
	if r.intn(4) == 0 {
		innermost = map[string]any{"bottom": v}
		v = innermost
	}
	for i := range n {
		switch pattern[i%len(pattern)] % 5 {
		case 0:
			v = map[string]any{"k": v}
		case 1:
			v = []any{v}
		case 2:
			v = []map[string]any{{"k": v}}
		case 3:
			v = map[string]any{"a": v, "b": i, "c": "x"}
		default:
			v = []any{i, v, nil}
		}
	}
	if innermost != nil {
		innermost["top"] = v // a cycle 12,000 levels long
	}
	return v
}

// fuzzMIMEs are the MIME types inline and file data is drawn with.
var fuzzMIMEs = []string{
	"image/png", "image/gif", "image/jpeg", "image/webp", "image/heic",
	"application/pdf", "text/plain", "text/csv; charset=utf-8", "application/json",
	"audio/wav", "audio/mpeg", "video/mp4", "IMAGE/PNG", "", "application/octet-stream",
}

// hugeSide returns an image side: small, near a format's limit or near 2^31.
func (r *fuzzReader) hugeSide() uint32 {
	switch r.intn(6) {
	case 0:
		return 0
	case 1:
		return uint32(1 + r.intn(4096))
	case 2:
		return 1<<31 - uint32(r.intn(3))
	case 3:
		return math.MaxUint32 - uint32(r.intn(3))
	case 4:
		return 1<<16 - 1
	default:
		return uint32(r.u64())
	}
}

// media returns a MIME type and data: random bytes, or a header of the
// type's format claiming a small, huge or impossible size.
func (r *fuzzReader) media() (string, []byte) {
	mime := fuzzMIMEs[r.intn(len(fuzzMIMEs))]
	if r.bool() {
		return mime, []byte(r.str(64))
	}
	w, h := r.hugeSide(), r.hugeSide()
	switch r.intn(7) {
	case 0:
		return mime, pngHeader(w, h)
	case 1:
		return mime, gifHeader(uint16(w), uint16(h))
	case 2:
		return mime, jpegHeader(uint16(w), uint16(h))
	case 3:
		return mime, webpHeader(w, h)
	case 4:
		return mime, wavHeader(uint32(r.u64()), w, h)
	case 5:
		pages := r.intn(200)
		b := []byte("%PDF-1.7\n")
		for range pages {
			b = append(b, "/Type /Page\n"...)
		}
		return mime, b
	default:
		return mime, pngHeader(w, h)[:r.intn(34)]
	}
}

// gifHeader is the start of a GIF89a of the given logical screen size.
func gifHeader(w, h uint16) []byte {
	b := []byte("GIF89a")
	b = binary.LittleEndian.AppendUint16(b, w)
	b = binary.LittleEndian.AppendUint16(b, h)
	b = append(b, 0, 0, 0)
	// An image descriptor, which image/gif reads the size from too.
	b = append(b, 0x2c, 0, 0, 0, 0)
	b = binary.LittleEndian.AppendUint16(b, w)
	b = binary.LittleEndian.AppendUint16(b, h)
	return append(b, 0)
}

// jpegHeader is the start of a baseline JPEG whose SOF0 gives the size.
func jpegHeader(w, h uint16) []byte {
	b := []byte{0xff, 0xd8, 0xff, 0xc0, 0, 17, 8}
	b = binary.BigEndian.AppendUint16(b, h)
	b = binary.BigEndian.AppendUint16(b, w)
	b = append(b, 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1)
	return append(b, 0xff, 0xd9)
}

// webpHeader is the start of an extended WebP (VP8X) of the given canvas
// size, which holds 24 bits per side.
func webpHeader(w, h uint32) []byte {
	b := []byte("RIFF")
	b = binary.LittleEndian.AppendUint32(b, 30)
	b = append(b, "WEBPVP8X"...)
	b = binary.LittleEndian.AppendUint32(b, 10)
	b = append(b, 0, 0, 0, 0)
	b = append(b, byte(w-1), byte((w-1)>>8), byte((w-1)>>16))
	return append(b, byte(h-1), byte((h-1)>>8), byte((h-1)>>16))
}

// wavHeader is a WAV header with the given byte rate, data size and
// format-chunk size.
func wavHeader(byteRate, dataSize, fmtSize uint32) []byte {
	fmtSize = 16 + fmtSize%8
	b := []byte("RIFF")
	b = binary.LittleEndian.AppendUint32(b, 36+dataSize)
	b = append(b, "WAVEfmt "...)
	b = binary.LittleEndian.AppendUint32(b, fmtSize)
	b = append(b, 1, 0, 2, 0)
	b = binary.LittleEndian.AppendUint32(b, 44_100)
	b = binary.LittleEndian.AppendUint32(b, byteRate)
	b = append(b, 4, 0, 16, 0)
	b = append(b, make([]byte, fmtSize-16)...)
	b = append(b, "data"...)
	return binary.LittleEndian.AppendUint32(b, dataSize)
}

// Named string values genai defines, drawn for its enum-like fields.
var fuzzEnums = map[reflect.Type][]string{
	reflect.TypeFor[genai.Outcome]():  {string(genai.OutcomeOK), string(genai.OutcomeFailed), string(genai.OutcomeDeadlineExceeded), ""},
	reflect.TypeFor[genai.Language](): {string(genai.LanguagePython), ""},
	reflect.TypeFor[genai.FunctionResponseScheduling](): {
		string(genai.FunctionResponseSchedulingSilent), string(genai.FunctionResponseSchedulingWhenIdle),
		string(genai.FunctionResponseSchedulingInterrupt), "",
	},
	reflect.TypeFor[genai.ToolType](): {
		string(genai.ToolTypeGoogleSearchWeb), string(genai.ToolTypeGoogleSearchImage), string(genai.ToolTypeURLContext),
		string(genai.ToolTypeGoogleMaps), string(genai.ToolTypeFileSearch), "",
	},
	reflect.TypeFor[genai.PartMediaResolutionLevel](): {
		string(genai.PartMediaResolutionLevelMediaResolutionLow), string(genai.PartMediaResolutionLevelMediaResolutionUltraHigh), "",
	},
}

// fill sets v, a value reached from genai.Part, from the input: each
// exported field of a struct is set or left zero as the input says, down to
// a bounded depth. It knows kinds rather than fields, so a field genai adds
// is fuzzed without a change here.
func (r *fuzzReader) fill(v reflect.Value, name string, depth int) {
	if depth > 5 {
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if f.IsExported() && r.intn(3) == 0 {
				r.fill(v.Field(i), f.Name, depth+1)
			}
		}
	case reflect.Pointer:
		e := reflect.New(v.Type().Elem())
		r.fill(e.Elem(), name, depth+1)
		v.Set(e)
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			if name == "Data" {
				_, b := r.media()
				v.SetBytes(b)
			} else {
				v.SetBytes([]byte(r.str(40)))
			}
			return
		}
		n := r.intn(4)
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			if r.intn(5) > 0 {
				r.fill(s.Index(i), name, depth+1)
			}
		}
		v.Set(s)
	case reflect.Map:
		if v.Type() == reflect.TypeFor[map[string]any]() {
			v.Set(reflect.ValueOf(r.args()))
		}
	case reflect.Interface:
		if x := r.value(1); x != nil {
			v.Set(reflect.ValueOf(x))
		}
	case reflect.String:
		switch {
		case fuzzEnums[v.Type()] != nil:
			vals := fuzzEnums[v.Type()]
			if r.bool() {
				v.SetString(vals[r.intn(len(vals))])
				return
			}
		case name == "Name":
			v.SetString(r.name())
			return
		case name == "ID":
			v.SetString(string(rune('a' + r.intn(3))))
			return
		case name == "MIMEType":
			v.SetString(fuzzMIMEs[r.intn(len(fuzzMIMEs))])
			return
		}
		v.SetString(r.str(60))
	case reflect.Bool:
		v.SetBool(r.bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if v.Type() == reflect.TypeFor[time.Duration]() && r.bool() {
			v.SetInt(int64(r.intn(7200)) * int64(time.Second))
			return
		}
		v.SetInt(int64(r.u64()))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(r.u64())
	case reflect.Float32, reflect.Float64:
		if r.bool() {
			v.SetFloat(float64(r.intn(120)) / 4)
			return
		}
		v.SetFloat(math.Float64frombits(r.u64()))
	}
}

// anyPart returns a part with any of its fields set, chosen by the input.
func (r *fuzzReader) anyPart() *genai.Part {
	p := &genai.Part{}
	r.fill(reflect.ValueOf(p).Elem(), "Part", 0)
	return p
}

// decorate sets the fields any part may carry besides its data: a thought
// flag and signature, media resolution, video metadata and metadata; with
// other, also any other field (so a call may carry a response, as malformed
// parts do).
func (r *fuzzReader) decorate(p *genai.Part, other bool) *genai.Part {
	if p == nil || r.intn(4) > 0 {
		return p
	}
	n := 4
	if other {
		n = 5
	}
	switch r.intn(n) {
	case 0:
		p.Thought = true
		p.ThoughtSignature = []byte(r.str(64))
	case 1:
		p.MediaResolution = &genai.PartMediaResolution{Level: genai.PartMediaResolutionLevel(r.str(24))}
		if r.bool() {
			n := int32(r.u64())
			p.MediaResolution.NumTokens = &n
		}
	case 2:
		fps := math.Float64frombits(r.u64())
		if r.bool() {
			fps = float64(r.intn(60))
		}
		p.VideoMetadata = &genai.VideoMetadata{StartOffset: time.Duration(r.u64()), EndOffset: time.Duration(r.intn(1 << 16)), FPS: &fps}
	case 3:
		p.PartMetadata = r.args()
	default:
		r.fill(reflect.ValueOf(p).Elem(), "Part", 0)
	}
	return p
}

// responseParts returns the inline and file data a function response may
// carry.
func (r *fuzzReader) responseParts() []*genai.FunctionResponsePart {
	if r.intn(3) > 0 {
		return nil
	}
	ps := make([]*genai.FunctionResponsePart, r.intn(4))
	for i := range ps {
		switch r.intn(4) {
		case 0:
		case 1:
			ps[i] = &genai.FunctionResponsePart{FileData: &genai.FunctionResponseFileData{FileURI: r.str(30), MIMEType: fuzzMIMEs[r.intn(len(fuzzMIMEs))], DisplayName: r.str(10)}}
		default:
			mime, data := r.media()
			ps[i] = &genai.FunctionResponsePart{InlineData: &genai.FunctionResponseBlob{MIMEType: mime, Data: data, DisplayName: r.str(10)}}
		}
	}
	return ps
}

// call and response are a function call and its response, with the
// optional fields set as the input says.
func (r *fuzzReader) call(name, id string) *genai.FunctionCall {
	fc := &genai.FunctionCall{Name: name, ID: id, Args: r.args()}
	if r.intn(6) == 0 {
		b := r.bool()
		fc.WillContinue = &b
		for range r.intn(3) {
			a := &genai.PartialArg{JsonPath: "$." + r.str(8), StringValue: r.str(20)}
			if r.bool() {
				f := math.Float64frombits(r.u64())
				a.NumberValue = &f
			}
			fc.PartialArgs = append(fc.PartialArgs, a)
		}
	}
	return fc
}

func (r *fuzzReader) response(name, id string) *genai.FunctionResponse {
	fr := &genai.FunctionResponse{Name: name, ID: id, Response: r.args(), Parts: r.responseParts()}
	if r.intn(6) == 0 {
		b := r.bool()
		fr.WillContinue = &b
		vals := fuzzEnums[reflect.TypeFor[genai.FunctionResponseScheduling]()]
		fr.Scheduling = genai.FunctionResponseScheduling(vals[r.intn(len(vals))])
	}
	return fr
}

// usage returns the usage a provider reports for a request the guard
// estimated at est tokens, having reported earlier counts summing to sum:
// none, zero, negative, the largest int32, the estimate scaled by a
// plausible or absurd ratio, or a running total.
func (r *fuzzReader) usage(est, sum int) *genai.GenerateContentResponseUsageMetadata {
	clamp := func(f float64) int32 {
		return int32(math.Max(math.MinInt32, math.Min(math.MaxInt32, f)))
	}
	var n int32
	switch r.intn(10) {
	case 0:
		return nil
	case 1:
		n = 0
	case 2:
		n = -1 - int32(r.intn(1<<16))
	case 3:
		n = math.MaxInt32
	case 4:
		n = math.MinInt32
	case 5:
		n = clamp(float64(sum) + float64(est)) // cumulative
	case 6:
		n = int32(r.u64())
	default:
		ratios := []float64{1, 1.1, 0.9, 1.49, 1.51, 0.19, 0.21, 4.9, 5.1, 1e-6, 100, 1e9}
		n = clamp(math.Round(float64(est) * ratios[r.intn(len(ratios))]))
	}
	u := &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: n}
	if r.bool() {
		u.CandidatesTokenCount = int32(r.u64())
		u.TotalTokenCount = int32(r.u64())
		u.CachedContentTokenCount = int32(r.u64())
	}
	return u
}

// window returns a context window for the agent: mostly small enough
// for compaction to happen, sometimes the registry's (0), and sometimes
// enormous, up to math.MaxInt.
func (r *fuzzReader) window() int {
	switch r.intn(10) {
	case 0:
		return 0
	case 1:
		return math.MaxInt - r.intn(3)
	case 2:
		huge := []int{math.MaxInt32, math.MaxInt32 + 1, math.MaxUint32, state.MaxPlausible, state.MaxPlausible + 1, math.MaxInt / 2, math.MaxInt / 10 * 9}
		return huge[r.intn(len(huge))]
	default:
		return 200 + r.intn(30_000)
	}
}

// todos returns a value for the todo list's state key: typed lists,
// decoded lists of maps whose fields hold anything (cyclic and deep values
// included), a list holding itself, or any value.
func (r *fuzzReader) todos() any {
	switch r.intn(6) {
	case 0:
		return []TodoItem{{Content: r.str(20), Status: r.str(5)}}
	case 1:
		return []*TodoItem{nil, {Content: r.str(20)}}
	case 2, 3:
		list := make([]any, r.intn(6))
		for i := range list {
			switch r.intn(4) {
			case 0:
				list[i] = r.value(1)
			case 1:
				list[i] = list // the list holds itself
			default:
				list[i] = map[string]any{"content": r.value(1), "status": r.value(1), "active_form": r.value(1)}
			}
		}
		return list
	default:
		return r.value(0)
	}
}
