package contentid

import "google.golang.org/genai"

func userMsg(text string) *genai.Content  { return genai.NewContentFromText(text, genai.RoleUser) }
func modelMsg(text string) *genai.Content { return genai.NewContentFromText(text, genai.RoleModel) }

func callMsg(name string, args map[string]any) *genai.Content {
	return &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{Name: name, Args: args}}}}
}

func respMsg(name string, resp map[string]any) *genai.Content {
	return &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{Name: name, Response: resp}}}}
}

// match reports whether c is the content recorded between from and to, by
// a Check started at from.
func match(tp *Tape, c *genai.Content, from, to Mark) bool {
	ck := tp.Check(from)
	return ck.Match(c, to)
}
