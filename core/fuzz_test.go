package core

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"hash/crc32"
	"image/png"
	"log/slog"
	"math"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/coretest"

	"github.com/adk-contextguard/contextguard/core/internal/contentid"
	"github.com/adk-contextguard/contextguard/core/internal/convo"
	"github.com/adk-contextguard/contextguard/core/internal/countcache"
	"github.com/adk-contextguard/contextguard/core/internal/pairs"
	"github.com/adk-contextguard/contextguard/core/internal/state"
	"github.com/adk-contextguard/contextguard/core/internal/textcut"
)

// Fuzz targets (go test -fuzz=FuzzName). Each turns the fuzzer's bytes into
// structured input with fuzzReader; the seed corpora are in
// testdata/fuzz/<FuzzName>/. `make fuzz FUZZTIME=10m` runs each in turn.

// fuzzReader draws structured values from fuzz input; once the input is
// exhausted it returns zeros, so every input decodes to something.
type fuzzReader struct {
	data []byte
	// pool is text that strings are cut from, so the fuzzer's string
	// mutations reach message texts.
	pool string
	// spent counts the nodes built against fuzzNodeBudget.
	spent int
}

func (r *fuzzReader) byte() byte {
	if len(r.data) == 0 {
		return 0
	}
	b := r.data[0]
	r.data = r.data[1:]
	return b
}

func (r *fuzzReader) intn(n int) int {
	if n <= 1 {
		return 0
	}
	v := int(r.byte())<<8 | int(r.byte())
	return v % n
}

func (r *fuzzReader) bool() bool { return r.byte()&1 == 1 }

func (r *fuzzReader) u64() uint64 {
	var b [8]byte
	for i := range b {
		b[i] = r.byte()
	}
	return binary.LittleEndian.Uint64(b[:])
}

// str returns up to max bytes, from the pool or the raw input (possibly
// invalid UTF-8).
func (r *fuzzReader) str(max int) string {
	n := r.intn(max + 1)
	if r.bool() && len(r.pool) > 0 {
		start := r.intn(len(r.pool))
		end := min(start+n, len(r.pool))
		return r.pool[start:end]
	}
	n = min(n, len(r.data))
	s := string(r.data[:n])
	r.data = r.data[n:]
	return s
}

// name returns a short tool name from a small set, so calls and responses
// often match.
func (r *fuzzReader) name() string {
	names := []string{"get", "list", "kubectl", "read_file", "", "get"}
	return names[r.intn(len(names))]
}

// value builds a JSON-ish value: the types decoded JSON holds, plus the
// typed values Go tools return, NaN and infinities, deep nesting (up to
// 12,000 levels), values that contain themselves and shared sub-values.
func (r *fuzzReader) value(depth int) any {
	r.spent++
	if depth > 6 {
		return r.str(8)
	}
	switch r.intn(20) {
	case 0:
		return nil
	case 1:
		return r.bool()
	case 2:
		return math.Float64frombits(r.u64())
	case 3:
		return float64(int16(r.intn(1 << 16)))
	case 4:
		return int(int32(r.u64()))
	case 5:
		return r.str(64)
	case 6:
		return json.Number(r.str(12))
	case 7, 8:
		m := map[string]any{}
		for range r.intn(5) {
			m[r.str(10)] = r.value(depth + 1)
		}
		return m
	case 9, 10:
		s := make([]any, r.intn(5))
		for i := range s {
			s[i] = r.value(depth + 1)
		}
		return s
	case 11:
		return []string{r.str(10), r.str(10)}
	case 12:
		return map[string]string{r.str(6): r.str(20)}
	case 13:
		return []byte(r.str(20))
	case 14:
		// Deep nesting, beyond every walker's depth bound.
		var v any = r.str(4)
		for range 1 + r.intn(300) {
			v = []any{map[string]any{"k": v}}
		}
		return v
	case 15, 16:
		return r.cyclic(depth)
	case 17:
		return r.shared(depth)
	case 18:
		return r.deep()
	default:
		return struct {
			A int
			B string
		}{r.intn(100), r.str(8)}
	}
}

