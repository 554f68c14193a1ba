package costbench

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"
)

// req builds a hand-made request of pieces with the given keys and tokens
// (keys are single letters; the same letter is the same piece).
func req(summarizer bool, compactions int, keys string, tokens ...int) Request {
	r := Request{Summarizer: summarizer, Compactions: compactions}
	for i, k := range keys {
		var p piece
		p.key[0] = byte(k)
		p.tokens = tokens[i]
		r.pieces = append(r.pieces, p)
		r.Tokens += tokens[i]
	}
	return r
}

func TestSharedPrefix(t *testing.T) {
	for _, tc := range []struct {
		name       string
		a, b       Request
		wantShared int
	}{
		{"a request extending the previous one reuses it whole", req(false, 0, "ts", 10, 20), req(false, 0, "tsu", 10, 20, 5), 30},
		{"a piece changed in the middle stops the prefix there", req(false, 0, "tsuv", 10, 20, 5, 7), req(false, 0, "tsxv", 10, 20, 5, 7), 30},
		{"a new first piece reuses nothing", req(false, 0, "ts", 10, 20), req(false, 0, "xs", 10, 20), 0},
		{"a shorter request reuses its own length", req(false, 0, "tsu", 10, 20, 5), req(false, 0, "ts", 10, 20), 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.wantShared, SharedPrefix(&tc.a, &tc.b))
		})
	}
}

func TestMeasure_HandMadeSession(t *testing.T) {
	// Requests of a session at a 100-token window: tools t, system s,
	// contents u, v, w...
	reqs := []Request{
		req(false, 0, "tsu", 10, 20, 10),            // 0: first request, nothing read
		req(false, 0, "tsuv", 10, 20, 10, 20),       // 1: extends 0, reads 40
		req(false, 0, "tsxvw", 10, 20, 2, 20, 8),    // 2: u pruned to x with no compaction: a rewrite, reads 30 of 60
		req(true, 0, "tsxvwi", 10, 20, 2, 20, 8, 5), // 3: summarizer extending 2: reads 60, instruction i
		req(false, 1, "tsmw", 10, 20, 9, 8),         // 4: after the compaction: reads 30, not a rewrite
		req(true, 1, "PQ", 50, 60),                  // 5: transcript form: reads nothing, over the window
		req(false, 2, "tsmwz", 10, 20, 9, 8, 3),     // 6: extends 4 (the summarizer between is not compared)
	}
	reqs[5].SystemTokens = 50 // P: the summarizer's prompt
	s := Measure(reqs, 100)
	assert.Equal(t, 5, s.AgentRequests)
	assert.Equal(t, 2, s.SummarizerRequests)
	assert.Equal(t, 40+60+60+47+50, s.AgentTokens)
	assert.Equal(t, 0+40+30+30+47, s.ReusedTokens)
	assert.Equal(t, 1, s.Rewrites)
	assert.Equal(t, 60-30, s.RewriteTokens)
	assert.Equal(t, 65+110, s.SummarizerTokens)
	assert.Equal(t, 60, s.SummarizerCached)
	assert.Equal(t, 1, s.Overflows)

	// Anthropic: each request reads its shared prefix at 0.1 and writes the
	// rest at 1.25.
	cost := 1.25*40 + (0.1*40 + 1.25*20) + (0.1*30 + 1.25*30) + (0.1*60 + 1.25*5) +
		(0.1*30 + 1.25*17) + 1.25*110 + (0.1*47 + 1.25*3)
	assert.InDelta(t, cost, s.Cost[0], 1e-9)
	// The floor: the rewrite (2) reads all of 1 (60) and writes its piece
	// past 1's length (w, 8); the transcript-form summarizer (5) reads all
	// but its system instruction, which Measure takes as its instruction.
	floor := cost - (0.1*30 + 1.25*30) + (0.1*60 + 1.25*8) - 1.25*110 + (0.1*60 + 1.25*50)
	assert.InDelta(t, floor, s.Floor[0], 1e-9)
	// Implicit caches: reads at 0.25, the rest at 1.
	implicit := 40.0 + (0.25*40 + 20) + (0.25*30 + 30) + (0.25*60 + 5) + (0.25*30 + 17) + 110 + (0.25*47 + 3)
	assert.InDelta(t, implicit, s.Cost[1], 1e-9)
	assert.LessOrEqual(t, s.Floor[1], s.Cost[1])
}

