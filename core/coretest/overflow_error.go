package coretest

import (
	"errors"
	"fmt"
	"strings"

	"google.golang.org/genai"
)

// Overflow errors: what the scripted provider answers a request over its
// window with, in each provider's shape.

// ErrorStyle selects which provider's context-overflow error a
// [Script] returns.
type ErrorStyle int

// String returns the provider name.
func (s ErrorStyle) String() string {
	switch s {
	case ErrorAnthropic:
		return "anthropic"
	case ErrorOpenAI:
		return "openai"
	case ErrorGeneric:
		return "generic"
	default:
		return "gemini"
	}
}

// OverflowError is the error a [Script] returns when a request exceeds
// its window. Its message reproduces the provider's; for [ErrorGemini] it
// unwraps to a genai.APIError, as a real Gemini model would return.
type OverflowError struct {
	Style  ErrorStyle
	Tokens int // ground-truth tokens of the rejected request
	Limit  int // the model's window
}

func (e *OverflowError) apiError() genai.APIError {
	return genai.APIError{
		Code:    400,
		Message: fmt.Sprintf("The input token count (%d) exceeds the maximum number of tokens allowed (%d).", e.Tokens, e.Limit),
		Status:  "INVALID_ARGUMENT",
	}
}

// Error returns the provider-shaped message.
func (e *OverflowError) Error() string {
	switch e.Style {
	case ErrorAnthropic:
		return fmt.Sprintf(`POST "https://api.anthropic.com/v1/messages": 400 Bad Request {"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: %d tokens > %d maximum"}}`, e.Tokens, e.Limit)
	case ErrorOpenAI:
		return fmt.Sprintf(`POST "https://api.openai.com/v1/chat/completions": 400 Bad Request {"error":{"message":"This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`, e.Limit, e.Tokens)
	case ErrorGeneric:
		return genericOverflowMessage
	default:
		return e.apiError().Error()
	}
}

// genericOverflowMessage is the message of [ErrorGeneric] errors: no count,
// no limit.
const genericOverflowMessage = "400 Bad Request: the request is too long for the model's context window"

// Unwrap returns the genai.APIError for Gemini-style errors, nil otherwise.
func (e *OverflowError) Unwrap() error {
	if e.Style == ErrorGemini {
		return e.apiError()
	}
	return nil
}

// IsOverflowError reports whether err is a context-overflow error of any of
// the shapes a [Script] produces, either as an [*OverflowError] in its
// chain or by its message (a guard may re-wrap it without %w).
func IsOverflowError(err error) bool {
	if err == nil {
		return false
	}
	var oe *OverflowError
	if errors.As(err, &oe) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "exceeds the maximum number of tokens allowed") ||
		strings.Contains(msg, "prompt is too long") ||
		strings.Contains(msg, "context_length_exceeded") ||
		strings.Contains(msg, genericOverflowMessage)
}
