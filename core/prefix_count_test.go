package core

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/coretest"
	"github.com/adk-contextguard/contextguard/core/internal/convo"
	"github.com/adk-contextguard/contextguard/core/internal/countcache"
	"github.com/adk-contextguard/contextguard/core/internal/state"
)

// countingCounter is an exact TokenCounter (a token per 4 bytes) that
// records how many bytes it was asked to count.
type countingCounter struct {
	mu    sync.Mutex
	bytes int
}

// CounterName gives the test counter a stable identity, so a restarted
// guard trusts the records it wrote (NamedTokenCounter).
func (c *countingCounter) CounterName() string { return "counting-test/v1" }

func (c *countingCounter) CountTokens(s string) int {
	c.mu.Lock()
	c.bytes += len(s)
	c.mu.Unlock()
	return len(s)/4 + 1
}

func (c *countingCounter) take() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.bytes
	c.bytes = 0
	return n
}

func prefixTools(desc string) *genai.GenerateContentConfig {
	return &genai.GenerateContentConfig{
		SystemInstruction: genai.NewContentFromText("You are an SRE assistant. Answer with facts from the tools.", genai.RoleUser),
		Tools: []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{{
			Name:                 "kubectl_logs",
			Description:          desc,
			ParametersJsonSchema: map[string]any{"type": "object", "properties": map[string]any{"pod": map[string]any{"type": "string"}}},
		}}}},
	}
}

// prefixScenario is a call whose previous call was served by another guard
// (a restart, a replica): what the session state holds is all it knows.
type prefixScenario struct {
	name string
	// next turns the previous request into this call's request.
	next func(prev *Request) *Request
	// state edits the session state between the calls.
	state func(f *fakeCtx)
	// matches says whether the record may be used.
	matches bool
}

func appendNew(prev *Request) *Request {
	cs := append(coretest.ADKCopy(prev.Contents), userMsg("and now restart the api deployment, please"))
	return &Request{Model: prev.Model, Config: prev.Config, Contents: cs}
}

