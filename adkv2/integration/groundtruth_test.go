package integration

import (
	"encoding/json"
	"sync"

	"github.com/tiktoken-go/tokenizer"
	"google.golang.org/genai"
)

// The ground truth is independent of the guard's estimator: the exact
// o200k_base token count of every piece a provider bills for (texts, tool
// calls and results as compact JSON, the system instruction, the tool
// declarations) plus a small framing cost per message.

const (
	// messageFraming is the per-message overhead a chat format adds (role
	// and separators).
	messageFraming = 4
	// requestFraming is the fixed overhead of one request.
	requestFraming = 3
)

var o200k = sync.OnceValues(func() (tokenizer.Codec, error) {
	return tokenizer.Get(tokenizer.O200kBase)
})

// tokenCache caches counts per distinct string: tool outputs are sent again
// in every later request of a conversation.
var tokenCache sync.Map // string -> int

// o200kCount returns the exact o200k_base count of s.
func o200kCount(s string) int {
	if s == "" {
		return 0
	}
	if n, ok := tokenCache.Load(s); ok {
		return n.(int)
	}
	codec, err := o200k()
	if err != nil {
		panic("o200k tokenizer: " + err.Error())
	}
	n, err := codec.Count(s)
	if err != nil {
		panic("o200k count: " + err.Error())
	}
	tokenCache.Store(s, n)
	return n
}

// compactJSON renders v as the compact JSON a provider receives.
func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic("ground truth: marshal: " + err.Error())
	}
	return string(b)
}

// groundTruth counts a request as a provider would bill it.
func groundTruth(contents []*genai.Content, system *genai.Content, tools []*genai.Tool) int {
	n := requestFraming
	for _, c := range contents {
		n += contentTokens(c)
	}
	if system != nil {
		n += contentTokens(system)
	}
	for _, t := range tools {
		if t == nil {
			continue
		}
		for _, fd := range t.FunctionDeclarations {
			n += o200kCount(compactJSON(fd))
		}
	}
	return n
}

func contentTokens(c *genai.Content) int {
	if c == nil {
		return 0
	}
	n := messageFraming + o200kCount(c.Role)
	for _, p := range c.Parts {
		if p == nil {
			continue
		}
		n += o200kCount(p.Text)
		if fc := p.FunctionCall; fc != nil {
			n += o200kCount(fc.Name) + o200kCount(compactJSON(fc.Args))
		}
		if fr := p.FunctionResponse; fr != nil {
			n += o200kCount(fr.Name) + o200kCount(compactJSON(fr.Response))
		}
	}
	return n
}
