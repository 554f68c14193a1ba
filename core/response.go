package core

import "google.golang.org/genai"

// promptTokens is the provider's prompt-token count, 0 for none.
func (r *Response) promptTokens() int {
	if r.UsageMetadata == nil {
		return 0
	}
	return int(r.UsageMetadata.PromptTokenCount)
}

// cachedTokens is the prompt tokens read from the provider's cache, 0 for
// none or an unbelievable count (negative, above prompt).
func (r *Response) cachedTokens(prompt int) int {
	n := int(r.UsageMetadata.CachedContentTokenCount)
	if n < 0 || n > prompt {
		return 0
	}
	return n
}

func (r *Response) cutAtOutputLimit() bool {
	return r.FinishReason == genai.FinishReasonMaxTokens
}

func (r *Response) asksForTools() bool {
	if r.Content == nil {
		return false
	}
	for _, p := range r.Content.Parts {
		if p != nil && p.FunctionCall != nil {
			return true
		}
	}
	return false
}