// TestPrefixCount_ColdCall plays two calls of a session on two guards: the
// first stores its prefix record, the second starts with an empty cache and
// the state of the first. The count used always equals the count of the
// whole request; only a matching record spares counting the prefix, and
// every mismatch counts everything.
func TestPrefixCount_ColdCall(t *testing.T) {
	scenarios := []prefixScenario{
		{name: "match: the history grew by one content", next: appendNew, matches: true},
		{name: "match: the same request again", next: func(p *Request) *Request {
			return &Request{Model: p.Model, Config: p.Config, Contents: coretest.ADKCopy(p.Contents)}
		}, matches: true},
		{name: "mismatch: a compaction in between", next: appendNew, state: func(f *fakeCtx) {
			// Another guard compacted after the record was stored.
			f.set(state.KeySummary, "the pods were checked")
			f.set(state.KeyWatermark, 8)
			f.set(state.KeyCompactions, 1)
		}},
		{name: "mismatch: the last estimate is another request's", next: appendNew, state: func(f *fakeCtx) {
			f.set(state.KeyLastEstimate, f.getInt(state.KeyLastEstimate)+100)
		}},
		{name: "mismatch: changed system instruction", next: func(p *Request) *Request {
			r := appendNew(p)
			cfg := *p.Config
			cfg.SystemInstruction = genai.NewContentFromText("You are an SRE assistant. Answer briefly.", genai.RoleUser)
			r.Config = &cfg
			return r
		}},
		{name: "mismatch: changed tool description", next: func(p *Request) *Request {
			r := appendNew(p)
			r.Config = prefixTools("Reads the logs of a pod, newest last.")
			return r
		}},
		{name: "mismatch: changed tool schema", next: func(p *Request) *Request {
			r := appendNew(p)
			cfg := prefixTools("Reads the logs of a pod.")
			cfg.Tools[0].FunctionDeclarations[0].ParametersJsonSchema = map[string]any{"type": "object", "properties": map[string]any{
				"pod": map[string]any{"type": "string"}, "container": map[string]any{"type": "string"}}}
			r.Config = cfg
			return r
		}},
		{name: "mismatch: an added tool", next: func(p *Request) *Request {
			r := appendNew(p)
			cfg := prefixTools("Reads the logs of a pod.")
			cfg.Tools[0].FunctionDeclarations = append(cfg.Tools[0].FunctionDeclarations, &genai.FunctionDeclaration{Name: "kubectl_get"})
			r.Config = cfg
			return r
		}},
		{name: "mismatch: a built-in tool added", next: func(p *Request) *Request {
			r := appendNew(p)
			cfg := prefixTools("Reads the logs of a pod.")
			cfg.Tools[0].GoogleSearch = &genai.GoogleSearch{}
			r.Config = cfg
			return r
		}},
		{name: "match: the same instruction and tools rebuilt", next: func(p *Request) *Request {
			r := appendNew(p)
			r.Config = prefixTools("Reads the logs of a pod.") // new values, the same JSON
			return r
		}, matches: true},
		{name: "mismatch: another model family's estimator", next: func(p *Request) *Request {
			r := appendNew(p)
			r.Model = "claude-sonnet-4-5"
			return r
		}},
		{name: "mismatch: the last content rewritten", next: func(p *Request) *Request {
			r := appendNew(p)
			r.Contents[len(p.Contents)-1] = modelMsg("the pods are unhealthy; latency doubled.")
			return r
		}},
		{name: "mismatch: a middle tool result rewritten", next: func(p *Request) *Request {
			r := appendNew(p)
			mid := len(p.Contents) / 2 // a tool result of the history
			require.True(t, hasFunctionResponse(r.Contents[mid]))
			r.Contents[mid] = respMsg("kubectl_logs", map[string]any{"output": "error: pod not found"})
			return r
		}},
		{name: "mismatch: rearranged (the last two contents swapped)", next: func(p *Request) *Request {
			r := appendNew(p)
			n := len(p.Contents)
			r.Contents[n-2], r.Contents[n-1] = r.Contents[n-1], r.Contents[n-2]
			return r
		}},
		{name: "mismatch: a shorter history", next: func(p *Request) *Request {
			return &Request{Model: p.Model, Config: p.Config, Contents: coretest.ADKCopy(p.Contents[:len(p.Contents)-4])}
		}},
		{name: "mismatch: another agent's view of the session", next: func(p *Request) *Request {
			// ADK shows another agent's events as "For context:" user
			// messages: the same events, other contents.
			r := appendNew(p)
			for i, c := range r.Contents[:len(p.Contents)] {
				if c.Role == genai.RoleModel {
					r.Contents[i] = &genai.Content{Role: genai.RoleUser, Parts: append([]*genai.Part{{Text: convo.ForeignContextLead}}, c.Parts...)}
				}
			}
			return r
		}},
		{name: "mismatch: a malformed record", next: appendNew, state: func(f *fakeCtx) {
			f.set(keyPrefix, "p2:12:x")
		}},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			counter := &countingCounter{}
			opts := []AgentOption{WithTokenCounter(counter), WithMaxTokens(1_000_000)}
			first, _ := newTestGuard(t, fixedSummary("unused"), opts...)
			ctx := newFakeCtx("a")
			prev := &Request{Model: "gemini-2.5-flash", Config: prefixTools("Reads the logs of a pod."), Contents: coretest.ToolHistory(3, "s1")}
			_, err := first.beforeModel(ctx, prev)
			require.NoError(t, err)
			require.NotEmpty(t, ctx.getStr(keyPrefix), "the call stores its prefix record")
			if sc.state != nil {
				sc.state(ctx)
			}

			req := sc.next(prev)
			fresh := len(req.Contents) - len(prev.Contents)
			restarted, _ := newTestGuard(t, fixedSummary("unused"), opts...)
			counter.take()
			_, err = restarted.beforeModel(ctx, req)
			require.NoError(t, err)
			counted := counter.take()

			// req now holds what is sent.
			assert.Equal(t, exactCount(req), ctx.getInt(state.KeyLastEstimate), "the count used is the whole request's")
			prefixBytes := len(requestText(&Request{Contents: req.Contents[:len(req.Contents)-max(fresh, 0)]}))
			if sc.matches {
				assert.Less(t, counted, prefixBytes/4, "only what is new is counted")
			} else {
				assert.GreaterOrEqual(t, counted, prefixBytes*3/4, "the whole request is counted")
			}
		})
	}
}

