package core

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"
)

// providerErr is an error whose text is a provider's message as it words
// it (capitals and full stops included).
type providerErr string

func (e providerErr) Error() string { return string(e) }

// overflowCase is one provider error message as providers and the servers
// in front of them word it (public bug reports and provider documentation),
// with what AsContextOverflow must say of it. Counts inside the messages
// are the reported ones or of the same shape.
type overflowCase struct {
	provider string // the provider or server that words it so
	name     string
	err      error
	overflow bool
	shape    string // ContextOverflow.Provider when overflow
	tokens   int
	limit    int
}

// overflowMessages is the table of real messages: for each provider its
// overflow errors beside their look-alikes (rate limits, quotas worded as
// token limits, billing, throttling, capacity), which are not overflows:
// compacting cannot fix them, and classifying one as an overflow raises
// the session's learned ratio for nothing.
var overflowMessages = []overflowCase{
	// Gemini API and Vertex AI.
	{"gemini", "400 as genai.APIError", genai.APIError{Code: 400, Status: "INVALID_ARGUMENT", Message: "The input token count (1054016) exceeds the maximum number of tokens allowed (1048576)."}, true, "gemini", 1_054_016, 1_048_576},
	{"gemini", "400 flattened by a client", providerErr(`{"error":{"code":400,"message":"The input token count (132478) exceeds the maximum number of tokens allowed (131072).","status":"INVALID_ARGUMENT"}}`), true, "gemini", 132_478, 131_072},
	{"gemini", "400 with a 64k model limit", providerErr(`got status: INVALID_ARGUMENT. {"error":{"code":400,"message":"The input token count (218152) exceeds the maximum number of tokens allowed (65536).","status":"INVALID_ARGUMENT"}}`), true, "gemini", 218_152, 65_536},
	{"gemini", "Vertex 429 resource exhausted", genai.APIError{Code: 429, Status: "RESOURCE_EXHAUSTED", Message: "Resource exhausted. Please try again later. Please refer to https://cloud.google.com/vertex-ai/generative-ai/docs/error-code-429 for more details."}, false, "", 0, 0},
	{"gemini", "429 flattened: check quota", providerErr(`{"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}`), false, "", 0, 0},
	{"gemini", "free tier input-token quota", providerErr("You exceeded your current quota, please check your plan and billing details. Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_input_token_count, limit: 250000"), false, "", 0, 0},
	{"gemini", "Vertex input tokens per minute quota", providerErr("the service reports an error with code RESOURCE_EXHAUSTED described as: Quota exceeded for aiplatform.googleapis.com/embed_content_input_tokens_per_minute_per_base_model with base model: gemini-embedding. Please submit a quota increase request."), false, "", 0, 0},
	{"gemini", "Vertex out of capacity", providerErr("RESOURCE_EXHAUSTED: Unable to submit request because the service is temporarily out of capacity. Try again later."), false, "", 0, 0},

	// Anthropic.
	{"anthropic", "prompt is too long", providerErr(`{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 209303 tokens > 200000 maximum"}}`), true, "anthropic", 209_303, 200_000},
	{"anthropic", "prompt is too long, odd maximum", providerErr("prompt is too long: 204548 tokens > 199999 maximum"), true, "anthropic", 204_548, 199_999},
	{"anthropic", "input and max_tokens exceed the limit", providerErr(`{"type":"error","error":{"type":"invalid_request_error","message":"input length and ` + "`max_tokens`" + ` exceed context limit: 179413 + 32768 > 200000, decrease input length or ` + "`max_tokens`" + ` and try again"}}`), true, "anthropic", 179_413, 200_000},
	{"anthropic", "organization input tokens per minute", providerErr(`{"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed the rate limit for your organization (0dccdde6) of 20,000 input tokens per minute. For details, refer to: https://docs.anthropic.com/en/api/rate-limits. You can see the response headers for current usage. Please reduce the prompt length or the maximum tokens requested, or try again later."}}`), false, "", 0, 0},
	{"anthropic", "organization's rate limit, newer wording", providerErr("API Error: Request rejected (429) · This request would exceed your organization's rate limit of 30,000 input tokens per minute (org: 9d50ef40, model: claude-sonnet-4-6). Please reduce the prompt length or the maximum tokens requested, or try again later."), false, "", 0, 0},
	{"anthropic", "account rate limit", providerErr(`Error: 429 {"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed your account's rate limit. Please try again later."}}`), false, "", 0, 0},
	{"anthropic", "credit balance", providerErr(`Error: 400 {"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits."}}`), false, "", 0, 0},
	{"anthropic", "overloaded", providerErr(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`), false, "", 0, 0},

	// AWS Bedrock.
	{"bedrock", "InvokeModel validation", providerErr("An error occurred (ValidationException) when calling the InvokeModel operation: Input is too long for requested model."), true, "bedrock", 0, 0},
	{"bedrock", "stream validation", providerErr("Error processing Bedrock stream: The model returned the following errors: Input is too long for requested model."), true, "bedrock", 0, 0},
	{"bedrock", "throttled on tokens", providerErr("ThrottlingException: Too many tokens, please wait before trying again."), false, "", 0, 0},
	{"bedrock", "tokens per day", providerErr("An error occurred (ThrottlingException) when calling the Converse operation (reached max retries: 4): Too many tokens per day, please wait before trying again."), false, "", 0, 0},
	{"bedrock", "too many requests", providerErr("An error occurred (throttlingException) when calling the InvokeModelWithResponseStream operation: Too many requests, please wait before trying again. You have sent too many requests.  Wait before trying again."), false, "", 0, 0},

	// OpenAI.
	{"openai", "chat completions", providerErr(`{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130532 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`), true, "openai", 130_532, 128_000},
	{"openai", "requested with the completion", providerErr("This model's maximum context length is 8192 tokens. However, you requested 254457 tokens"), true, "openai", 254_457, 8_192},
	{"openai", "responses API", providerErr(`{"error":{"message":"Your input exceeds the context window of this model. Please adjust your input and try again.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}`), true, "openai", 0, 0},
	{"openai", "organization tokens per minute", providerErr("429 Rate limit reached for gpt-4o in organization org-uOtiSEwv on tokens per min (TPM): Limit 30000, Used 29937, Requested 385. Please try again in 644ms."), false, "", 0, 0},
	{"openai", "request too large for the organization's TPM", providerErr(`Error code: 429 - {'error': {'message': 'Request too large for gpt-4o in organization org-VDAWofJA on tokens per min (TPM): Limit 30000, Requested 30601. The input or output tokens must be reduced in order to run successfully.', 'type': 'tokens', 'param': None, 'code': 'rate_limit_exceeded'}}`), false, "", 0, 0},
	{"openai", "insufficient quota", providerErr(`{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`), false, "", 0, 0},
	{"openai", "output limit", providerErr("max_tokens is too large: 50000. This model supports at most 16384 completion tokens, whereas you provided 50000."), false, "", 0, 0},

	// Azure OpenAI.
	{"azure", "configured limit", providerErr("AzureException BadRequestError - Input tokens exceed the configured limit of 272000 tokens. Your messages resulted in 509178 tokens. Please reduce the length of the messages."), true, "openai", 509_178, 272_000},
	{"azure", "prompt and completion", providerErr("This model's maximum context length is 8192 tokens, however you requested 8617 tokens (7617 in your prompt; 1000 for the completion). Please reduce your prompt; or completion length."), true, "openai", 7_617, 8_192},
	{"azure", "token rate limit of the pricing tier", providerErr("Error code: 429 - {'error': {'code': '429', 'message': 'Requests to the ChatCompletions_Create Operation under Azure OpenAI API version 2024-08-01-preview have exceeded token rate limit of your current OpenAI S0 pricing tier. Please retry after 86400 seconds.'}}"), false, "", 0, 0},
	{"azure", "rate limit is exceeded", providerErr(`Server responded with status 429. Error message: {"error":{"code":"429","message": "Rate limit is exceeded. Try again in 2 seconds."}}`), false, "", 0, 0},
	{"azure", "peak load", providerErr("The system is currently experiencing high demand and cannot process your request. Your request exceeds the maximum usage size allowed during peak load. Please retry after 20 seconds."), false, "", 0, 0},

	// vLLM and other OpenAI-compatible servers.
	{"vllm", "messages and completion", providerErr("This model's maximum context length is 16384 tokens. However, you requested 122946 tokens (112946 in the messages, 10000 in the completion). Please reduce the length of the messages or completion."), true, "openai", 112_946, 16_384},
	{"vllm", "prompt total length", providerErr("ValueError: The prompt (total length 25938) is too long to fit into the model (context length 4096). Make sure that `max_model_len` is no smaller than the number of text tokens plus multimodal tokens."), true, "openai", 25_938, 4_096},
	{"vllm", "input longer than the context (SGLang's wording too)", providerErr("The input (9000 tokens) is longer than the model's context length (8192 tokens)."), true, "openai", 9_000, 8_192},
	{"vllm", "negative max_tokens", providerErr("Error code: 400 - {'object': 'error', 'message': 'max_tokens must be at least 1, got -186.', 'type': 'BadRequestError', 'param': None, 'code': 400}"), false, "", 0, 0},
	{"groq", "context_length_exceeded without counts", providerErr("Error code: 400 - {'error': {'message': 'Please reduce the length of the messages or completion.', 'type': 'invalid_request_error', 'param': 'messages', 'code': 'context_length_exceeded'}}"), true, "openai", 0, 0},
	{"groq", "organization tokens per day", providerErr("429 Rate limit reached for model `llama-3.3-70b-versatile` in organization `org_01kjh7p9` service tier `on_demand` on tokens per day (TPD): Limit 100000, Used 97050, Requested 3619. Please try again in 9m38.016s."), false, "", 0, 0},

	// Ollama.
	{"ollama", "input exceeds the context length", providerErr(`ollama: unexpected status 400: {"error":"the input length exceeds the context length"}`), true, "generic", 0, 0},
	{"ollama", "not enough memory", providerErr(`{"error":"model requires more system memory (5.5 GiB) than is available (3.2 GiB)"}`), false, "", 0, 0},

	// LiteLLM.
	{"litellm", "Anthropic's overflow wrapped", providerErr(`litellm.BadRequestError: litellm.ContextWindowExceededError: AnthropicError - {"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210543 tokens > 200000 maximum"}}`), true, "anthropic", 210_543, 200_000},
	{"litellm", "its own class name only", providerErr("litellm.ContextWindowExceededError: ContextWindowExceededError: OpenAIException - Input tokens exceed the configured limit of 272000 tokens."), true, "openai", 0, 272_000},
	{"litellm", "Azure's rate limit wrapped", providerErr(`litellm.RateLimitError: AzureException RateLimitError - Error code: 429 - {'error': {'code': '429', 'message': 'Requests to the ChatCompletions_Create Operation under Azure OpenAI API version 2023-05-15 have exceeded token rate limit of your current AIServices S0 pricing tier.'}}`), false, "", 0, 0},
	{"litellm", "Anthropic's rate limit wrapped", providerErr(`litellm.RateLimitError: AnthropicException - {"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed the rate limit for your organization (xxxxxxxx) of 30,000 input tokens per minute."}}`), false, "", 0, 0},

	// Token limits that are quotas, from gateways and the tries.
	{"gateway", "daily token limit", providerErr("500 - Token limit (500,000 per day) exceeded. Used: 508,311 tokens."), false, "", 0, 0},
	{"gateway", "organization tokens per day", providerErr("request reached organization TPD rate limit, current: 1508351, limit: 1500000"), false, "", 0, 0},
	{"gateway", "monthly usage quota", providerErr("API Error: Request rejected (429) · You have exceeded the monthly usage quota. It will reset at 2026-08-29 23:59:59."), false, "", 0, 0},
	{"gateway", "plan usage limit", providerErr("HTTP 429: usage limit exceeded, 5-hour usage limit reached for Token Plan Starter (0/0 used)"), false, "", 0, 0},
	{"gateway", "monthly token limit", providerErr("403: monthly token limit exceeded"), false, "", 0, 0},
	{"gateway", "daily token limit, no number", providerErr("daily token limit exceeded for this API key"), false, "", 0, 0},
	{"gateway", "organization token limit", providerErr("token limit exceeded for organization org-123"), false, "", 0, 0},
}

// TestAsContextOverflow_RealMessages: every message of the table is
// classified as it should be, with the counts it states.
func TestAsContextOverflow_RealMessages(t *testing.T) {
	for _, tt := range overflowMessages {
		t.Run(tt.provider+"/"+tt.name, func(t *testing.T) {
			got, ok := AsContextOverflow(tt.err)
			require.Equal(t, tt.overflow, ok, "%v", tt.err)
			assert.Equal(t, tt.shape, got.Provider)
			assert.Equal(t, tt.tokens, got.Tokens, "tokens")
			assert.Equal(t, tt.limit, got.Limit, "limit")
		})
	}
}

// TestAsContextOverflow_TableCoversEveryProvider: each provider of the
// table has both an overflow and a look-alike, so the table keeps
// answering for both sides. Its size is logged.
func TestAsContextOverflow_TableCoversEveryProvider(t *testing.T) {
	type sides struct{ overflow, lookAlike int }
	per := map[string]*sides{}
	for _, tt := range overflowMessages {
		s := per[tt.provider]
		if s == nil {
			s = &sides{}
			per[tt.provider] = s
		}
		if tt.overflow {
			s.overflow++
		} else {
			s.lookAlike++
		}
	}
	for _, p := range []string{"gemini", "anthropic", "bedrock", "openai", "azure", "vllm", "groq", "ollama", "litellm"} {
		s := per[p]
		require.NotNil(t, s, p)
		assert.Positive(t, s.overflow, "%s has an overflow message", p)
		assert.Positive(t, s.lookAlike, "%s has a look-alike", p)
		t.Logf("%-9s %d overflow, %d look-alike", p, s.overflow, s.lookAlike)
	}
	t.Logf("%d messages", len(overflowMessages))
}

// TestAsContextOverflow_ImplausibleCounts: an overflow message whose count
// is no count (zero, negative, past 2^40, 2^63, not over the limit it
// states) is still an overflow, without the count.
func TestAsContextOverflow_ImplausibleCounts(t *testing.T) {
	tests := []struct {
		name  string
		msg   string
		limit int
	}{
		{"0 > 0", "prompt is too long: 0 tokens > 0 maximum", 0},
		{"negative", "prompt is too long: -5 tokens > 200000 maximum", 0},
		{"2^63", "prompt is too long: 9223372036854775808 tokens > 200000 maximum", 200_000},
		{"past 2^40", fmt.Sprintf("The input token count (%d) exceeds the maximum number of tokens allowed (1048576).", int64(1)<<41), 1_048_576},
		{"under its own limit", "prompt is too long: 5 tokens > 200000 maximum", 200_000},
		{"equal to its limit", "The input (8192 tokens) is longer than the model's context length (8192 tokens).", 8_192},
		{"negative in the messages", "This model's maximum context length is 4096 tokens. However, your messages resulted in -12 tokens.", 4_096},
		{"a limit only", "This model's maximum context length is 4096 tokens.", 4_096},
		{"generic", "the request is too long for the model's context window", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := AsContextOverflow(providerErr(tt.msg))
			require.True(t, ok)
			assert.Zero(t, got.Tokens)
			assert.Equal(t, tt.limit, got.Limit)
		})
	}
}