func TestMeasure_CompactionReportedWithoutSummarizer(t *testing.T) {
	// A compaction the guard reported (a fallback summary, no summarizer
	// call) between two requests: the shorter prefix is not a rewrite.
	reqs := []Request{
		req(false, 0, "tsuv", 10, 20, 10, 20),
		req(false, 1, "tsm", 10, 20, 5),
	}
	s := Measure(reqs, 1000)
	assert.Zero(t, s.Rewrites)
	assert.Equal(t, 30, s.ReusedTokens)
}

func TestSnapshot_OrderAndIdentity(t *testing.T) {
	decl := func(name string) *genai.FunctionDeclaration {
		return &genai.FunctionDeclaration{Name: name, Description: "d", ParametersJsonSchema: map[string]any{"type": "object", "b": 1, "a": 2}}
	}
	cfg := &genai.GenerateContentConfig{
		Tools:             []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{decl("x"), decl("y")}}},
		SystemInstruction: genai.NewContentFromText("be brief", genai.RoleUser),
	}
	contents := []*genai.Content{genai.NewContentFromText("hello there", genai.RoleUser)}
	a := Snapshot(contents, cfg)
	require.Len(t, a.pieces, 4, "two declarations, the system instruction, one content")
	sum := 0
	for _, p := range a.pieces {
		assert.Positive(t, p.tokens)
		sum += p.tokens
	}
	assert.Equal(t, groundTruth.Count(contents, cfg), sum, "the pieces add up to the whole request's count")
	assert.Equal(t, sum, a.Tokens)
	assert.Equal(t, a.pieces[2].tokens, a.SystemTokens)

	// The same values built again are the same pieces; a changed content
	// is not.
	b := Snapshot([]*genai.Content{genai.NewContentFromText("hello there", genai.RoleUser)}, cfg)
	assert.Equal(t, a.Tokens, SharedPrefix(&a, &b))
	c := Snapshot([]*genai.Content{genai.NewContentFromText("hello There", genai.RoleUser)}, cfg)
	assert.Equal(t, a.Tokens-a.pieces[3].tokens, SharedPrefix(&a, &c))
	// A content and a system instruction of the same text differ.
	d := Snapshot([]*genai.Content{genai.NewContentFromText("be brief", genai.RoleUser)}, nil)
	e := Snapshot(nil, &genai.GenerateContentConfig{SystemInstruction: genai.NewContentFromText("be brief", genai.RoleUser)})
	assert.Zero(t, SharedPrefix(&d, &e))
}

func TestWriteTable(t *testing.T) {
	s := Measure([]Request{
		req(false, 0, "tsu", 10, 20, 10),
		req(false, 0, "tsuv", 10, 20, 10, 30),
	}, 1000)
	var buf bytes.Buffer
	require.NoError(t, WriteTable(&buf, []Row{{Config: Config{Name: "default", Window: 32_000}, Stats: s}}))
	// 40 of 110 agent tokens reused; Anthropic (1.25*40 + 0.1*40 + 1.25*30) / 110;
	// no summarizer request, so no share of one read from cache.
	assert.Contains(t, buf.String(), "| default | 32k | 2 + 0 | 36.4% | 0 (0.00% of tokens) | – | 0.832 (0.832) | 0.727 (0.727) | 0 (0) |")
}

func TestWriteAccounting(t *testing.T) {
	a := Accounting{Contents: 5, Kept: 2, Summarized: 2, Lost: 1, Events: 3, Discarded: 1,
		Losses:   []Loss{{Session: "s.json", Request: 9, Content: 6, What: "user: the 19368-byte response to str_replace_editor call call_0003"}},
		Unshrunk: []Unshrunk{{Session: "s.json", Request: 12, EventIndex: 0, Event: "strategy tool_result_pruning", Raw: 21_115, Sent: 21_115}}}
	var buf bytes.Buffer
	require.NoError(t, WriteAccounting(&buf, []Row{{Config: Config{Name: "pruning", Window: 32_000}, Accounting: a}}))
	out := buf.String()
	assert.Contains(t, out, "| pruning | 32k | 5 | 2 | 0 | 2 | 0 | 1 | 3 (1) | 1 |")
	assert.Contains(t, out, "lost: pruning 32k, s.json, request 9, content 6: user: the 19368-byte response to str_replace_editor call call_0003")
	assert.Contains(t, out, "not smaller: pruning 32k, s.json, request 12 after event 0 (strategy tool_result_pruning): 21115 tokens sent, 21115 as ADK built it")
}