// args returns a map for function-call arguments and responses.
func (r *fuzzReader) args() map[string]any {
	switch r.intn(12) {
	case 0:
		return nil
	case 1:
		// The map itself is part of a cycle.
		if m, ok := r.cyclic(1).(map[string]any); ok {
			return m
		}
	case 2:
		return map[string]any{r.str(4): r.deep()}
	}
	m := map[string]any{}
	for range r.intn(4) {
		m[r.str(8)] = r.value(1)
	}
	return m
}

// part returns one part of any kind, sometimes nil or empty: every
// genai.Part field is drawn, by a case of its own or by the reflection
// filler, which sets any field genai defines.
func (r *fuzzReader) part() *genai.Part {
	switch r.intn(16) {
	case 0:
		return nil
	case 1:
		return &genai.Part{}
	case 2:
		return &genai.Part{Text: r.str(200), Thought: true, ThoughtSignature: []byte(r.str(32))}
	case 3:
		return r.decorate(&genai.Part{FunctionCall: r.call(r.name(), r.str(2))}, true)
	case 4:
		return r.decorate(&genai.Part{FunctionResponse: r.response(r.name(), r.str(2))}, true)
	case 5:
		mime, data := r.media()
		return r.decorate(&genai.Part{InlineData: &genai.Blob{MIMEType: mime, Data: data, DisplayName: r.str(10)}}, true)
	case 6:
		return r.decorate(&genai.Part{FileData: &genai.FileData{FileURI: r.str(30), MIMEType: fuzzMIMEs[r.intn(len(fuzzMIMEs))], DisplayName: r.str(10)}}, true)
	case 7:
		if r.bool() {
			return r.decorate(&genai.Part{ExecutableCode: &genai.ExecutableCode{Code: r.str(300), Language: genai.LanguagePython, ID: r.str(2)}}, true)
		}
		return r.decorate(&genai.Part{CodeExecutionResult: &genai.CodeExecutionResult{Output: r.str(300), Outcome: genai.OutcomeOK, ID: r.str(2)}}, true)
	case 8:
		if r.bool() {
			return r.decorate(&genai.Part{ToolCall: &genai.ToolCall{ID: r.str(2), ToolType: genai.ToolTypeGoogleSearchWeb, Args: r.args()}}, true)
		}
		return r.decorate(&genai.Part{ToolResponse: &genai.ToolResponse{ID: r.str(2), ToolType: genai.ToolTypeURLContext, Response: r.args()}}, true)
	case 9, 10:
		return r.anyPart()
	default:
		return r.decorate(&genai.Part{Text: r.str(400)}, true)
	}
}

// pngHeader is the start of a PNG of the given dimensions: what the
// estimator reads (image.DecodeConfig), without the cost of encoding pixels.
func pngHeader(w, h uint32) []byte {
	ihdr := []byte("IHDR")
	ihdr = binary.BigEndian.AppendUint32(ihdr, w)
	ihdr = binary.BigEndian.AppendUint32(ihdr, h)
	ihdr = append(ihdr, 8, 2, 0, 0, 0)
	b := []byte("\x89PNG\r\n\x1a\n")
	b = binary.BigEndian.AppendUint32(b, 13)
	b = append(b, ihdr...)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(ihdr))
}

