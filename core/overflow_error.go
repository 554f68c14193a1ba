package core

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"google.golang.org/genai"
)

// Overflow errors: recognising a provider's "the request is too long" error,
// and the counts it states (AsContextOverflow).

// ContextOverflow describes a provider's rejection of a request as longer
// than the model's context window.
type ContextOverflow struct {
	// Provider is the shape the error matched: "gemini", "anthropic",
	// "openai" or "generic".
	Provider string
	// Tokens is the request's size as the provider counted it, 0 when the
	// error does not say.
	Tokens int
	// Limit is the model's limit as the provider stated it, 0 when the error
	// does not say.
	Limit int
}

// AsContextOverflow reports whether err is a provider's context-overflow
// error, and what it says about the request's size and the model's limit.
// It recognises Gemini ("The input token count (N) exceeds the maximum
// number of tokens allowed (M)", HTTP 400 INVALID_ARGUMENT, also as a
// genai.APIError), Anthropic ("prompt is too long: N tokens > M maximum",
// "input length and max_tokens exceed context limit"), OpenAI-compatible
// servers (context_length_exceeded, "maximum context length is M tokens ...
// resulted in N tokens") and generic messages ("context length", "context
// window", "too many tokens", "token limit", ...). Rate limits and quotas
// (HTTP 429, "tokens per minute"), output-length errors, cancellation and
// deadlines are not overflows.
func AsContextOverflow(err error) (ContextOverflow, bool) {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return ContextOverflow{}, false
	}
	msg := err.Error()
	var apiErr genai.APIError
	var apiPtr *genai.APIError
	switch {
	case errors.As(err, &apiErr):
	case errors.As(err, &apiPtr) && apiPtr != nil:
		apiErr = *apiPtr
	}
	if apiErr.Code == http.StatusTooManyRequests || strings.EqualFold(apiErr.Status, "RESOURCE_EXHAUSTED") {
		return ContextOverflow{}, false
	}
	if apiErr.Message != "" && !strings.Contains(msg, apiErr.Message) {
		msg += " " + apiErr.Message
	}
	return parseOverflow(msg)
}

// overflowPattern is one provider message shape; tokens and limit are the
// indexes of the submatches holding the counts (0: not given).
type overflowPattern struct {
	provider      string
	re            *regexp.Regexp
	tokens, limit int
}

// num matches a count, possibly with thousands separators.
const num = `([0-9][0-9,]*)`

var overflowPatterns = []overflowPattern{
	{"gemini", regexp.MustCompile(`input token count\s*\(?` + num + `\)?\s*exceeds the maximum number of tokens allowed\s*\(?` + num), 1, 2},
	{"gemini", regexp.MustCompile(`exceeds the maximum number of tokens allowed`), 0, 0},
	{"anthropic", regexp.MustCompile(`prompt is too long:?\s*` + num + `\s*tokens?\s*>\s*` + num), 1, 2},
	{"anthropic", regexp.MustCompile("input length and `?max_tokens`? exceed context limit:?\\s*" + num + `\s*\+\s*` + num + `\s*>\s*` + num), 1, 3},
	{"anthropic", regexp.MustCompile(`prompt is too long`), 0, 0},
	// OpenAI and OpenAI-compatible servers (vLLM, xAI, Groq, ...). The
	// count of the messages alone wins over the total with the completion.
	{"openai", regexp.MustCompile(`\(` + num + ` in the messages`), 1, 0},
	{"openai", regexp.MustCompile(`(?:resulted in|you requested|request contains|prompt contains|request has|input has)\s*` + num + `\s*(?:input\s*)?tokens`), 1, 0},
	{"openai", regexp.MustCompile(`maximum (?:context|prompt) length is\s*` + num), 0, 1},
	{"openai", regexp.MustCompile(`input \(` + num + ` tokens?\) is longer than the model's context length \(` + num), 1, 2},
	{"openai", regexp.MustCompile(`context_length_exceeded|maximum context length`), 0, 0},
}

// genericOverflow are phrases that mark an overflow error of any provider.
var genericOverflow = []string{
	"context length", "context_length", "context window", "context size",
	"too many tokens", "token limit", "tokens limit", "maximum context",
	"input is too long", "prompt too long", "input too long",
	"maximum prompt length", "too long for the model",
}

// notOverflow are phrases of errors that mention tokens but that compaction
// cannot fix: rate limits, quotas and output lengths.
var notOverflow = []string{
	"rate limit", "rate_limit", "ratelimit", "quota", "tokens per min", "per minute",
	"resource_exhausted", "too many requests",
	"max_tokens is too large", "max_output_tokens", "maxoutputtokens", "completion tokens", "output token",
}

// parseOverflow classifies an error message (see AsContextOverflow).
func parseOverflow(msg string) (ContextOverflow, bool) {
	low := strings.ToLower(msg)
	var out ContextOverflow
	matched := false
	for _, p := range overflowPatterns {
		m := p.re.FindStringSubmatch(low)
		if m == nil {
			continue
		}
		if !matched {
			out.Provider = p.provider
			matched = true
		}
		if p.tokens > 0 && out.Tokens == 0 {
			out.Tokens = parseCount(m[p.tokens])
		}
		if p.limit > 0 && out.Limit == 0 {
			out.Limit = parseCount(m[p.limit])
		}
	}
	if !matched {
		for _, s := range genericOverflow {
			if strings.Contains(low, s) {
				out.Provider, matched = "generic", true
				break
			}
		}
		if !matched {
			return ContextOverflow{}, false
		}
	}
	// A specific input-size pattern wins over the exclusions (Anthropic's
	// "input length and max_tokens exceed context limit" names max_tokens).
	if out.Tokens == 0 {
		for _, s := range notOverflow {
			if strings.Contains(low, s) {
				return ContextOverflow{}, false
			}
		}
	}
	return out, true
}

// parseCount reads a count with optional thousands separators; an
// implausible value is 0 (unknown).
func parseCount(s string) int {
	s = strings.ReplaceAll(s, ",", "")
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 || n > maxPlausibleTokenNum {
		return 0
	}
	return n
}