// TestPrefixCount_RecordFollowsTheSession: a record is stored after a call
// that did not compact, a compacting call clears it, and the call after the
// compaction counts everything and stores a new one that the next call
// uses.
func TestPrefixCount_RecordFollowsTheSession(t *testing.T) {
	counter := &countingCounter{}
	g, _ := newTestGuard(t, fixedSummary("the pods were checked; api-2 restarted"), WithTokenCounter(counter), WithMaxTokens(4_000))
	ctx := newFakeCtx("a").withUser("restart api")
	h := coretest.ToolHistory(2, "s1")
	_, err := g.beforeModel(ctx, &Request{Model: "gemini-2.5-flash", Config: prefixTools("Reads the logs of a pod."), Contents: h})
	require.NoError(t, err)
	require.NotEmpty(t, ctx.getStr(keyPrefix))

	// The history outgrows the trigger: the call compacts.
	h = append(h, coretest.ToolHistory(6, "s2")...)
	h = append(h, userMsg("restart api"))
	_, err = g.beforeModel(ctx, &Request{Model: "gemini-2.5-flash", Config: prefixTools("Reads the logs of a pod."), Contents: coretest.ADKCopy(h)})
	require.NoError(t, err)
	require.Equal(t, 1, ctx.getInt(state.KeyCompactions))
	assert.Empty(t, ctx.getStr(keyPrefix), "a compaction clears the record")

	// The next call counts everything it sends and stores a record.
	h = append(h, modelMsg("restarting api now"))
	h = append(h, coretest.ToolHistory(2, "s3")...)
	req := &Request{Model: "gemini-2.5-flash", Config: prefixTools("Reads the logs of a pod."), Contents: coretest.ADKCopy(h)}
	_, err = g.beforeModel(ctx, req)
	require.NoError(t, err)
	require.Equal(t, 1, ctx.getInt(state.KeyCompactions))
	rec, ok := decodePrefixRecord(ctx.getStr(keyPrefix))
	require.True(t, ok)
	assert.True(t, rec.injected, "the record says the summary was injected")

	// A restarted guard counts only the new content and the summary.
	h = append(h, userMsg("is it up?"))
	req = &Request{Model: "gemini-2.5-flash", Config: prefixTools("Reads the logs of a pod."), Contents: coretest.ADKCopy(h)}
	restarted, _ := newTestGuard(t, fixedSummary("unused"), WithTokenCounter(counter), WithMaxTokens(4_000))
	counter.take()
	_, err = restarted.beforeModel(ctx, req)
	require.NoError(t, err)
	counted := counter.take()
	full := exactCount(req)
	assert.Equal(t, full, ctx.getInt(state.KeyLastEstimate), "the count used is the whole request's")
	assert.Less(t, counted, len(requestText(req))/2, "the prefix was not counted again")
}

// TestPrefixCount_NeverBelowTheRealCount: the provider's count of the
// previous request stays the floor of a call that counts only what is new,
// and the calibration is the one the whole count gives.
func TestPrefixCount_NeverBelowTheRealCount(t *testing.T) {
	tests := []struct {
		name string
		real func(est int) int
	}{
		{"the provider counts more than the estimate", func(est int) int { return est * 13 / 10 }},
		{"the provider counts less than the estimate", func(est int) int { return est * 9 / 10 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			first, _ := newTestGuard(t, fixedSummary("unused"), WithMaxTokens(1_000_000))
			ctx := newFakeCtx("a")
			prev := &Request{Model: "gemini-2.5-flash", Config: prefixTools("Reads the logs of a pod."), Contents: coretest.ToolHistory(3, "s1")}
			_, err := first.beforeModel(ctx, prev)
			require.NoError(t, err)
			real := tt.real(ctx.getInt(state.KeyLastEstimate))
			_, err = first.afterModel(ctx, &Response{UsageMetadata: &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: int32(real)}}, nil)
			require.NoError(t, err)

			req := appendNew(prev)
			restarted, _ := newTestGuard(t, fixedSummary("unused"), WithMaxTokens(1_000_000))
			before := sessionStateOf(ctx)
			_, err = restarted.beforeModel(ctx, req)
			require.NoError(t, err)
			est := ctx.getInt(state.KeyLastEstimate)
			assert.Equal(t, requestTokens(testEst, engineReq(req)), est)
			cal := newCalibration(before, testEst)
			assert.GreaterOrEqual(t, cal.Count(est), real, "never below the provider's count of the prefix")
		})
	}
}