// contents builds a conversation: mostly well-formed turns (user text,
// model calls answered by the next content, model text), with malformed
// pieces mixed in (nil contents, orphan responses, unanswered calls, odd
// roles, random parts).
func (r *fuzzReader) contents() []*genai.Content {
	var cs []*genai.Content
	for range r.intn(24) {
		switch r.intn(12) {
		case 0:
			cs = append(cs, nil)
		case 1:
			parts := make([]*genai.Part, r.intn(4))
			for i := range parts {
				parts[i] = r.part()
			}
			role := []string{genai.RoleUser, genai.RoleModel, "", "system"}[r.intn(4)]
			cs = append(cs, &genai.Content{Role: role, Parts: parts})
		case 2, 3:
			// A tool step: n parallel calls answered by one content.
			n := 1 + r.intn(3)
			call := &genai.Content{Role: genai.RoleModel}
			resp := &genai.Content{Role: genai.RoleUser}
			withIDs := r.bool()
			for i := range n {
				name := r.name()
				id := ""
				if withIDs {
					id = string(rune('a' + i))
				}
				call.Parts = append(call.Parts, r.decorate(&genai.Part{FunctionCall: r.call(name, id)}, false))
				resp.Parts = append(resp.Parts, r.decorate(&genai.Part{FunctionResponse: r.response(name, id)}, false))
			}
			cs = append(cs, call)
			if r.intn(6) > 0 {
				cs = append(cs, resp)
			}
		case 4:
			cs = append(cs, userMsg(convo.SyntheticContinuations[0]))
		case 5, 6:
			cs = append(cs, modelMsg(r.str(300)))
		default:
			cs = append(cs, userMsg(r.str(600)))
		}
	}
	return cs
}

// fuzzStateValue returns a value for a numeric state key: absent (nil), a
// plausible number in one of the types session services return, or
// something impossible.
func (r *fuzzReader) stateNumber(plausible int) any {
	switch r.intn(9) {
	case 0, 1:
		return nil
	case 2:
		return plausible
	case 3:
		return float64(plausible)
	case 4:
		return json.Number(r.str(6))
	case 5:
		return -1 - r.intn(100)
	case 6:
		return math.Float64frombits(r.u64())
	case 7:
		return int64(r.u64())
	default:
		return r.value(0)
	}
}

func (r *fuzzReader) stateString(plausible string) any {
	switch r.intn(6) {
	case 0, 1:
		return nil
	case 2, 3:
		return plausible
	case 4:
		return r.str(200)
	default:
		return r.value(0)
	}
}

// oneWindow serves one window for every model: the fuzzer reaches the
// windows WithMaxTokens refuses (below 1,024 tokens, up to math.MaxInt)
// through it, as a custom ModelRegistry could serve them.
type oneWindow int

// ContextWindow is the registry's one window, whatever the model.
func (w oneWindow) ContextWindow(string) int { return int(w) }

// fuzzRegistry is built once: catwalk's data is parsed on construction.
var fuzzRegistry = sync.OnceValue(func() ModelRegistry {
	return NewCrushRegistry(WithRegistryLogger(quietLog))
})

