package contextguard

import (
	"context"

	"google.golang.org/genai"
)

// The engine's seams (ARCHITECTURE.md, Packages and modules): the engine
// works on the types below, never on ADK's. The ADK adapter
// (adapter_adk.go) passes ADK's values through them as they are, or builds
// them at a callback's entry. Two functions the engine calls are defined by
// the adapter: missingKey (a state read's "no such key") and callTime (the
// time of a call, from the time provider ADK honours).

// llmRequest is what the engine reads of a model request, and rewrites:
// the fields of ADK's model.LLMRequest it uses. The adapter builds it at a
// callback's entry, and writes the contents the engine returns to ADK's
// request in one place (adapter_adk.go, toADK).
type llmRequest struct {
	Model    string
	Contents []*genai.Content
	Config   *genai.GenerateContentConfig
	// origin is the adapter's request this one was built from, compared by
	// identity only: the in-memory record (recovery.go) recognises the
	// request it let through when the provider rejects it.
	origin any
}

// llmResponse is what the engine reads of a final model response: the
// fields of ADK's model.LLMResponse it uses.
type llmResponse struct {
	Content       *genai.Content
	UsageMetadata *genai.GenerateContentResponseUsageMetadata
	FinishReason  genai.FinishReason
}

// callContext is what the engine needs of the model call it serves. ADK's
// agent.CallbackContext satisfies it as it is; the call's session state is
// passed beside it (stateReader, stateStore).
type callContext interface {
	context.Context
	AppName() string
	UserID() string
	SessionID() string
	// UserContent is the content that started the invocation.
	UserContent() *genai.Content
}

// stateReader reads a session's state; ADK's session.ReadonlyState and
// session.State satisfy it. A key that does not exist is reported by an
// error for which missingKey holds.
type stateReader interface {
	Get(key string) (any, error)
}

// stateStore reads and writes a session's state; ADK's session.State
// satisfies it.
type stateStore interface {
	stateReader
	Set(key string, value any) error
}

// hostModel is a model of the host framework (ADK's model.LLM) that the
// engine stores for the adapter, which calls it (WithRecoveryModel), and
// knows only by name.
type hostModel interface {
	Name() string
}

// namedSummarizer is a Summarizer that names the model it calls
// (LLMSummarizer): the engine logs the name and looks up the model's
// window (summarizerWindow). ok is false when it has no model.
type namedSummarizer interface {
	modelName() (name string, ok bool)
}
