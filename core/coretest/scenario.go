package coretest

import (
	"encoding/base64"
	"fmt"
	"slices"
)

// Scenarios: the turns of a conversation, their tool steps and sizes, as the
// scripted provider plays them.

// Defaults used when a plan leaves a size at zero.
const (
	// DefaultResponseSize is the size of the model's final text of a turn
	// (the seeds' default of 120 characters).
	DefaultResponseSize = 120
	// DefaultUserTextSize is the size of a user message.
	DefaultUserTextSize = 200
)

// ToolCall is one function call the scripted model makes: the tool to call
// and the size and kind of the output the fake tool must return. An empty
// Kind uses [DefaultKind] of the tool.
type ToolCall struct {
	Name string
	Size int
	Kind Kind
	// Args, when not nil, are the call's arguments exactly, for a real
	// tool ([CallWith]); Size and Kind are then unused.
	Args map[string]any
}

// Call returns a ToolCall of name with an output of size bytes of the tool's
// default kind.
func Call(name string, size int) ToolCall { return ToolCall{Name: name, Size: size} }

// CallWith returns a ToolCall of name with args as its arguments, exactly,
// as a model calls a real tool (the guard's recall_context, a test's own
// tool). The call carries no tag for the tool to echo, so after its
// response the [Script] finds its place from its memory of the session,
// which needs the session's ID (ADK's context gives it).
func CallWith(name string, args map[string]any) ToolCall {
	if args == nil {
		args = map[string]any{}
	}
	return ToolCall{Name: name, Args: args}
}

// ToolStep is one model response: all its calls are issued in one Content
// (parallel calls); ADK answers them with one merged Content.
type ToolStep struct {
	Calls []ToolCall
}

// Parallel returns a single step issuing all calls at once.
func Parallel(calls ...ToolCall) []ToolStep {
	if len(calls) == 0 {
		return nil
	}
	return []ToolStep{{Calls: calls}}
}

// Sequential returns one step per call: a chain where each call is made
// after the previous one's result came back.
func Sequential(calls ...ToolCall) []ToolStep {
	steps := make([]ToolStep, 0, len(calls))
	for _, c := range calls {
		steps = append(steps, ToolStep{Calls: []ToolCall{c}})
	}
	return steps
}

// TurnPlan is what happens in one user turn: the user's message (text plus
// optional inline images and documents), the model's tool steps in order, and
// its final text.
type TurnPlan struct {
	// UserTextSize is the size of the user's message text in bytes
	// (default [DefaultUserTextSize]); the message always starts with the
	// turn tag and the turn's marker.
	UserTextSize int
	// Images are inline PNG images attached to the user message, by size in
	// bytes.
	Images []int
	// Documents are inline PDF documents attached to the user message, by
	// size in bytes.
	Documents []int
	// Steps are the model's tool steps, played one per model call.
	Steps []ToolStep
	// ResponseSize is the size of the model's final text (default
	// [DefaultResponseSize]).
	ResponseSize int
}

// Scenario is one row of the stress matrix: a window, a number of user
// turns, a plan per turn and the ground truth's parameters.
type Scenario struct {
	// Prefix is the family of the row ("Stress" or "Brutal" for the seed
	// matrix); Name is its name without the family, e.g.
	// "200k_NormalConversation".
	Prefix, Name string
	// Description summarizes the row as the seed matrix does.
	Description string
	// Window is the model's context window in ground-truth tokens. The seed
	// matrix's "4k", "8k", "200k" and "1M" are 4_000, 8_000, 200_000 and
	// 1_000_000.
	Window int
	// Turns is the number of user turns.
	Turns int
	// TokenRatio is the seed-mode ground truth ratio: tokens = bytes/4 x
	// TokenRatio ([SeedCounter]).
	TokenRatio float64
	// LateTokenRatio, when > 0, replaces TokenRatio from turn UsageFromTurn
	// on (seed mode only).
	LateTokenRatio float64
	// NoUsageMetadata makes the model report no UsageMetadata at all.
	NoUsageMetadata bool
	// UsageFromTurn makes the model report usage only from this turn on.
	UsageFromTurn int
	// SystemPromptSize is the size of the agent's instruction in bytes.
	SystemPromptSize int
	// ToolDefs MCP-like tools with schemas of ToolDefSchemaSize bytes each are
	// declared on the agent (see [MCPTools]).
	ToolDefs, ToolDefSchemaSize int
	// Plan returns the plan of turn i (0-based). Nil means text-only turns.
	Plan func(turn int) TurnPlan
	// Streaming runs the agent with SSE streaming.
	Streaming bool
	// ErrorStyle is the provider shape of overflow errors.
	ErrorStyle ErrorStyle
	// ProviderCallIDs gives function calls provider-style IDs.
	ProviderCallIDs bool
	// MinSummarizerCalls is the least number of summarizer calls a working
	// guard must make in this scenario (0: no expectation).
	MinSummarizerCalls int
	// KnownLimitation, when set, explains why a guard may legitimately fail
	// this row (e.g. no usage metadata and a ratio beyond any default factor).
	KnownLimitation string
	// Seed makes every generated payload of the scenario deterministic.
	Seed int64
}

// fillShare is the share of the window a single tool result or user
// message must take, by itself, for FillsWindow: a guard's default trigger
// (80% of the window). Content that reaches the trigger alone cannot be kept
// verbatim beside any summary, so the compaction it brings has to summarize
// it, in the model call that sends it.
const fillShare = 0.8

// FillsWindow reports whether a single tool result (the results of one
// step, which arrive together in one content) or user message of s (its
// text, images and documents as the seed ground truth counts them: bytes/4
// x the row's ratio, attachments by their base64 length) takes fillShare of
// the window or more. Such a row's compactions run in the
// model call that needs them by necessity: nothing of the content is known
// before it arrives, and nothing fits beside it.
func (s Scenario) FillsWindow() bool {
	ratio := max(s.TokenRatio, s.LateTokenRatio, 1)
	limit := fillShare * float64(s.Window)
	fills := func(bytes int) bool { return float64(bytes)/4*ratio >= limit }
	for turn := range s.Turns {
		p := s.TurnPlan(turn)
		msg := p.UserTextSize
		for _, n := range append(slices.Clone(p.Images), p.Documents...) {
			msg += base64.StdEncoding.EncodedLen(n)
		}
		if fills(msg) {
			return true
		}
		for _, st := range p.Steps {
			// A step's results arrive together, in one content.
			step := 0
			for _, c := range st.Calls {
				step += c.Size
			}
			if fills(step) {
				return true
			}
		}
	}
	return false
}

// FullName returns Prefix_Name, e.g. "Stress_200k_NormalConversation".
func (s Scenario) FullName() string {
	if s.Prefix == "" {
		return s.Name
	}
	return s.Prefix + "_" + s.Name
}

// TurnPlan returns the plan of turn i, with defaults applied.
func (s Scenario) TurnPlan(turn int) TurnPlan {
	var p TurnPlan
	if s.Plan != nil {
		p = s.Plan(turn)
	}
	if p.UserTextSize <= 0 {
		p.UserTextSize = DefaultUserTextSize
	}
	if p.ResponseSize <= 0 {
		p.ResponseSize = DefaultResponseSize
	}
	return p
}

// String describes the scenario in one line.
func (s Scenario) String() string {
	return fmt.Sprintf("%s window=%d turns=%d ratio=%.1f", s.FullName(), s.Window, s.Turns, s.TokenRatio)
}