// fuzzLogger discards the guard's logs, unless CONTEXTGUARD_FUZZ_LOG is set
// (to read what the guard did with a failing input).
func fuzzLogger() *slog.Logger {
	if os.Getenv("CONTEXTGUARD_FUZZ_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return quietLog
}

var fuzzModels = []string{"gemini-2.5-flash", "gpt-4o", "claude-sonnet-4-5", "acme-unknown-llm", ""}

// latestUserHead is the start of the user's latest request, which must
// appear in every request the guard lets through.
func latestUserHead(user *genai.Content, raw []*genai.Content) string {
	return strings.TrimSpace(textcut.Prefix(textcut.Sanitize(convo.LatestUserText(user, raw)), 16))
}

// requestTexts joins every text a request's contents carry.
func requestTexts(cs []*genai.Content) string {
	var b strings.Builder
	for _, c := range cs {
		b.WriteString(textcut.ContentText(c))
		b.WriteByte('\n')
	}
	return b.String()
}

// FuzzBeforeModel feeds the guard random conversations, random and
// impossible state, random windows and a misbehaving summarizer, then a
// random model error and a second call. The guard must never panic, must
// return a request that fits or ErrIrreducible, must keep the user's latest
// request, and must not break function call/response pairs.
func FuzzBeforeModel(f *testing.F) {
	f.Add([]byte{}, "")
	f.Add([]byte("\x03\x10\x00\x05\x07\x00\x22hello\x01\x02"), "please fix the build; the pods crash")
	f.Add([]byte(strings.Repeat("\x00\x07\x01\x90", 64)), strings.Repeat("log line 42 ERROR timeout\n", 40))
	f.Fuzz(func(t *testing.T, data []byte, text string) {
		// The conversation is drawn from the first half of the input, the
		// state and configuration from the second, so both vary.
		half := len(data) / 2
		raw := (&fuzzReader{data: data[:half], pool: text}).contents()
		r := &fuzzReader{data: data[half:], pool: text}
		modelName := fuzzModels[r.intn(len(fuzzModels))]

		sumText := r.str(2000)
		mode := r.intn(6)
		sum := &fakeLLM{name: fuzzModels[r.intn(len(fuzzModels))], reply: func(context.Context, *Request) (string, error) {
			switch mode {
			case 0:
				return "", errBoom
			case 1:
				return "", nil
			case 2:
				return strings.Repeat(sumText+" long ", 2_000), nil
			case 3:
				panic("fuzz summarizer panic")
			default:
				return sumText, nil
			}
		}}
		registry, opts := fuzzRegistry(), []AgentOption(nil)
		if w := r.window(); w == 0 || (w >= minWindow && w <= maxWindow) {
			opts = append(opts, WithMaxTokens(w))
		} else {
			// WithMaxTokens refuses such a window; a registry may still serve it.
			registry = oneWindow(w)
		}
		switch r.intn(4) {
		case 0:
			opts = append(opts, WithTriggerFraction(0.05+float64(r.intn(90))/100))
		case 1:
			opts = append(opts, WithRecoveryModel(sum))
		}
		g := newGuard(registry, WithLogger(fuzzLogger()))
		g.addModel("a", sum, opts...)
		if err := g.Err(); err != nil {
			t.Fatal(err)
		}

		ctx := newFakeCtx("a")
		for i := len(raw) - 1; i >= 0; i-- {
			if c := raw[i]; c != nil && c.Role == genai.RoleUser && textcut.ContentText(c) != "" && !convo.IsSynthetic(c) {
				ctx.user = c
				break
			}
		}
		if r.intn(4) == 0 {
			ctx.user = nil
		}
		// State: plausible, wrong-typed or impossible, key by key.
		w := r.intn(len(raw) + 3)
		fp := ""
		if w > 0 && w <= len(raw) {
			fp = contentid.Fingerprint(raw[w-1])
		}
		for key, v := range map[string]any{
			state.KeySummary:          r.stateString(r.str(300)),
			state.KeyUserRequest:      r.stateString(convo.LatestUserText(ctx.user, raw)),
			state.KeyFingerprint:      r.stateString(fp),
			state.KeyWatermark:        r.stateNumber(w),
			state.KeySummarizedAt:     r.stateNumber(r.intn(50_000)),
			state.KeyRealTokens:       r.stateNumber(r.intn(50_000)),
			state.KeyLastEstimate:     r.stateNumber(r.intn(50_000)),
			state.KeyCompactions:      r.stateNumber(r.intn(5)),
			state.KeyIrreducibleFloor: r.stateNumber(r.intn(50_000)),
		} {
			if v != nil {
				ctx.set(key, v)
			}
		}
		if r.bool() {
			_ = ctx.state.Set(todosKey, r.todos())
		}
		if r.intn(4) == 0 {
			// Values of other tools' keys, which the guard must not walk
			// into trouble either.
			_ = ctx.state.Set("app:"+r.str(6), r.value(0))
		}

		req := &Request{Model: modelName, Contents: append([]*genai.Content(nil), raw...)}
		switch r.intn(4) {
		case 0:
			req.Config = nil
		case 1:
			req.Config = &genai.GenerateContentConfig{SystemInstruction: genai.NewContentFromText(r.str(3000), genai.RoleUser)}
		default:
			req.Config = &genai.GenerateContentConfig{Tools: []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{{Name: r.name(), Description: r.str(100)}}}}}
		}
		window := g.limits(g.agent("a"), modelName).Window
		check := func(step string, raw []*genai.Content, req *Request, err error) {
			t.Helper()
			if err != nil {
				if !errors.Is(err, ErrIrreducible) {
					t.Fatalf("%s: unexpected error %v", step, err)
				}
				return
			}
			if n := requestTokens(estimatorFor(modelName), engineReq(req)); n > window {
				t.Fatalf("%s: the request let through holds %d estimated tokens; the window is %d", step, n, window)
			}
			if head := latestUserHead(ctx.user, raw); head != "" {
				out := requestTexts(req.Contents)
				if !strings.Contains(out, head) && !strings.Contains(textcut.Sanitize(out), head) {
					t.Fatalf("%s: the user's latest request %q was dropped", step, head)
				}
			}
			if coretest.CheckPairs(raw) == nil {
				if err := coretest.CheckPairs(req.Contents); err != nil {
					t.Fatalf("%s: pair-safe contents became unsafe: %v", step, err)
				}
			}
		}
		_, err := g.beforeModel(ctx, req)
		check("first call", raw, req, err)

		// Then steps of the session: the provider's answer with its usage
		// (a plausible count, none, zero, negative, the largest int32, an
		// absurd ratio or a running total) or a model error, maybe an
		// overflow; then the next call, with more contents.
		reported := 0
		for step := range 1 + r.intn(3) {
			if err == nil && r.intn(4) > 0 {
				est := requestTokens(estimatorFor(modelName), engineReq(req))
				resp := &Response{UsageMetadata: r.usage(est, reported)}
				// A partial response: the adapter does not pass it to the
				// engine (adapter_adk.go of the root module).
				partial := r.intn(8) == 0
				if u := resp.UsageMetadata; u != nil && u.PromptTokenCount > 0 {
					reported += int(u.PromptTokenCount)
				}
				if !partial {
					if _, aerr := g.afterModel(ctx, resp, nil); aerr != nil {
						t.Fatalf("step %d: afterModel: %v", step, aerr)
					}
				}
				st := state.IO{Agent: "a", Log: quietLog}.Load(ctx.state)
				for _, n := range []int{st.Watermark, st.SummarizedAt, st.RealTokens, st.LastEstimate, st.Compactions, st.Floor, st.ProviderRatio, st.SuspectRatio, st.Window} {
					if n < 0 {
						t.Fatalf("step %d: a negative count in state after a report of %+v: %+v", step, *resp.UsageMetadata, st)
					}
				}
			} else {
				msgs := []error{
					&coretest.OverflowError{Style: coretest.ErrorStyle(r.intn(3)), Tokens: r.intn(100_000), Limit: r.intn(100_000)},
					errors.New(r.str(200)),
					genai.APIError{Code: 400 + r.intn(200), Message: r.str(120)},
				}
				_, _ = g.onModelError(ctx, req, msgs[r.intn(len(msgs))])
			}

			raw = append(append([]*genai.Content(nil), raw...), r.contents()...)
			req = &Request{Model: modelName, Contents: append([]*genai.Content(nil), raw...), Config: req.Config}
			if r.intn(8) == 0 {
				ctx.state = newMapState() // the last call's delta was lost
			}
			_, err = g.beforeModel(ctx, req)
			check("call "+strconv.Itoa(step+2), raw, req, err)
		}
	})
}