// sessionStateOf is the agent "a"'s state as the guard loads it.
func sessionStateOf(f *fakeCtx) state.Agent {
	return state.IO{Agent: f.agentName, Log: quietLog}.Load(f.state)
}

// exactCount is the whole request's count by the tests' exact counter.
func exactCount(req *Request) int {
	e, _ := (&Agent{counter: TokenCounterFunc(func(s string) int { return len(s)/4 + 1 })}).estimator(req.Model)
	return requestTokens(e, engineReq(req))
}

func TestPrefixRecord_Encoding(t *testing.T) {
	r := prefixRecord{contents: 12, cut: 3, injected: true, compactions: 2, frontier: 6, total: 9000, body: 8000, config: 0xdeadbeef, chain: 1<<63 + 5}
	got, ok := decodePrefixRecord(r.encode())
	require.True(t, ok)
	assert.Equal(t, r, got)
	for _, bad := range []string{"", "p2", "p1:12:3:1:2:6:9000:8000:a:b", "p3:12:3:1:2:6:9000:8000:a:b", "p2:12:3:1:2:6:9000:8000:a", "p2:-1:0:0:0:0:1:1:a:b",
		"p2:2:3:0:0:0:1:1:a:b", "p2:2:0:2:0:0:1:1:a:b", "p2:2:0:0:0:0:1:2:a:b", "p2:0:0:0:0:0:1:1:a:b", "p2:2:0:0:0:0:1:1:z:b"} {
		_, ok := decodePrefixRecord(bad)
		assert.False(t, ok, bad)
	}
}

// TestPrefixRecord_MatchesOnlyTheRequestItDescribes: a call records the
// request it let through; the next call's request, which extends it,
// matches the record only when the summary's injection, the compaction
// counter, the last estimate in state, the config hash and every content
// of the prefix are what the record says.
func TestPrefixRecord_MatchesOnlyTheRequestItDescribes(t *testing.T) {
	raw := coretest.ToolHistory(3, "s")
	own := prefixRecord{contents: len(raw), cut: 2, injected: true, compactions: 1, config: 7}
	first := prefixMatch{own: own, body: 900}
	stored := first.ownRecord(raw, &countcache.Chain{Memo: &countcache.Memo{}}, 2, 1000)
	sio := state.IO{Agent: "a", Log: quietLog}

	edited := coretest.ADKCopy(raw)
	edited[1] = userMsg("another question")
	for _, tt := range []struct {
		name    string
		edit    func(*prefixRecord)
		raw     []*genai.Content
		matches bool
	}{
		{name: "the same request, extended", matches: true},
		{name: "another compaction since", edit: func(r *prefixRecord) { r.compactions++ }},
		{name: "another last estimate in state", edit: func(r *prefixRecord) { r.total++ }},
		{name: "the summary cut elsewhere", edit: func(r *prefixRecord) { r.cut++ }},
		{name: "no summary injected", edit: func(r *prefixRecord) { r.injected = false }},
		{name: "other tools or instruction", edit: func(r *prefixRecord) { r.config++ }},
		{name: "a content of the prefix edited", raw: edited},
		{name: "a shorter history", raw: raw[:len(raw)-1]},
	} {
		t.Run(tt.name, func(t *testing.T) {
			next := append(coretest.ADKCopy(raw), userMsg("and restart it"))
			if tt.raw != nil {
				next = append(coretest.ADKCopy(tt.raw), userMsg("and restart it"))
			}
			o := prefixRecord{contents: len(next), cut: own.cut, injected: own.injected, compactions: own.compactions,
				total: 1000, config: own.config}
			if tt.edit != nil {
				tt.edit(&o)
			}
			m := matchPrefix(sio, stored, o, next, &countcache.Chain{Memo: &countcache.Memo{}})
			assert.Equal(t, tt.matches, m.matched)
			assert.Equal(t, stored, m.stored, "the record the call started from")
			assert.Equal(t, o.config, m.config, "the call's own config hash")
		})
	}
}

// wordCounter is the provider's tokenizer of the edit tests: one token per
// word, so an edit that keeps a text's length and ends can change its count
// many times over.
var wordCounter = NameTokenCounter("words/v1", TokenCounterFunc(func(s string) int { return len(strings.Fields(s)) }))

