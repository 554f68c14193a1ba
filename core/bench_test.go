package core

import (
	"encoding/base64"
	"fmt"
	"maps"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/coretest"
	"github.com/adk-contextguard/contextguard/core/internal/benchcpu"
)

// benchSizes are the history sizes of the benchmarks, in estimated tokens.
var benchSizes = []struct {
	name   string
	tokens int
}{
	{"8k", 8_000}, {"50k", 50_000}, {"200k", 200_000}, {"1M", 1_000_000},
}

// toolKinds rotate through the tool results of a synthetic history.
var toolKinds = []coretest.Kind{
	coretest.KindPrettyJSON, coretest.KindLogLines, coretest.KindMarkdownTable,
	coretest.KindKubectlTable, coretest.KindGoCode, coretest.KindBase64,
	coretest.KindYAML, coretest.KindProseEnglish,
}

// syntheticRequest builds a request of about target tokens: a 5 KB system
// prompt, 20 tool schemas of 2 KB, and turns of user text, a model call with
// nested arguments, a 5-50 KB tool result of a rotating kind, and model text;
// at least one turn, so the smallest request (the system prompt and tools
// alone take about 12k tokens) has a history too.
func syntheticRequest(target int) *Request {
	var decls []*genai.FunctionDeclaration
	for i := range 20 {
		decls = append(decls, &genai.FunctionDeclaration{
			Name:                 coretest.MCPToolName(i),
			Description:          coretest.Generate(coretest.KindProseEnglish, 200, int64(i)),
			ParametersJsonSchema: coretest.MCPSchema(2_000, int64(i)),
		})
	}
	req := &Request{
		Model: "gemini-2.5-flash",
		Config: &genai.GenerateContentConfig{
			SystemInstruction: genai.NewContentFromText(coretest.Generate(coretest.KindProseEnglish, 5_000, 1), genai.RoleUser),
			Tools:             []*genai.Tool{{FunctionDeclarations: decls}},
		},
	}
	for i := 0; i == 0 || requestTokens(testEst, engineReq(req)) < target; i++ {
		kind := toolKinds[i%len(toolKinds)]
		size := 5_000 + (i*7919)%45_000
		req.Contents = append(req.Contents,
			userMsg(coretest.Generate(coretest.KindProseEnglish, 300, int64(i))),
			&genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{
				Name: "query",
				Args: map[string]any{"q": fmt.Sprintf("select * from t%d", i), "opts": map[string]any{"limit": 10.0 + float64(i), "filters": []any{"a", "b", map[string]any{"k": "v"}}}},
			}}}},
			&genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{
				Name:     "query",
				Response: map[string]any{"output": coretest.Generate(kind, size, int64(i))},
			}}}},
			modelMsg(coretest.Generate(coretest.KindProseEnglish, 500, int64(i)+7)),
		)
		if target < 20_000 && requestTokens(testEst, engineReq(req)) > target {
			break
		}
	}
	return req
}

// beforeModelSizes are the history sizes of BenchmarkBeforeModel.
var beforeModelSizes = []struct {
	name   string
	tokens int
}{
	{"8k", 8_000}, {"200k", 200_000}, {"1M", 1_000_000},
}

// benchPeriod is how many calls a steady or restart benchmark makes before
// it makes new contents for the next ones (with the timer stopped) and, for
// steady, takes the history back to its start, so the history grows by at
// most benchPeriod short messages.
const benchPeriod = 64

// newMessages makes n user messages of about 100 tokens that no call has
// seen: new strings, new texts.
func newMessages(n, from int) []*genai.Content {
	out := make([]*genai.Content, n)
	for i := range out {
		out[i] = userMsg(fmt.Sprintf("step %d: %s", from+i, coretest.Generate(coretest.KindProseEnglish, 400, int64(from+i))))
	}
	return out
}

// snapshot copies a session state.
func (s *mapState) snapshot() *mapState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return &mapState{m: maps.Clone(s.m)}
}

// historyBytes is the size of a history as text, the measure of the
// estimator's throughput (BenchmarkEstimateRequest).
func historyBytes(cs []*genai.Content) int {
	n := 0
	for _, c := range cs {
		n += len(requestText(&Request{Contents: []*genai.Content{c}}))
	}
	return n
}

// benchCPU is the CPU time of a benchmark's timed part, for a benchmark
// that stops its timer for setup (benchcpu.Report measures the whole
// loop): the calls' cost beside ns/op, which a machine shared with others
// inflates less than wall time.
type benchCPU struct {
	sum, from time.Duration
}

func (c *benchCPU) start() { c.from = benchcpu.Process() }
func (c *benchCPU) stop()  { c.sum += benchcpu.Process() - c.from }