// FuzzEstimator checks the token estimator on random text and JSON-ish
// values: no panics, no negative counts, empty text costs nothing, doubling
// a text does not lower its count and does not blow it up, and the cached
// and direct counts agree.
func FuzzEstimator(f *testing.F) {
	f.Add([]byte{}, "")
	f.Add([]byte("\x07\x00\x05\x03"), "HTTPServer2Go 你好 {\"a\":[1,2]} \xff\xfe")
	f.Add([]byte(strings.Repeat("\x0e\x01", 20)), strings.Repeat("aGVsbG8gd29ybGQ=", 30))
	f.Fuzz(func(t *testing.T, data []byte, text string) {
		r := &fuzzReader{data: data, pool: text}
		e := estimatorFor(fuzzModels[r.intn(len(fuzzModels))])
		n := e.Text(text)
		if n < 0 || (text == "") != (n == 0) {
			t.Fatalf("text(%q) = %d", text, n)
		}
		// Joining the two copies can merge runs at the seam (a digit run
		// becomes longer, a word longer), which real tokenizers also price
		// differently; allow for that, but not for a blow-up.
		if d := e.Text(text + text); d < n || float64(d) > 2.5*float64(n)+16 {
			t.Fatalf("text(s+s) = %d for text(s) = %d", d, n)
		}
		v := r.value(0)
		args, _ := v.(map[string]any)
		if args == nil {
			args = map[string]any{"v": v}
		}
		c := &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{
			{Text: text},
			{FunctionCall: &genai.FunctionCall{Name: r.name(), Args: args}},
			{FunctionResponse: &genai.FunctionResponse{Name: r.name(), Response: args}},
			r.part(),
		}}
		direct := e.Content(c)
		if direct < 0 {
			t.Fatalf("content = %d", direct)
		}
		cache := countcache.New()
		cache.Begin()
		ce := countcache.Counter{Base: e, Cache: cache}
		if got := ce.Content(c); got != direct {
			t.Fatalf("cached count %d, direct %d", got, direct)
		}
		if got := ce.Content(c); got != direct {
			t.Fatalf("second cached count %d, direct %d", got, direct)
		}
		if d := e.Declaration(&genai.FunctionDeclaration{Name: text, Description: text, ParametersJsonSchema: v}); d < 0 {
			t.Fatalf("declaration = %d", d)
		}
		_ = contentid.Fingerprint(c)
	})
}

