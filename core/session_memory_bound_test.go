package core

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/coretest"
	"github.com/adk-contextguard/contextguard/core/internal/contentid"
	"github.com/adk-contextguard/contextguard/core/internal/countcache"
	"github.com/adk-contextguard/contextguard/core/internal/state"
)

// boundedGuard is a guard with agent "a" and the given table bounds.
func boundedGuard(t *testing.T, opts ...Option) *Guard {
	t.Helper()
	g := newGuard(NewCrushRegistry(WithRegistryLogger(quietLog)), append(opts, WithLogger(quietLog))...)
	g.addModel("a", fixedSummary("unused"), WithMaxTokens(1_000_000))
	require.NoError(t, g.Err())
	return g
}

// tableKeys are the sessions the table holds, most recently used first.
func tableKeys(g *Guard) []string {
	g.sessions.mu.Lock()
	defer g.sessions.mu.Unlock()
	var out []string
	for el := g.sessions.order.Front(); el != nil; el = el.Next() {
		k := el.Value.(*sessionEntry).key
		out = append(out, k[strings.LastIndexByte(k, 0)+1:])
	}
	return out
}

// TestSessionBound_EvictsTheLeastRecentlyUsed: past either bound the table
// drops the least recently used idle sessions, and the session's next call
// counts only what is new from its prefix record, so eviction costs little.
func TestSessionBound_EvictsTheLeastRecentlyUsed(t *testing.T) {
	history := func(seed string) []*genai.Content { return coretest.ToolHistory(3, seed) } // about 8 KB each
	// What one session retains after its first call.
	probe := boundedGuard(t)
	_, err := probe.beforeModel(newFakeCtx("a"), &Request{Model: "gemini-2.5-flash", Contents: history("s0")})
	require.NoError(t, err)
	one := probe.sessions.bytes
	tests := []struct {
		name   string
		opts   []Option
		after  []string // sessions called, in order
		kept   []string // the table, most recent first
		maxLen int
	}{
		{"by sessions", []Option{WithMaxSessions(2)}, []string{"s1", "s2", "s3"}, []string{"s3", "s2"}, 2},
		{"by sessions, a session used again is kept", []Option{WithMaxSessions(2)}, []string{"s1", "s2", "s1", "s3"}, []string{"s3", "s1"}, 2},
		{"by bytes", []Option{WithMaxSessionBytes(one * 5 / 2)}, []string{"s1", "s2", "s3"}, []string{"s3", "s2"}, 3},
		{"neither bound reached", nil, []string{"s1", "s2", "s3"}, []string{"s3", "s2", "s1"}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := boundedGuard(t, tt.opts...)
			ctxs := map[string]*fakeCtx{}
			for _, id := range tt.after {
				ctx := ctxs[id]
				if ctx == nil {
					ctx = newFakeCtx("a")
					ctx.sessionID = id
					ctxs[id] = ctx
				}
				_, err := g.beforeModel(ctx, &Request{Model: "gemini-2.5-flash", Contents: history(id)})
				require.NoError(t, err)
				assert.LessOrEqual(t, len(tableKeys(g)), tt.maxLen)
			}
			assert.Equal(t, tt.kept, tableKeys(g))
			g.sessions.mu.Lock()
			assert.LessOrEqual(t, g.sessions.bytes, g.sessions.max.bytes)
			g.sessions.mu.Unlock()
		})
	}
}

// TestSessionBound_EvictedSessionCountsWhatIsNew: the next call of an
// evicted session counts only its new content.
func TestSessionBound_EvictedSessionCountsWhatIsNew(t *testing.T) {
	counter := &countingCounter{}
	g := newGuard(NewCrushRegistry(WithRegistryLogger(quietLog)), WithLogger(quietLog), WithMaxSessions(1))
	g.addModel("a", fixedSummary("unused"), WithMaxTokens(1_000_000), WithTokenCounter(counter))
	require.NoError(t, g.Err())
	s1, s2 := newFakeCtx("a"), newFakeCtx("a")
	s2.sessionID = "s2"
	h := coretest.ToolHistory(3, "s1")
	_, err := g.beforeModel(s1, &Request{Model: "gemini-2.5-flash", Contents: h})
	require.NoError(t, err)
	_, err = g.beforeModel(s2, &Request{Model: "gemini-2.5-flash", Contents: coretest.ToolHistory(3, "s2")})
	require.NoError(t, err)
	require.Equal(t, []string{"s2"}, tableKeys(g), "s1 was evicted")

	counter.take()
	next := append(coretest.ADKCopy(h), userMsg("and the database?"))
	_, err = g.beforeModel(s1, &Request{Model: "gemini-2.5-flash", Contents: next})
	require.NoError(t, err)
	assert.Less(t, counter.take(), 100, "only the new message is counted")
	assert.Equal(t, exactCount(&Request{Model: "gemini-2.5-flash", Contents: next}), s1.getInt(state.KeyLastEstimate))
}

