package core

import (
	"encoding/json"
	"math/rand/v2"

	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/contentid"
	"github.com/adk-contextguard/contextguard/core/internal/tokens"
)

// TokenCounter counts the tokens of a text exactly, for users who have their
// provider's tokenizer (or a local copy of it). See WithTokenCounter.
type TokenCounter interface {
	// CountTokens returns the number of tokens text encodes to.
	CountTokens(text string) int
}

// NamedTokenCounter is a TokenCounter with a stable name: the same in every
// process for the same counts, changed whenever its counts may change. A
// prefix record in session state (ARCHITECTURE.md, Counting) is trusted
// only under a counter of the same name; without a name, after a restart
// or on another replica, a session's first call counts its whole request.
type NamedTokenCounter interface {
	TokenCounter
	// CounterName returns the counter's stable name, for example
	// "o200k_base/tiktoken-go-v0.7".
	CounterName() string
}

// NameTokenCounter gives tc a stable name (see NamedTokenCounter), for
// counters that cannot carry one themselves, such as a TokenCounterFunc.
func NameTokenCounter(name string, tc TokenCounter) NamedTokenCounter {
	return namedCounter{TokenCounter: tc, name: name}
}

type namedCounter struct {
	TokenCounter
	name string
}

// CounterName returns the name the counter was given.
func (n namedCounter) CounterName() string { return n.name }

// TokenCounterFunc adapts a function to TokenCounter.
type TokenCounterFunc func(text string) int

// CountTokens calls f.
func (f TokenCounterFunc) CountTokens(text string) int { return f(text) }

// counterSalt keeps a custom counter's counts and prefix records apart:
// its name's hash, or, without a name, a random value no one else shares.
func counterSalt(tc TokenCounter) uint64 {
	if n, ok := tc.(NamedTokenCounter); ok {
		if name := n.CounterName(); name != "" {
			return contentid.Mix(contentid.StringHash(counterNameSeed, name))
		}
	}
	return rand.Uint64()
}

// counterNameSeed keeps the hash of a counter's name apart from others.
const counterNameSeed = 0x636e7472 // "cntr"

// counterEstimator counts through a user's TokenCounter.
type counterEstimator struct {
	tc    TokenCounter
	media *tokens.Estimator // inline data, file references, framing
}

func (c counterEstimator) DefaultFactor() float64 { return 1.0 }

func (c counterEstimator) Text(s string) int {
	if s == "" {
		return 0
	}
	return max(c.tc.CountTokens(s), 0)
}

func (c counterEstimator) json(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return c.media.Value(v)
	}
	return c.Text(string(b))
}

func (c counterEstimator) Content(x *genai.Content) int {
	if x == nil {
		return 0
	}
	n := c.media.Framing()
	for _, p := range x.Parts {
		if p == nil {
			continue
		}
		switch {
		case p.FunctionCall != nil:
			n += tokens.CallOverhead + c.Text(p.FunctionCall.Name) + c.json(p.FunctionCall.Args)
		case p.FunctionResponse != nil:
			n += tokens.CallOverhead + c.Text(p.FunctionResponse.Name) + c.json(p.FunctionResponse.Response)
		case p.InlineData != nil || p.FileData != nil:
			n += c.media.Part(p)
		case p.ExecutableCode != nil:
			n += tokens.CodeOverhead + c.Text(p.ExecutableCode.Code)
		case p.CodeExecutionResult != nil:
			n += tokens.CodeOverhead + c.Text(p.CodeExecutionResult.Output)
		}
		n += c.Text(p.Text)
	}
	return n
}

func (c counterEstimator) Declaration(d *genai.FunctionDeclaration) int {
	if d == nil {
		return 0
	}
	return tokens.FunctionDeclOverhead + c.json(d)
}

func (c counterEstimator) BuiltinTools(t *genai.Tool) int { return c.media.BuiltinTools(t) }