// FuzzPairSafeStart checks the pair-safe cut on random conversations: the
// cut only moves back, no function response after it answers a call before
// it, and a pair-safe conversation stays pair-safe from the cut on.
func FuzzPairSafeStart(f *testing.F) {
	f.Add([]byte{}, 0)
	f.Add([]byte("\x00\x0c\x00\x02\x00\x01\x00\x02\x00\x03\x00\x07"), 2)
	f.Add([]byte(strings.Repeat("\x00\x02\x00\x01\x01", 30)), 5)
	f.Fuzz(func(t *testing.T, data []byte, start int) {
		r := &fuzzReader{data: data, pool: "some text"}
		cs := r.contents()
		s := pairs.SafeStart(cs, start)
		if start <= 0 || start >= len(cs) {
			if s != start {
				t.Fatalf("a cut outside (0, %d) moved: %d -> %d", len(cs), start, s)
			}
			return
		}
		if s < 0 || s > start {
			t.Fatalf("pairs.SafeStart(%d) = %d", start, s)
		}
		for i := s; i < len(cs); i++ {
			for _, p := range pairs.Parts(cs[i]) {
				if p == nil || p.FunctionResponse == nil {
					continue
				}
				fr := p.FunctionResponse
				if pairs.CallIndex(cs[s:i], fr) >= 0 {
					continue
				}
				if j := pairs.CallIndex(cs[:s], fr); j >= 0 {
					t.Fatalf("cut %d: the response %q in content %d answers the call in content %d before the cut", s, fr.Name, i, j)
				}
			}
		}
		if coretest.CheckPairs(cs) == nil {
			if err := coretest.CheckPairs(cs[s:]); err != nil {
				t.Fatalf("cut %d of a pair-safe conversation: %v", s, err)
			}
		}
	})
}

// numberAsFloat is a Go number as the float64 JSON decoding gives: what
// state.DecodeInt must agree with.
func numberAsFloat(v any) (float64, bool) {
	switch r := reflect.ValueOf(v); {
	case r.CanInt():
		return float64(r.Int()), true
	case r.CanUint():
		return float64(r.Uint()), true
	case r.CanFloat():
		return r.Float(), true
	}
	return 0, false
}

