package core

import (
	"context"
	"time"

	"google.golang.org/genai"
)

// The engine's seams (ARCHITECTURE.md, The engine and the ADK adapter): the
// engine works on these types, never a host framework's; adapters pass
// their values through them or build them at a callback's entry.

// Call is what the engine needs of the model call it serves. ADK v1's
// agent.CallbackContext and ADK v2's agent.Context satisfy it as they are;
// the call's session state is passed beside it (StateReader, State).
type Call interface {
	context.Context
	AppName() string
	UserID() string
	SessionID() string
	// UserContent is the content that started the invocation.
	UserContent() *genai.Content
}

// StateReader reads a session's state; ADK's session.ReadonlyState and
// session.State satisfy it. A key that does not exist is reported by an
// error for which Host.MissingKey holds.
type StateReader interface {
	Get(key string) (any, error)
}

// State reads and writes a session's state; ADK's session.State satisfies
// it.
type State interface {
	StateReader
	Set(key string, value any) error
}

// HostModel is a model of the host framework (ADK's model.LLM) that the
// engine stores for the adapter, which calls it (WithRecoveryModel), and
// knows only by name.
type HostModel interface {
	Name() string
}

// ModelNamer is a Summarizer that names the model it calls (each adapter's
// LLMSummarizer): the engine logs the name and looks up the model's window
// (summarizerWindow). ok is false when it has no model.
type ModelNamer interface {
	ModelName() (name string, ok bool)
}

// Host is what the engine asks of the host framework.
type Host struct {
	// MissingKey reports whether err, from a state read, says the key does
	// not exist (ADK: errors.Is(err, session.ErrStateKeyNotExist)): the
	// engine then treats the key as absent without a warning.
	MissingKey func(err error) bool
	// Now is the time of the call whose context is ctx (ADK: platform.Now).
	Now func(ctx context.Context) time.Time
}

func (h Host) withDefaults(clock Clock) Host {
	if h.MissingKey == nil {
		h.MissingKey = func(error) bool { return false }
	}
	if h.Now == nil {
		h.Now = func(context.Context) time.Time { return clock.Now() }
	}
	return h
}

// Request is the engine's view of a model request: the fields of ADK's
// model.LLMRequest it reads, and rewrites. The adapter builds it at a
// callback's entry, and writes the contents the engine returns into its own
// request in one place.
type Request struct {
	Model    string
	Contents []*genai.Content
	Config   *genai.GenerateContentConfig
	// Origin is the adapter's own request this one was built from,
	// compared by identity only: the in-memory record (recovery.go)
	// recognises the request it let through when the provider rejects it.
	Origin any
	// Coverage, when set, anchors the summary's coverage to the host's log
	// (ADK v2: event IDs) instead of a count of contents. nil: the count
	// and fingerprint of the last covered content (ADK v1).
	Coverage Coverage
}

// Coverage maps between a count of leading contents of a request and a
// position in the host's log of the session. A Coverage whose log grows
// after its call (by the run's final response) may also have a method
// Refresh() Coverage, the coverage of the same call built from the log as
// it is now: the engine asks for it when it compacts the call's request
// once the run has ended (Guard.AfterRun).
type Coverage interface {
	// Anchor names the log position of the last content among the first n
	// contents of contents (ADK v2: the ID of the event it was built
	// from); "" when it cannot be named (the engine then keeps the count).
	Anchor(contents []*genai.Content, n int) string
	// Covered returns how many leading contents of contents were built
	// from the log up to and including anchor; ok is false when anchor is
	// not in the log (the engine then locates the summary by its stored
	// position and fingerprint, as without a host).
	Covered(contents []*genai.Content, anchor string) (n int, ok bool)
}

// Response is the engine's view of a final model response: the fields of
// ADK's model.LLMResponse it reads.
type Response struct {
	Content       *genai.Content
	UsageMetadata *genai.GenerateContentResponseUsageMetadata
	FinishReason  genai.FinishReason
}
