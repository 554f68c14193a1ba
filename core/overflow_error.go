package core

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/state"
)

// ContextOverflow describes a provider's rejection of a request as longer
// than the model's context window.
type ContextOverflow struct {
	// Provider is the shape the error matched: "gemini", "anthropic",
	// "bedrock", "openai" or "generic".
	Provider string
	// Tokens is the request's size as the provider counted it, 0 when the
	// error does not say or says something implausible (zero, negative,
	// beyond 2^40, or not over the limit it states).
	Tokens int
	// Limit is the model's limit as the provider stated it, 0 when the error
	// does not say.
	Limit int
}

// AsContextOverflow reports whether err is a provider's context-overflow
// error, and what it says about the request's size and the model's limit.
// It recognises Gemini and Vertex AI ("The input token count (N) exceeds
// the maximum number of tokens allowed (M)", HTTP 400 INVALID_ARGUMENT,
// also as a genai.APIError), Anthropic ("prompt is too long: N tokens > M
// maximum", "input length and max_tokens exceed context limit"), AWS
// Bedrock ("Input is too long for requested model"), OpenAI, Azure OpenAI
// and OpenAI-compatible servers such as vLLM and LiteLLM
// (context_length_exceeded, "maximum context length is M tokens ...
// resulted in N tokens", "exceed the configured limit of M tokens") and
// generic messages ("context length", "context window", "too many tokens",
// "token limit", ...), Ollama's among them. Rate limits, quotas and billing
// errors (HTTP 429, RESOURCE_EXHAUSTED, "tokens per minute", a daily or
// monthly token limit, an organization's limit, throttling), output-length
// errors, cancellation and deadlines are not overflows.
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

// overflowPattern is one provider message shape; tokens and limit index
// the submatches holding the counts (0: none). exceeds: the message states
// the count as over the limit ("N > M"), so one at or under it is unusable
// (unlike OpenAI's "N tokens (X in the messages ...)" or Anthropic's
// "N + max_tokens > M").
type overflowPattern struct {
	provider      string
	re            *regexp.Regexp
	tokens, limit int
	exceeds       bool
}

const num = `([0-9][0-9,]*)`

// overflowPatterns match the lowercased message; overflow_error_test.go
// holds a real example of each beside its rate-limit look-alikes.
var overflowPatterns = []overflowPattern{
	// Gemini API and Vertex AI (400 INVALID_ARGUMENT).
	{"gemini", regexp.MustCompile(`input token count\s*\(?` + num + `\)?\s*exceeds the maximum number of tokens allowed\s*\(?` + num), 1, 2, true},
	{"gemini", regexp.MustCompile(`exceeds the maximum number of tokens allowed`), 0, 0, false},
	// Anthropic, also through Bedrock, Vertex AI and LiteLLM.
	{"anthropic", regexp.MustCompile(`prompt is too long:?\s*` + num + `\s*tokens?\s*>\s*` + num), 1, 2, true},
	{"anthropic", regexp.MustCompile("input length and `?max_tokens`? exceed context limit:?\\s*" + num + `\s*\+\s*` + num + `\s*>\s*` + num), 1, 3, false},
	{"anthropic", regexp.MustCompile(`prompt is too long`), 0, 0, false},
	// AWS Bedrock's own validation message (no counts).
	{"bedrock", regexp.MustCompile(`input is too long for requested model`), 0, 0, false},
	// OpenAI and compatible servers; the messages' count wins over the
	// total with the completion.
	{"openai", regexp.MustCompile(`\(` + num + ` in (?:the messages|your prompt)`), 1, 0, false},
	{"openai", regexp.MustCompile(`(?:resulted in|you requested|request contains|prompt contains|request has|input has)\s*` + num + `\s*(?:input\s*)?tokens`), 1, 0, false},
	{"openai", regexp.MustCompile(`maximum (?:context|prompt) length is\s*` + num), 0, 1, false},
	{"openai", regexp.MustCompile(`exceed the configured limit of\s*` + num + `\s*tokens`), 0, 1, false},
	{"openai", regexp.MustCompile(`input \(` + num + ` tokens?\) is longer than the model's context length \(` + num), 1, 2, true},
	{"openai", regexp.MustCompile(`prompt \(total length ` + num + `\) is too long to fit into the model \(context length ` + num), 1, 2, true},
	{"openai", regexp.MustCompile(`context_length_exceeded|maximum context length`), 0, 0, false},
}

// genericOverflow marks an overflow of any provider (Ollama, llama.cpp, ...).
var genericOverflow = []string{
	"context length", "context_length", "context window", "context size",
	"too many tokens", "token limit", "tokens limit", "maximum context",
	"input is too long", "prompt too long", "input too long",
	"maximum prompt length", "too long for the model", "contextwindowexceeded",
}

// quotaPhrases mark rate limits, quotas and billing, never overflows
// whatever else they say: many name tokens and limits ("Token limit (N per
// day) exceeded"), some even ask to "reduce the prompt length".
var quotaPhrases = []string{
	"rate limit", "rate_limit", "ratelimit", "rate-limit", "quota", "resource_exhausted", "resource exhausted",
	"too many requests", "throttl", "please wait",
	"per min", "per hour", "per day", "per week", "per month", "(tpm)", "(tpd)", "(rpm)",
	"hourly", "daily", "weekly", "monthly", "billing", "credit balance", "budget", "usage limit",
	"spend limit", "organization",
}

// rateLimitStatus matches an HTTP 429 in an error flattened to text.
var rateLimitStatus = regexp.MustCompile(`(?:error code|status code|status|http|"code"|'code')\W{0,4}429\b`)

// outputPhrases mark output-length errors, unless the message states the
// input's count (Anthropic's names max_tokens).
var outputPhrases = []string{
	"max_tokens is too large", "max_output_tokens", "maxoutputtokens", "max_completion_tokens",
	"completion tokens", "output token",
}

func parseOverflow(msg string) (ContextOverflow, bool) {
	low := strings.ToLower(msg)
	if containsAny(low, quotaPhrases) || rateLimitStatus.MatchString(low) {
		return ContextOverflow{}, false
	}
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
		tokens, limit := 0, 0
		if p.tokens > 0 {
			tokens = parseCount(m[p.tokens])
		}
		if p.limit > 0 {
			limit = parseCount(m[p.limit])
		}
		if p.exceeds && tokens <= limit {
			tokens = 0 // "0 > 0", "5 tokens > 200000": no usable count
		}
		if out.Tokens == 0 {
			out.Tokens = tokens
		}
		if out.Limit == 0 {
			out.Limit = limit
		}
	}
	if !matched {
		if !containsAny(low, genericOverflow) {
			return ContextOverflow{}, false
		}
		out.Provider = "generic"
	}
	if out.Tokens == 0 && containsAny(low, outputPhrases) {
		return ContextOverflow{}, false
	}
	return out, true
}

func containsAny(s string, phrases []string) bool {
	for _, p := range phrases {
		if strings.Contains(s, p) {
			return true
		}
	}
	return false
}

// parseCount reads a count with thousands separators; an implausible one
// is 0 (unknown).
func parseCount(s string) int {
	s = strings.ReplaceAll(s, ",", "")
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 || n > state.MaxPlausible {
		return 0
	}
	return n
}
