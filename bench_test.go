package contextguard

import (
	"fmt"
	"testing"

	"google.golang.org/adk/model"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/contextguardtest"
)

// benchSizes are the history sizes of the benchmarks, in estimated tokens.
var benchSizes = []struct {
	name   string
	tokens int
}{
	{"8k", 8_000}, {"50k", 50_000}, {"200k", 200_000}, {"1M", 1_000_000},
}

// toolKinds rotate through the tool results of a synthetic history.
var toolKinds = []contextguardtest.Kind{
	contextguardtest.KindPrettyJSON, contextguardtest.KindLogLines, contextguardtest.KindMarkdownTable,
	contextguardtest.KindKubectlTable, contextguardtest.KindGoCode, contextguardtest.KindBase64,
	contextguardtest.KindYAML, contextguardtest.KindProseEnglish,
}

// syntheticRequest builds a request of about target tokens: a 5 KB system
// prompt, 20 tool schemas of 2 KB, and turns of user text, a model call with
// nested arguments, a 5-50 KB tool result of a rotating kind, and model text.
func syntheticRequest(target int) *model.LLMRequest {
	var decls []*genai.FunctionDeclaration
	for i := range 20 {
		decls = append(decls, &genai.FunctionDeclaration{
			Name:                 contextguardtest.MCPToolName(i),
			Description:          contextguardtest.Generate(contextguardtest.KindProseEnglish, 200, int64(i)),
			ParametersJsonSchema: contextguardtest.MCPSchema(2_000, int64(i)),
		})
	}
	req := &model.LLMRequest{
		Model: "gemini-2.5-flash",
		Config: &genai.GenerateContentConfig{
			SystemInstruction: genai.NewContentFromText(contextguardtest.Generate(contextguardtest.KindProseEnglish, 5_000, 1), genai.RoleUser),
			Tools:             []*genai.Tool{{FunctionDeclarations: decls}},
		},
	}
	for i := 0; requestTokens(testEst, req) < target; i++ {
		kind := toolKinds[i%len(toolKinds)]
		size := 5_000 + (i*7919)%45_000
		req.Contents = append(req.Contents,
			userMsg(contextguardtest.Generate(contextguardtest.KindProseEnglish, 300, int64(i))),
			&genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{
				Name: "query",
				Args: map[string]any{"q": fmt.Sprintf("select * from t%d", i), "opts": map[string]any{"limit": 10.0 + float64(i), "filters": []any{"a", "b", map[string]any{"k": "v"}}}},
			}}}},
			&genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{
				Name:     "query",
				Response: map[string]any{"output": contextguardtest.Generate(kind, size, int64(i))},
			}}}},
			modelMsg(contextguardtest.Generate(contextguardtest.KindProseEnglish, 500, int64(i)+7)),
		)
		if target < 20_000 && requestTokens(testEst, req) > target {
			break
		}
	}
	return req
}

// adkCopy mimics ADK's per-step rebuild: new Content and Part structs and new
// top-level maps, sharing the strings of the session events.
func adkCopy(cs []*genai.Content) []*genai.Content {
	out := make([]*genai.Content, len(cs))
	for i, c := range cs {
		cp := &genai.Content{Role: c.Role}
		for _, p := range c.Parts {
			pp := *p
			if p.FunctionCall != nil {
				fc := *p.FunctionCall
				fc.Args = copyMap(fc.Args)
				pp.FunctionCall = &fc
			}
			if p.FunctionResponse != nil {
				fr := *p.FunctionResponse
				fr.Response = copyMap(fr.Response)
				pp.FunctionResponse = &fr
			}
			cp.Parts = append(cp.Parts, &pp)
		}
		out[i] = cp
	}
	return out
}

func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// BenchmarkBeforeModel measures the guard's BeforeModelCallback when no
// compaction is needed: "steady" appends one new content per call to a
// history the guard has seen (ADK rebuilds the request each step); "cold" is
// the first call of a session.
func BenchmarkBeforeModel(b *testing.B) {
	for _, size := range benchSizes {
		base := syntheticRequest(size.tokens)
		g, _ := newTestGuard(b, fixedSummary("unused"), WithMaxTokens(size.tokens*10))

		b.Run("steady/"+size.name, func(b *testing.B) {
			ctx := newFakeCtx("a")
			// A pool of new contents, one appended per call, and the rebuilt
			// history copies, made before the timer.
			const pool = 64
			reqs := make([]*model.LLMRequest, pool)
			for i := range reqs {
				cs := append(adkCopy(base.Contents), userMsg(contextguardtest.Generate(contextguardtest.KindProseEnglish, 400, int64(1000+i))))
				reqs[i] = &model.LLMRequest{Model: base.Model, Config: base.Config, Contents: cs}
			}
			_, _ = g.beforeModel(ctx, reqs[0]) // the history has been seen before
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				r := reqs[i%pool]
				r.Contents = r.Contents[:len(r.Contents):len(r.Contents)]
				if _, err := g.beforeModel(ctx, r); err != nil {
					b.Fatal(err)
				}
			}
		})

		b.Run("cold/"+size.name, func(b *testing.B) {
			// A new guard each time: the first call of a session in a fresh
			// process, with nothing cached.
			b.ReportAllocs()
			for range b.N {
				b.StopTimer()
				g, _ := newTestGuard(b, fixedSummary("unused"), WithMaxTokens(size.tokens*10))
				ctx := newFakeCtx("a")
				b.StartTimer()
				if _, err := g.beforeModel(ctx, base); err != nil {
					b.Fatal(err)
				}
			}
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
				bytes += len(requestText(&model.LLMRequest{Contents: []*genai.Content{c}}))
			}
			b.SetBytes(int64(bytes))
			b.ReportAllocs()
			for range b.N {
				_ = requestTokens(testEst, req)
			}
		})
	}
}