// FuzzStateDecoding checks decoding of session state: state.DecodeInt accepts
// exactly the non-negative whole numbers it can represent, and state.IO.Load
// and loadTodos survive any value of any type.
func FuzzStateDecoding(f *testing.F) {
	f.Add([]byte{}, "")
	f.Add([]byte("\x00\x02\x00\x03\x00\x06"), "42")
	f.Add([]byte(strings.Repeat("\x00\x08\x00\x07", 10)), "1e3")
	f.Fuzz(func(t *testing.T, data []byte, text string) {
		r := &fuzzReader{data: data, pool: text}
		for _, v := range []any{json.Number(text), text, r.value(0), r.stateNumber(r.intn(1000)), math.Float64frombits(r.u64()), int64(r.u64()), float32(math.Float64frombits(r.u64()))} {
			n, ok := state.DecodeInt(v)
			if !ok {
				if n != 0 {
					t.Fatalf("DecodeInt(%#v) = %d, false", v, n)
				}
				continue
			}
			if n < 0 || n > state.MaxPlausible {
				t.Fatalf("DecodeInt(%#v) = %d", v, n)
			}
			if f, isFloat := numberAsFloat(v); isFloat && f != float64(n) {
				t.Fatalf("DecodeInt(%#v) = %d", v, n)
			}
		}

		st := newMapState()
		keys := []string{state.KeySummary, state.KeyWatermark, state.KeySummarizedAt, state.KeyRealTokens, state.KeyLastEstimate, state.KeyFingerprint, state.KeyUserRequest, state.KeyCompactions, state.KeyIrreducibleFloor}
		for _, k := range keys {
			if r.bool() {
				_ = st.Set(k+"a", r.stateNumber(r.intn(100)))
			} else if r.bool() {
				_ = st.Set(k+"a", r.stateString(r.str(50)))
			}
		}
		g := state.IO{Agent: "a", Log: quietLog}.Load(st)
		for _, n := range []int{g.Watermark, g.SummarizedAt, g.RealTokens, g.LastEstimate, g.Compactions, g.Floor} {
			if n < 0 || n > state.MaxPlausible {
				t.Fatalf("loaded %d from %v", n, st.m)
			}
		}

		todos := r.todos()
		_ = st.Set(todosKey, todos)
		items := loadTodos(st)
		if _, decoded := todos.([]any); decoded {
			for _, it := range items {
				if it.Content == "" {
					t.Fatalf("loadTodos kept an item without content: %#v", it)
				}
			}
		}
	})
}

// FuzzOverflowError checks the recognition of provider errors on random
// messages: no panics, counts never negative, and the kit's overflow errors
// always recognised with their counts when the count is over the limit.
func FuzzOverflowError(f *testing.F) {
	f.Add("The input token count (9000) exceeds the maximum number of tokens allowed (8000).", 9000, 8000)
	f.Add("prompt is too long: 210000 tokens > 200000 maximum", 1, 2)
	f.Add("This model's maximum context length is 4096 tokens. However, you requested 5000 tokens", 0, 0)
	f.Fuzz(func(t *testing.T, msg string, tokens, limit int) {
		if ov, ok := AsContextOverflow(errors.New(msg)); ok && (ov.Tokens < 0 || ov.Limit < 0 || ov.Provider == "") {
			t.Fatalf("%q: %+v", msg, ov)
		}
		// An overflow's count is over its limit: a count at or under it is
		// no usable count (AsContextOverflow).
		a, b := 1+abs(tokens%(state.MaxPlausible-1)), 1+abs(limit%(state.MaxPlausible-1))
		tokens, limit = max(a, b), min(a, b)
		if tokens == limit {
			tokens++
		}
		for _, style := range []coretest.ErrorStyle{coretest.ErrorGemini, coretest.ErrorAnthropic, coretest.ErrorOpenAI} {
			ov, ok := AsContextOverflow(&coretest.OverflowError{Style: style, Tokens: tokens, Limit: limit})
			if !ok || ov.Tokens != tokens || ov.Limit != limit {
				t.Fatalf("%v overflow of %d/%d: %+v, %v", style, tokens, limit, ov, ok)
			}
		}
	})
}

func TestPNGHeaderDecodes(t *testing.T) {
	cfg, err := png.DecodeConfig(bytes.NewReader(pngHeader(640, 480)))
	if err != nil || cfg.Width != 640 || cfg.Height != 480 {
		t.Fatalf("%+v %v", cfg, err)
	}
}
