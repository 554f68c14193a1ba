package core

import "google.golang.org/genai"

// What the engine reads of a model response (NeedsGuard, afterResponse).

// promptTokens is the provider's prompt-token count of the request, 0 when
// the adapter does not count.
func (r *Response) promptTokens() int {
	if r.UsageMetadata == nil {
		return 0
	}
	return int(r.UsageMetadata.PromptTokenCount)
}

// cachedTokens is the provider's count of the prompt tokens it read from its
// prompt cache, 0 when it reports none; a count that is negative or above
// the prompt's own (prompt) is not believable and reads as none.
func (r *Response) cachedTokens(prompt int) int {
	n := int(r.UsageMetadata.CachedContentTokenCount)
	if n < 0 || n > prompt {
		return 0
	}
	return n
}

// cutAtOutputLimit reports whether the response stopped at the output
// limit.
func (r *Response) cutAtOutputLimit() bool {
	return r.FinishReason == genai.FinishReasonMaxTokens
}

// asksForTools reports whether the response asks for function calls.
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