// wordCount is a request's whole count by wordCounter.
func wordCount(r *Request) int {
	e, _ := (&Agent{counter: wordCounter}).estimator(r.Model)
	return requestTokens(e, engineReq(r))
}

// lookAlike returns a text of s's length and first and last 32 bytes, whose
// middle is words where s has one long word: the same shape, many more
// tokens (a PII mask, a regenerated chunk).
func lookAlike(s string) string {
	const ends = 32
	mid := []byte(strings.Repeat("x ", len(s)))[:len(s)-2*ends]
	return s[:ends] + string(mid) + s[len(s)-ends:]
}

// TestPrefixCount_SameLengthEditIsSeen: an edit that keeps a content's
// length and both 32-byte ends, at any position of the prefix (the sampled
// mark of earlier versions saw only six), is seen by the prefix chain, in
// the process that stored the record and in a restarted one: the count
// used is the whole request's.
func TestPrefixCount_SameLengthEditIsSeen(t *testing.T) {
	body := "begin " + strings.Repeat("x", 4000) + " end of the message, checked."
	for _, restart := range []bool{false, true} {
		for edited := range 12 {
			t.Run(fmt.Sprintf("restart=%v/content %d", restart, edited), func(t *testing.T) {
				opts := []AgentOption{WithTokenCounter(wordCounter), WithMaxTokens(1_000_000)}
				g, _ := newTestGuard(t, fixedSummary("unused"), opts...)
				ctx := newFakeCtx("a")
				h := coretest.ToolHistory(3, "s1") // 12 contents
				h[edited] = modelMsg(body)
				_, err := g.beforeModel(ctx, &Request{Model: "gemini-2.5-flash", Contents: h})
				require.NoError(t, err)

				h2 := coretest.ADKCopy(h)
				h2[edited] = modelMsg(lookAlike(body))
				require.Len(t, h2[edited].Parts[0].Text, len(body))
				req := &Request{Model: "gemini-2.5-flash", Contents: append(h2, userMsg("what now?"))}
				if restart {
					g, _ = newTestGuard(t, fixedSummary("unused"), opts...)
				}
				_, err = g.beforeModel(ctx, req)
				require.NoError(t, err)
				assert.Equal(t, wordCount(req), ctx.getInt(state.KeyLastEstimate), "the edit is seen: the whole request is counted")
			})
		}
	}
}

// TestPrefixCount_LookAlikeChunkNeverMatches: an agent that sees only the
// current message (IncludeContents "none") sends one new chunk per call. A
// chunk of the same byte length and the same 32-byte ends as the previous
// one is another content, whose count is its own, in the process that
// served the previous call and after a restart.
func TestPrefixCount_LookAlikeChunkNeverMatches(t *testing.T) {
	chunk := "Chunk 1 of the report follows:  " + strings.Repeat("y", 20_000) + "  -- end of chunk, please go on."
	for _, restart := range []bool{false, true} {
		t.Run(fmt.Sprint("restart=", restart), func(t *testing.T) {
			opts := []AgentOption{WithTokenCounter(wordCounter), WithMaxTokens(1_000_000)}
			g, _ := newTestGuard(t, fixedSummary("unused"), opts...)
			ctx := newFakeCtx("a")
			_, err := g.beforeModel(ctx, &Request{Model: "gemini-2.5-flash", Contents: []*genai.Content{userMsg(chunk)}})
			require.NoError(t, err)
			first := ctx.getInt(state.KeyLastEstimate)

			next := &Request{Model: "gemini-2.5-flash", Contents: []*genai.Content{userMsg(lookAlike(chunk))}}
			if restart {
				g, _ = newTestGuard(t, fixedSummary("unused"), opts...)
			}
			_, err = g.beforeModel(ctx, next)
			require.NoError(t, err)
			assert.Equal(t, wordCount(next), ctx.getInt(state.KeyLastEstimate), "the new chunk is counted")
			assert.Greater(t, ctx.getInt(state.KeyLastEstimate), 100*first, "not the previous chunk's estimate")
		})
	}
}