// TestSessionBound_IdleSessionRetainsWhatIsNew: a session's count cache
// retains its whole history after a call that counted everything, and only
// the call's new content after a call that used its prefix record; the
// prefix chain's memo pins the history in both cases.
func TestSessionBound_IdleSessionRetainsWhatIsNew(t *testing.T) {
	g := boundedGuard(t)
	ctx := newFakeCtx("a")
	h := coretest.ToolHistory(10, "s1")
	hb := len(requestText(&Request{Contents: h}))
	_, err := g.beforeModel(ctx, &Request{Model: "gemini-2.5-flash", Contents: h})
	require.NoError(t, err)
	assert.Greater(t, g.sessions.bytes, hb, "after a full count the history is cached")

	next := append(coretest.ADKCopy(h), userMsg("next"))
	_, err = g.beforeModel(ctx, &Request{Model: "gemini-2.5-flash", Contents: next})
	require.NoError(t, err)
	// The run ends: the request kept for a compaction between turns is let
	// go (between_turns.go).
	g.AfterRun(ctx, RunEnd{})
	// The prefix chain's memo keeps the strings of the contents it names
	// (core/internal/countcache), and is accounted as the count cache is.
	strs := 0
	for _, c := range next {
		strs += contentid.Size(c)
	}
	memo := g.sessions.peek(sessionKey(ctx)).memory("a").prefix.Bytes()
	assert.GreaterOrEqual(t, memo, strs, "the memo retains the contents' strings")
	assert.GreaterOrEqual(t, g.sessions.bytes, memo, "the memo is accounted")
	assert.Less(t, g.sessions.bytes, sessionOverhead+2*countcache.EntryOverhead+memo, "after a prefix count only the new message is cached")
}

// TestSessionBound_ReloadedSessionRetainsNoHistory: a session whose
// contents come with new strings on every call (a database session
// service) retains, once a call used its prefix record, only that call's
// new content and the chain's entries: the memo stops pinning contents
// whose strings never come back.
func TestSessionBound_ReloadedSessionRetainsNoHistory(t *testing.T) {
	g := boundedGuard(t)
	ctx := newFakeCtx("a")
	h := coretest.ToolHistory(10, "s1")
	_, err := g.beforeModel(ctx, &Request{Model: "gemini-2.5-flash", Contents: cloneContents(h)})
	require.NoError(t, err)
	next := cloneContents(append(h, userMsg("next")))
	_, err = g.beforeModel(ctx, &Request{Model: "gemini-2.5-flash", Contents: next})
	require.NoError(t, err)
	g.AfterRun(ctx, RunEnd{}) // the run ends (between_turns.go)
	assert.Less(t, g.sessions.bytes, sessionOverhead+2*countcache.EntryOverhead+len(next)*countcache.MemoEntryBytes, "no history is retained")
	assert.Equal(t, requestTokens(testEst, engineReq(&Request{Model: "gemini-2.5-flash", Contents: next})), ctx.getInt(state.KeyLastEstimate), "the count used is the whole request's")
}

// cloneContents copies a history with new bytes for every string, as a
// database session service returns it: nothing is shared with other
// sessions.
func cloneContents(cs []*genai.Content) []*genai.Content {
	var cloneValue func(v any) any
	cloneValue = func(v any) any {
		switch x := v.(type) {
		case string:
			return strings.Clone(x)
		case map[string]any:
			m := make(map[string]any, len(x))
			for k, e := range x {
				m[strings.Clone(k)] = cloneValue(e)
			}
			return m
		case []any:
			a := make([]any, len(x))
			for i, e := range x {
				a[i] = cloneValue(e)
			}
			return a
		}
		return v
	}
	out := make([]*genai.Content, len(cs))
	for i, c := range cs {
		cp := &genai.Content{Role: c.Role}
		for _, p := range c.Parts {
			pp := &genai.Part{Text: strings.Clone(p.Text)}
			if fc := p.FunctionCall; fc != nil {
				pp.FunctionCall = &genai.FunctionCall{Name: strings.Clone(fc.Name), Args: cloneValue(fc.Args).(map[string]any)}
			}
			if fr := p.FunctionResponse; fr != nil {
				pp.FunctionResponse = &genai.FunctionResponse{Name: strings.Clone(fr.Name), Response: cloneValue(fr.Response).(map[string]any)}
			}
			cp.Parts = append(cp.Parts, pp)
		}
		out[i] = cp
	}
	return out
}

