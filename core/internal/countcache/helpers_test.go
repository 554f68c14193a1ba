package countcache

import (
	"fmt"
	"strings"

	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/estimate"
)

// testEst is the feature estimator the tests count with.
var testEst = estimate.ForModel("gemini-2.5-flash")

func userMsg(text string) *genai.Content  { return genai.NewContentFromText(text, genai.RoleUser) }
func modelMsg(text string) *genai.Content { return genai.NewContentFromText(text, genai.RoleModel) }

func callMsg(name string, args map[string]any) *genai.Content {
	return &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{Name: name, Args: args}}}}
}

func respMsg(name string, resp map[string]any) *genai.Content {
	return &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{Name: name, Response: resp}}}}
}

// filler is size bytes of token-dense text, different for each seed.
func filler(size, seed int) string {
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "id%d=%x ", (seed*7919+i*31)%997, (seed+1)*(i+3)*2654435761%65521)
	}
	return b.String()[:size]
}

// history is n user/model exchanges of about size bytes each.
func history(n, size int) []*genai.Content {
	var cs []*genai.Content
	for i := range n {
		cs = append(cs, userMsg(fmt.Sprintf("U%d %s", i, filler(size, 2*i))), modelMsg(fmt.Sprintf("M%d %s", i, filler(size, 2*i+1))))
	}
	return cs
}

// toolHistory is a conversation of turns with tool results of about 2 KB
// each, distinct per seed.
func toolHistory(turns int, seed string) []*genai.Content {
	var cs []*genai.Content
	for i := range turns {
		cs = append(cs,
			userMsg(fmt.Sprintf("%s: question %d about the deployment", seed, i)),
			callMsg("kubectl_logs", map[string]any{"pod": fmt.Sprintf("api-%d", i), "tail": float64(200)}),
			respMsg("kubectl_logs", map[string]any{"output": strings.Repeat(fmt.Sprintf("%s line %d: request served in 12ms\n", seed, i), 60)}),
			modelMsg(fmt.Sprintf("%s: the pod api-%d is healthy; latency is stable.", seed, i)),
		)
	}
	return cs
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
