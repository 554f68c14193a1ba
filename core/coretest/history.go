package coretest

import (
	"fmt"
	"strings"

	"google.golang.org/genai"
)

// Filler is size bytes of token-dense text (identifiers and numbers, about
// 2.5 bytes a token), different for each seed.
func Filler(size, seed int) string {
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "id%d=%x ", (seed*7919+i*31)%997, (seed+1)*(i+3)*2654435761%65521)
	}
	return b.String()[:size]
}

// History is n user/model exchanges of about size bytes each, marked
// OLD-U<i> and OLD-M<i>.
func History(n, size int) []*genai.Content {
	var cs []*genai.Content
	for i := range n {
		cs = append(cs,
			genai.NewContentFromText(fmt.Sprintf("OLD-U%d %s", i, Filler(size, 2*i)), genai.RoleUser),
			genai.NewContentFromText(fmt.Sprintf("OLD-M%d %s", i, Filler(size, 2*i+1)), genai.RoleModel))
	}
	return cs
}

// ToolHistory is a conversation of turns with a tool call and a tool result
// of about 2 KB each, distinct per seed.
func ToolHistory(turns int, seed string) []*genai.Content {
	var cs []*genai.Content
	for i := range turns {
		cs = append(cs,
			genai.NewContentFromText(fmt.Sprintf("%s: question %d about the deployment", seed, i), genai.RoleUser),
			&genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{
				Name: "kubectl_logs", Args: map[string]any{"pod": fmt.Sprintf("api-%d", i), "tail": float64(200)}}}}},
			&genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{
				Name: "kubectl_logs", Response: map[string]any{"output": strings.Repeat(fmt.Sprintf("%s line %d: request served in 12ms\n", seed, i), 60)}}}}},
			genai.NewContentFromText(fmt.Sprintf("%s: the pod api-%d is healthy; latency is stable.", seed, i), genai.RoleModel),
		)
	}
	return cs
}

// ADKCopy copies cs as ADK rebuilds a request at every step: new Content
// and Part structs and new top-level maps, sharing the session events'
// strings and nested values.
func ADKCopy(cs []*genai.Content) []*genai.Content {
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

// UserWith is a user message of text (none when empty) and copies of
// attachments.
func UserWith(text string, attachments ...*genai.Part) *genai.Content {
	c := &genai.Content{Role: genai.RoleUser}
	if text != "" {
		c.Parts = append(c.Parts, &genai.Part{Text: text})
	}
	for _, p := range attachments {
		q := *p
		c.Parts = append(c.Parts, &q)
	}
	return c
}

// ForContext is ADK's rendering of another agent's event for the current
// agent (ConvertForeignEvent): "For context:", then what the agent said.
func ForContext(agentName, said string) *genai.Content {
	return &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{
		{Text: "For context:"},
		{Text: "[" + agentName + "] said: " + said},
	}}
}