// BenchmarkSessionMemory measures the bytes the guard retains per idle
// session, for 1,000 sessions of 200k tokens whose histories share nothing
// (as a database session service returns them): after the session's first
// call (everything counted and cached) and after its second (the prefix
// record used: only the new message cached), without a bound and with the
// default bounds. It reports the heap retained per session (B/session) and
// what the table accounts (accounted-B/session).
func BenchmarkSessionMemory(b *testing.B) {
	const sessions = 1_000
	base := syntheticRequest(200_000)
	for _, bc := range []struct {
		name  string
		calls int
		opts  []Option
	}{
		{"calls=1/unbounded", 1, []Option{WithMaxSessionBytes(1 << 40)}},
		{"calls=2/unbounded", 2, []Option{WithMaxSessionBytes(1 << 40)}},
		{"calls=1/default", 1, nil},
		{"calls=2/default", 2, nil},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for range b.N {
				g := newGuard(NewCrushRegistry(WithRegistryLogger(quietLog)), append(bc.opts, WithLogger(quietLog))...)
				g.addModel("a", fixedSummary("unused"), WithMaxTokens(1_000_000))
				before := heapInUse()
				for i := range sessions {
					ctx := newFakeCtx("a")
					ctx.sessionID = fmt.Sprint("s", i)
					h := cloneContents(base.Contents)
					for c := range bc.calls {
						cs := append(h[:len(h):len(h)], cloneContents([]*genai.Content{userMsg(fmt.Sprint("message ", c))})...)
						if _, err := g.beforeModel(ctx, &Request{Model: base.Model, Config: base.Config, Contents: cs}); err != nil {
							b.Fatal(err)
						}
						h = cs
					}
				}
				retained := heapInUse() - before
				g.sessions.mu.Lock()
				accounted, kept := g.sessions.bytes, g.sessions.order.Len()
				g.sessions.mu.Unlock()
				b.ReportMetric(float64(retained)/sessions, "B/session")
				b.ReportMetric(float64(accounted)/sessions, "accounted-B/session")
				b.ReportMetric(float64(kept), "sessions-kept")
				runtime.KeepAlive(g)
			}
		})
	}
}

// heapInUse is the live heap after a collection.
func heapInUse() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// TestSessionBound_ConcurrentAccounting: calls for many sessions at once
// under a small byte bound leave the table within its bounds, and its
// account equal to what its entries retain.
func TestSessionBound_ConcurrentAccounting(t *testing.T) {
	g := boundedGuard(t, WithMaxSessionBytes(40_000), WithMaxSessions(6))
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				id := fmt.Sprint("s", (w+i)%12)
				ctx := newFakeCtx("a")
				ctx.sessionID = id
				h := coretest.ToolHistory(1+i%3, id)
				if _, err := g.beforeModel(ctx, &Request{Model: "gemini-2.5-flash", Contents: h}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	s := g.sessions
	s.mu.Lock()
	defer s.mu.Unlock()
	sum := 0
	for el := s.order.Front(); el != nil; el = el.Next() {
		e := el.Value.(*sessionEntry)
		assert.Zero(t, e.users)
		e.mu.Lock()
		assert.Equal(t, e.retainedBytes(), e.accounted)
		e.mu.Unlock()
		sum += e.accounted
	}
	assert.Equal(t, sum, s.bytes)
	assert.LessOrEqual(t, s.bytes, s.max.bytes)
	assert.LessOrEqual(t, s.order.Len(), s.max.sessions)
	assert.Len(t, s.byKey, s.order.Len())
}

func TestSessionBoundOptions(t *testing.T) {
	tests := []struct {
		name    string
		opt     Option
		want    sessionBounds
		wantErr string
	}{
		{"defaults", nil, sessionBounds{DefaultMaxSessions, DefaultMaxSessionBytes}, ""},
		{"zero sessions keeps the default", WithMaxSessions(0), sessionBounds{DefaultMaxSessions, DefaultMaxSessionBytes}, ""},
		{"zero bytes keeps the default", WithMaxSessionBytes(0), sessionBounds{DefaultMaxSessions, DefaultMaxSessionBytes}, ""},
		{"sessions", WithMaxSessions(3), sessionBounds{3, DefaultMaxSessionBytes}, ""},
		{"bytes", WithMaxSessionBytes(1 << 20), sessionBounds{DefaultMaxSessions, 1 << 20}, ""},
		{"negative sessions", WithMaxSessions(-1), sessionBounds{DefaultMaxSessions, DefaultMaxSessionBytes}, "WithMaxSessions(-1): must be >= 0"},
		{"negative bytes", WithMaxSessionBytes(-5), sessionBounds{DefaultMaxSessions, DefaultMaxSessionBytes}, "WithMaxSessionBytes(-5): must be >= 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var opts []Option
			if tt.opt != nil {
				opts = append(opts, tt.opt)
			}
			g := newGuard(NewCrushRegistry(WithRegistryLogger(quietLog)), append(opts, WithLogger(quietLog))...)
			assert.Equal(t, tt.want, g.sessions.max)
			if tt.wantErr == "" {
				assert.NoError(t, g.Err())
				return
			}
			require.Error(t, g.Err())
			assert.Contains(t, g.Err().Error(), tt.wantErr)
			err := g.Err()
			assert.Error(t, err, "the plugin is not built with an invalid option")
		})
	}
}