// TestPrefixCount_RecordNamesItsCounter: a restarted guard trusts a prefix
// record only when it counts with the counter that wrote it, known by its
// stable name: another counter, or a counter without a name (which cannot
// prove it is the same), counts the whole request.
func TestPrefixCount_RecordNamesItsCounter(t *testing.T) {
	bytes4 := func(s string) int { return len(s)/4 + 1 }
	words := func(s string) int { return len(strings.Fields(s)) }
	tests := []struct {
		name          string
		before, after TokenCounter
		trusted       bool
	}{
		{"the same name", NameTokenCounter("bytes/v1", TokenCounterFunc(bytes4)), NameTokenCounter("bytes/v1", TokenCounterFunc(bytes4)), true},
		{"another name", NameTokenCounter("words/v1", TokenCounterFunc(words)), NameTokenCounter("bytes/v1", TokenCounterFunc(bytes4)), false},
		{"another unnamed counter", TokenCounterFunc(words), TokenCounterFunc(bytes4), false},
		{"the same unnamed counter", TokenCounterFunc(bytes4), TokenCounterFunc(bytes4), false},
		{"an empty name", NameTokenCounter("", TokenCounterFunc(bytes4)), NameTokenCounter("", TokenCounterFunc(bytes4)), false},
		{"the built-in estimator before", nil, NameTokenCounter("bytes/v1", TokenCounterFunc(bytes4)), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := func(tc TokenCounter) []AgentOption {
				o := []AgentOption{WithMaxTokens(1_000_000)}
				if tc != nil {
					o = append(o, WithTokenCounter(tc))
				}
				return o
			}
			first, _ := newTestGuard(t, fixedSummary("unused"), opts(tt.before)...)
			ctx := newFakeCtx("a")
			prev := &Request{Model: "gemini-2.5-flash", Contents: coretest.ToolHistory(3, "s1")}
			_, err := first.beforeModel(ctx, prev)
			require.NoError(t, err)
			require.NotEmpty(t, ctx.getStr(keyPrefix))

			// The restarted guard's counter, as tt.after names it, also
			// records what it counts.
			counting := &countingCounter{}
			var after TokenCounter = TokenCounterFunc(func(s string) int { counting.CountTokens(s); return tt.after.CountTokens(s) })
			if n, ok := tt.after.(NamedTokenCounter); ok {
				after = NameTokenCounter(n.CounterName(), after)
			}
			restarted, _ := newTestGuard(t, fixedSummary("unused"), opts(after)...)
			req := appendNew(prev)
			counting.take()
			_, err = restarted.beforeModel(ctx, req)
			require.NoError(t, err)
			counted := counting.take()
			prefixBytes := len(requestText(&Request{Contents: prev.Contents}))
			if tt.trusted {
				assert.Less(t, counted, prefixBytes/4, "the record is trusted: only what is new is counted")
			} else {
				assert.GreaterOrEqual(t, counted, prefixBytes*3/4, "the record is not trusted: the whole request is counted")
			}
		})
	}
}

// TestPrefixCount_OldRecordIsIgnored: a record of the earlier format (a
// sampled mark) is not misread: the whole request is counted, and the
// call stores a record of the current format.
func TestPrefixCount_OldRecordIsIgnored(t *testing.T) {
	counter := &countingCounter{}
	g, _ := newTestGuard(t, fixedSummary("unused"), WithTokenCounter(counter), WithMaxTokens(1_000_000))
	ctx := newFakeCtx("a")
	prev := &Request{Model: "gemini-2.5-flash", Contents: coretest.ToolHistory(3, "s1")}
	_, err := g.beforeModel(ctx, prev)
	require.NoError(t, err)
	rec, ok := decodePrefixRecord(ctx.getStr(keyPrefix))
	require.True(t, ok)
	old := "p1" + strings.TrimPrefix(rec.encode(), prefixRecordVersion)
	ctx.set(keyPrefix, old)

	restarted, _ := newTestGuard(t, fixedSummary("unused"), WithTokenCounter(counter), WithMaxTokens(1_000_000))
	counter.take()
	req := appendNew(prev)
	_, err = restarted.beforeModel(ctx, req)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, counter.take(), len(requestText(&Request{Contents: prev.Contents}))*3/4, "the whole request is counted")
	assert.True(t, strings.HasPrefix(ctx.getStr(keyPrefix), prefixRecordVersion+":"), "a record of the current format is stored")
}