// report stops the measure and adds cpu-ns/op to b.
func (c *benchCPU) report(b *testing.B) {
	c.stop()
	if b.N > 0 && c.sum > 0 {
		b.ReportMetric(float64(c.sum.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

// BenchmarkBeforeModel measures the guard's BeforeModelCallback when no
// compaction is needed, each call bringing a message no call has seen:
//
//   - steady: ADK's append-only history, one new message per call, served
//     by the process that served the previous call;
//   - restart: a session the process has never served (a restart, another
//     replica, a session evicted from the table), with the session state
//     the previous call left: the cache is empty, the prefix record
//     matches;
//   - new: a session without any state: everything is counted, and the
//     throughput is the history's bytes counted per second (2 workers at
//     GOMAXPROCS=2).
func BenchmarkBeforeModel(b *testing.B) {
	for _, size := range beforeModelSizes {
		base := syntheticRequest(size.tokens)
		hist := base.Contents[:len(base.Contents):len(base.Contents)]
		request := func(cs []*genai.Content) *Request {
			return &Request{Model: base.Model, Config: base.Config, Contents: cs}
		}
		// The state the call over the history leaves: the previous call of
		// steady and restart.
		g, _ := newTestGuard(b, fixedSummary("unused"), WithMaxTokens(size.tokens*10))
		prevCtx := newFakeCtx("a")
		if _, err := g.beforeModel(prevCtx, request(hist)); err != nil {
			b.Fatal(err)
		}
		prevState := prevCtx.state.snapshot()

		b.Run("steady/"+size.name, func(b *testing.B) {
			ctx := newFakeCtx("a")
			var msgs []*genai.Content
			cs := hist
			b.ReportAllocs()
			b.ResetTimer()
			var cpu benchCPU
			cpu.start()
			for i := range b.N {
				if i%benchPeriod == 0 {
					b.StopTimer()
					cpu.stop()
					ctx.state = prevState.snapshot()
					msgs, cs = newMessages(benchPeriod, i), hist
					cpu.start()
					b.StartTimer()
				}
				cs = append(cs, msgs[i%benchPeriod])
				if _, err := g.beforeModel(ctx, request(cs[:len(cs):len(cs)])); err != nil {
					b.Fatal(err)
				}
			}
			cpu.report(b)
		})

		b.Run("restart/"+size.name, func(b *testing.B) {
			fresh, _ := newTestGuard(b, fixedSummary("unused"), WithMaxTokens(size.tokens*10))
			var msgs []*genai.Content
			var ctxs []*fakeCtx
			b.ReportAllocs()
			b.ResetTimer()
			var cpu benchCPU
			cpu.start()
			for i := range b.N {
				if i%benchPeriod == 0 {
					b.StopTimer()
					cpu.stop()
					msgs = newMessages(benchPeriod, i)
					ctxs = make([]*fakeCtx, benchPeriod)
					for j := range ctxs {
						ctxs[j] = newFakeCtx("a")
						ctxs[j].sessionID = fmt.Sprintf("restart-%d", i+j)
						ctxs[j].state = prevState.snapshot()
					}
					cpu.start()
					b.StartTimer()
				}
				cs := append(hist, msgs[i%benchPeriod])
				if _, err := fresh.beforeModel(ctxs[i%benchPeriod], request(cs)); err != nil {
					b.Fatal(err)
				}
			}
			cpu.report(b)
		})

		b.Run("new/"+size.name, func(b *testing.B) {
			fresh, _ := newTestGuard(b, fixedSummary("unused"), WithMaxTokens(size.tokens*10))
			msgs := newMessages(b.N, 0)
			bytes := int64(historyBytes(hist))
			b.SetBytes(bytes)
			b.ReportAllocs()
			b.ResetTimer()
			cpu := benchcpu.Process()
			for i := range b.N {
				ctx := newFakeCtx("a")
				ctx.sessionID = fmt.Sprintf("new-%d", i)
				if _, err := fresh.beforeModel(ctx, request(append(hist, msgs[i]))); err != nil {
					b.Fatal(err)
				}
			}
			// MB/s is per wall second, over the cores counting in
			// parallel; cpu-MB/s is per core.
			benchcpu.Report(b, cpu, b.N, bytes)
		})
	}
}

// BenchmarkEstimateRequest is the uncached estimate of a whole request.
func BenchmarkEstimateRequest(b *testing.B) {
	for _, size := range benchSizes {
		req := syntheticRequest(size.tokens)
		b.Run(size.name, func(b *testing.B) {
			bytes := 0
			for _, c := range req.Contents {
				bytes += len(requestText(&Request{Contents: []*genai.Content{c}}))
			}
			b.SetBytes(int64(bytes))
			b.ReportAllocs()
			for range b.N {
				_ = requestTokens(testEst, engineReq(req))
			}
		})
	}
}

// hugeTextBytes is the size of the one text of BenchmarkBeforeModelHugeText.
const hugeTextBytes = 10 << 20

// BenchmarkBeforeModelHugeText is the guard's BeforeModelCallback on a
// request whose user message is one text of hugeTextBytes without a space
// (a file read, an attachment pasted as text), in a session without state:
// a run of one character, and base64 of random bytes without newlines, two
// of the runs the estimator once read again for every word it cut from them
// (seconds per call at this size).
func BenchmarkBeforeModelHugeText(b *testing.B) {
	raw := make([]byte, hugeTextBytes*3/4)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range raw {
		raw[i] = byte(r.Uint32())
	}
	for _, tc := range []struct{ name, text string }{
		{"char_10MB", strings.Repeat("a", hugeTextBytes)},
		{"base64_10MB", base64.StdEncoding.EncodeToString(raw)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			g, _ := newTestGuard(b, fixedSummary("unused"), WithMaxTokens(100_000_000))
			msg := userMsg(tc.text)
			b.SetBytes(int64(len(tc.text)))
			i := 0
			for b.Loop() {
				ctx := newFakeCtx("a")
				ctx.sessionID = fmt.Sprintf("huge-%d", i)
				i++
				if _, err := g.beforeModel(ctx, &Request{Model: "gemini-2.5-flash", Contents: []*genai.Content{msg}}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