// TestConfigHashes_CachedAndBounded: an instruction's or declaration's hash
// is computed once per identity key, and the cache never holds more than
// maxConfigHashes entries.
func TestConfigHashes_CachedAndBounded(t *testing.T) {
	var c configHashes
	calls := 0
	f := func() uint64 { calls++; return 42 }
	assert.Equal(t, uint64(42), c.get(1, nil, f))
	assert.Equal(t, uint64(42), c.get(1, nil, f))
	assert.Equal(t, 1, calls, "a hit does not hash again")
	for k := range uint64(maxConfigHashes + 10) {
		c.get(k+2, nil, f)
	}
	assert.LessOrEqual(t, len(c.entries), maxConfigHashes)
	assert.Equal(t, maxConfigHashes+11, calls)
}

// TestPrefixCount_EveryCallCountsTheWholeRequest plays a session step by
// step in one process, with and without tool-result pruning (whose
// frontier moves every few steps, so some calls match their record and
// others count everything): every call's estimate is the whole request's,
// as sent.
func TestPrefixCount_EveryCallCountsTheWholeRequest(t *testing.T) {
	for _, pruneKeep := range []int{0, 2} {
		t.Run(fmt.Sprint("pruning keep=", pruneKeep), func(t *testing.T) {
			opts := []AgentOption{WithTokenCounter(&countingCounter{}), WithMaxTokens(1_000_000)}
			if pruneKeep > 0 {
				// Every pass moves the frontier, as before WithPruningMinFree.
				opts = append(opts, WithToolResultPruning(pruneKeep), WithPruningMinFree(1))
			}
			g, _ := newTestGuard(t, fixedSummary("unused"), opts...)
			ctx := newFakeCtx("a")
			var h []*genai.Content
			pruned := 0
			for step := range 8 {
				for _, c := range coretest.ToolHistory(1, fmt.Sprint("step", step)) {
					h = append(h, c)
					req := &Request{Model: "gemini-2.5-flash", Config: prefixTools("Reads the logs of a pod."), Contents: coretest.ADKCopy(h)}
					_, err := g.beforeModel(ctx, req)
					require.NoError(t, err)
					require.Equal(t, exactCount(req), ctx.getInt(state.KeyLastEstimate), "step %d, %d contents", step, len(h))
					if strings.Contains(requestText(req), "removed to save context") {
						pruned++
					}
				}
			}
			if pruneKeep > 0 {
				assert.Positive(t, pruned, "pruning ran")
			}
		})
	}
}

// TestPrefixCount_InPlaceEditIsSeen: a history edited in place between two
// calls (the same contents, one field of one changed) is counted as it now
// is, in the process that served the first call: the memo of the prefix
// chain sees the edit though every pointer it saw is the same.
func TestPrefixCount_InPlaceEditIsSeen(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(h []*genai.Content)
	}{
		{"a text changed at the same length", func(h []*genai.Content) {
			h[3].Parts[0].Text = strings.ReplaceAll(h[3].Parts[0].Text, " ", "_")
		}},
		{"a call argument changed", func(h []*genai.Content) {
			h[5].Parts[0].FunctionCall.Args["pod"] = "api 1 in the eu region"
		}},
		{"a nested argument changed", func(h []*genai.Content) {
			h[1].Parts[0].FunctionCall.Args["opts"].(map[string]any)["since"] = "the last two hours"
		}},
		{"a tool result changed", func(h []*genai.Content) {
			h[6].Parts[0].FunctionResponse.Response["output"] = "error: pod not found"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, _ := newTestGuard(t, fixedSummary("unused"), WithTokenCounter(wordCounter), WithMaxTokens(1_000_000))
			ctx := newFakeCtx("a")
			h := coretest.ToolHistory(3, "s1")
			h[1].Parts[0].FunctionCall.Args["opts"] = map[string]any{"since": "1h"}
			_, err := g.beforeModel(ctx, &Request{Model: "gemini-2.5-flash", Contents: h})
			require.NoError(t, err)

			tc.edit(h)
			req := &Request{Model: "gemini-2.5-flash", Contents: append(h[:len(h):len(h)], userMsg("what now?"))}
			_, err = g.beforeModel(ctx, req)
			require.NoError(t, err)
			assert.Equal(t, wordCount(req), ctx.getInt(state.KeyLastEstimate), "the edited request is counted")
		})
	}
}
