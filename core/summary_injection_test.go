package core

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/coretest"
	"github.com/adk-contextguard/contextguard/core/internal/contentid"
	"github.com/adk-contextguard/contextguard/core/internal/state"
	"github.com/adk-contextguard/contextguard/core/internal/textcut"
)

// eventLog is a fake Coverage: the host's log names each content by the ID
// of the event it was built from (ADK v2), whatever its position in the
// request.
type eventLog map[*genai.Content]string

func (l eventLog) Anchor(contents []*genai.Content, n int) string {
	return l[contents[n-1]]
}

func (l eventLog) Covered(contents []*genai.Content, anchor string) (int, bool) {
	for i := len(contents) - 1; i >= 0; i-- {
		if l[contents[i]] == anchor {
			return i + 1, true
		}
	}
	return 0, false
}

// logged names each of cs by an event ID in log, and returns cs.
func (l eventLog) logged(prefix string, cs ...*genai.Content) []*genai.Content {
	for i, c := range cs {
		l[c] = fmt.Sprintf("%s-%d", prefix, i)
	}
	return cs
}

// coveredSession is a session whose state holds a summary covering the
// first 10 contents of raw (watermark and fingerprint, as the earlier guard
// and ADK v1 store them), with anchor when it is not "".
func coveredSession(raw []*genai.Content, anchor string) *fakeCtx {
	ctx := newFakeCtx("a").withUser(latestRequest)
	ctx.set(state.KeySummary, "SUMMARY of the first ten")
	ctx.set(state.KeyWatermark, 10)
	ctx.set(state.KeyFingerprint, contentid.Fingerprint(raw[9]))
	if anchor != "" {
		ctx.set(state.KeyAnchor, anchor)
	}
	return ctx
}

// TestCoverage_AnchorDecidesTheCut walks the Coverage seam
// (ARCHITECTURE.md, Summary injection and the watermark): with a host that
// anchors coverage, the anchor in state decides where the summary ends, a
// rearranged request keeps the cut on the anchored content, state without an
// anchor (the earlier guard's, or ADK v1's) is located as before and then
// anchored, an anchor that does not hold (the log no longer has it, or its
// cut does not end at the fingerprinted content) degrades to the position
// and fingerprint, as without a host, and without Coverage nothing changes.
func TestCoverage_AnchorDecidesTheCut(t *testing.T) {
	type scenario struct {
		name string
		// build returns the session and the request, whose contents the
		// log names.
		build func(l eventLog) (ctx *fakeCtx, raw []*genai.Content, cov Coverage)
		// wantCut is how many leading contents of raw the summary replaces
		// (0: none, the request is sent as it is).
		wantCut int
		// wantAnchor is the anchor in state after the call.
		wantAnchor func(l eventLog, raw []*genai.Content) string
		wantLog    string
	}
	// base is 14 alternating messages; the eighth (index 7, a model
	// message) repeats the tenth (index 9), so it has the same fingerprint.
	base := func() []*genai.Content {
		cs := coretest.History(7, 40)
		cs[7] = modelMsg(textcut.ContentText(cs[9]))
		return cs
	}
	tests := []scenario{
		{
			name: "a rearranged request keeps the cut on the anchored content",
			build: func(l eventLog) (*fakeCtx, []*genai.Content, Coverage) {
				first := l.logged("e", base()...)
				ctx := coveredSession(first, l[first[9]])
				// The host now puts two contents first: by count the
				// watermark lands on the decoy with the same fingerprint;
				// the anchor names the tenth content of the first request.
				front := l.logged("front", userMsg("FRONT-1"), modelMsg("FRONT-2"))
				raw := append(append(front, first...), userMsg(latestRequest))
				return ctx, raw, l
			},
			wantCut:    12,
			wantAnchor: func(l eventLog, raw []*genai.Content) string { return l[raw[11]] },
		},
		{
			name: "the same request without an anchor in state is cut by count and fingerprint, and anchored there",
			build: func(l eventLog) (*fakeCtx, []*genai.Content, Coverage) {
				first := l.logged("e", base()...)
				ctx := coveredSession(first, "")
				front := l.logged("front", userMsg("FRONT-1"), modelMsg("FRONT-2"))
				raw := append(append(front, first...), userMsg(latestRequest))
				return ctx, raw, l
			},
			wantCut:    10,
			wantAnchor: func(l eventLog, raw []*genai.Content) string { return l[raw[9]] },
		},
		{
			name: "legacy state gets the anchor of its cut",
			build: func(l eventLog) (*fakeCtx, []*genai.Content, Coverage) {
				raw := append(l.logged("e", coretest.History(7, 40)...), userMsg(latestRequest))
				return coveredSession(raw, ""), raw, l
			},
			wantCut:    10,
			wantAnchor: func(l eventLog, raw []*genai.Content) string { return l[raw[9]] },
		},
		{
			name: "an anchor not in the log (IDs that changed between loads) degrades to the position and fingerprint, and is re-anchored",
			build: func(l eventLog) (*fakeCtx, []*genai.Content, Coverage) {
				raw := append(l.logged("e", coretest.History(7, 40)...), userMsg(latestRequest))
				return coveredSession(raw, "an-event-no-longer-in-the-log"), raw, l
			},
			wantCut:    10,
			wantAnchor: func(l eventLog, raw []*genai.Content) string { return l[raw[9]] },
			wantLog:    "anchor does not hold",
		},
		{
			name: "an anchor whose cut does not end at the fingerprinted content (a weak mapping) degrades to the position and fingerprint",
			build: func(l eventLog) (*fakeCtx, []*genai.Content, Coverage) {
				raw := append(l.logged("e", coretest.History(7, 40)...), userMsg(latestRequest))
				// The log names the fourth content by the anchor: a cut of
				// 4, whose last content is not the one summarized last.
				l[raw[3]] = "misplaced"
				return coveredSession(raw, "misplaced"), raw, l
			},
			wantCut:    10,
			wantAnchor: func(l eventLog, raw []*genai.Content) string { return l[raw[9]] },
			wantLog:    "anchor does not hold",
		},
		{
			name: "an anchor not in the log and a fingerprint found nowhere cuts nothing, and the anchor is cleared",
			build: func(l eventLog) (*fakeCtx, []*genai.Content, Coverage) {
				raw := append(l.logged("e", coretest.History(7, 40)...), userMsg(latestRequest))
				ctx := coveredSession(raw, "an-event-no-longer-in-the-log")
				ctx.set(state.KeyFingerprint, "0123456789abcdef")
				return ctx, raw, l
			},
			wantCut:    0,
			wantAnchor: func(eventLog, []*genai.Content) string { return "" },
			wantLog:    "fingerprint mismatch",
		},
		{
			name: "without Coverage an anchor in state is ignored and kept",
			build: func(l eventLog) (*fakeCtx, []*genai.Content, Coverage) {
				first := l.logged("e", base()...)
				ctx := coveredSession(first, l[first[9]])
				front := l.logged("front", userMsg("FRONT-1"), modelMsg("FRONT-2"))
				raw := append(append(front, first...), userMsg(latestRequest))
				return ctx, raw, nil
			},
			wantCut:    10,
			wantAnchor: func(l eventLog, raw []*genai.Content) string { return l[raw[11]] },
		},
		{
			name: "without Coverage legacy state gets no anchor",
			build: func(l eventLog) (*fakeCtx, []*genai.Content, Coverage) {
				raw := append(l.logged("e", coretest.History(7, 40)...), userMsg(latestRequest))
				return coveredSession(raw, ""), raw, nil
			},
			wantCut:    10,
			wantAnchor: func(eventLog, []*genai.Content) string { return "" },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sum := fixedSummary("unused")
			g, logs := newTestGuard(t, sum, WithMaxTokens(100_000))
			l := eventLog{}
			ctx, raw, cov := tt.build(l)
			req := request(raw...)
			req.Coverage = cov
			_, err := g.beforeModel(ctx, req)
			require.NoError(t, err)
			assert.Zero(t, sum.Calls(), "under the trigger: no compaction")

			if tt.wantCut == 0 {
				assert.Equal(t, raw, req.Contents, "the request is sent as it is")
			} else {
				require.Len(t, req.Contents, len(raw)-tt.wantCut+1)
				assert.Contains(t, textcut.ContentText(req.Contents[0]), "SUMMARY of the first ten")
				assert.Equal(t, raw[tt.wantCut:], req.Contents[1:], "the summary replaces the first %d contents", tt.wantCut)
			}
			assert.Equal(t, tt.wantAnchor(l, raw), ctx.getStr(state.KeyAnchor))
			if tt.wantLog != "" {
				assert.Contains(t, logs.String(), tt.wantLog)
			}
		})
	}
}

// TestCoverage_CompactionStoresTheAnchor: a compaction with a host that
// anchors coverage stores, beside the watermark and fingerprint, the anchor
// of the last content it covers, and the next call, whose request the host
// rearranged, is cut there; without Coverage no anchor is stored.
func TestCoverage_CompactionStoresTheAnchor(t *testing.T) {
	for _, anchored := range []bool{true, false} {
		t.Run(fmt.Sprintf("coverage=%v", anchored), func(t *testing.T) {
			sum := fixedSummary("SUMMARY-ONE: the user wants the build fixed.")
			g, _ := newTestGuard(t, sum, WithMaxTokens(8_000))
			ctx := newFakeCtx("a").withUser("LATEST please fix the build")
			l := eventLog{}
			raw := l.logged("e", append(coretest.History(20, 300), userMsg("LATEST please fix the build"))...)
			req := request(raw...)
			if anchored {
				req.Coverage = l
			}
			_, err := g.beforeModel(ctx, req)
			require.NoError(t, err)
			require.Equal(t, 1, sum.Calls())
			w := ctx.getInt(state.KeyWatermark)
			require.Positive(t, w)
			if !anchored {
				assert.Empty(t, ctx.getStr(state.KeyAnchor), "ADK v1: no anchor")
				return
			}
			assert.Equal(t, l[raw[w-1]], ctx.getStr(state.KeyAnchor))

			// The host drops the first two contents from the next request
			// and appends a step: the cut follows the anchored content.
			front := l.logged("front", userMsg("FRONT-1"), modelMsg("FRONT-2"))
			next := append(append(append([]*genai.Content{}, front...), raw...), l.logged("step", modelMsg("working on it"))...)
			req2 := request(next...)
			req2.Coverage = l
			_, err = g.beforeModel(ctx, req2)
			require.NoError(t, err)
			assert.Equal(t, 1, sum.Calls(), "no second summary")
			assert.Contains(t, textcut.ContentText(req2.Contents[0]), "SUMMARY-ONE")
			assert.Equal(t, next[w+2:], req2.Contents[1:], "the summary replaces what it covers, wherever the host put it")
		})
	}
}

// countingLog is an eventLog that counts the walks of the host's log
// (Covered), which cost a pass over the session's events in ADK v2.
type countingLog struct {
	eventLog
	covered int
}

func (l *countingLog) Covered(contents []*genai.Content, anchor string) (int, bool) {
	l.covered++
	return l.eventLog.Covered(contents, anchor)
}

// TestCoverage_ExtendedRequestReusesTheCut: once a call has located an
// anchored summary's cut and stored its prefix record, a call whose request
// extends that call's reuses the cut without walking the host's log; a
// request whose leading contents changed walks it again, and is cut on the
// anchored content.
func TestCoverage_ExtendedRequestReusesTheCut(t *testing.T) {
	sum := fixedSummary("SUMMARY-ONE: the user wants the build fixed.")
	g, _ := newTestGuard(t, sum, WithMaxTokens(8_000))
	ctx := newFakeCtx("a").withUser("LATEST please fix the build")
	l := &countingLog{eventLog: eventLog{}}
	raw := l.logged("e", append(coretest.History(20, 300), userMsg("LATEST please fix the build"))...)
	first := request(raw...)
	first.Coverage = l
	_, err := g.beforeModel(ctx, first)
	require.NoError(t, err)
	require.Equal(t, 1, sum.Calls(), "the first call compacts")
	w := ctx.getInt(state.KeyWatermark)
	require.Positive(t, w)

	// step k extends the request before it; moved puts two contents first.
	step1 := append(append([]*genai.Content{}, raw...), l.logged("s1", modelMsg("step one"))...)
	step2 := append(append([]*genai.Content{}, step1...), l.logged("s2", userMsg("tool output two"))...)
	step3 := append(append([]*genai.Content{}, step2...), l.logged("s3", modelMsg("step three"))...)
	front := l.logged("front", userMsg("FRONT-1"), modelMsg("FRONT-2"))
	moved := append(append(append([]*genai.Content{}, front...), step3...), l.logged("s4", userMsg("tool output four"))...)
	type call struct {
		name     string
		contents []*genai.Content
		walks    int // Covered calls this call makes
		cutAt    int // index in contents of the first content sent after the summary
		why      string
	}
	calls := []call{
		{"the first call after the compaction", step1, 1, w, "no prefix record yet: the log is walked"},
		{"a request extending the previous one", step2, 0, w, "the prefix record matches: the cut is reused"},
		{"another extension", step3, 0, w, "reused again"},
		{"a request whose leading contents changed", moved, 1, w + 2, "the marks differ: the log is walked, the cut follows the anchor"},
	}
	for _, c := range calls {
		before := l.covered
		req := request(c.contents...)
		req.Coverage = l
		_, err := g.beforeModel(ctx, req)
		require.NoError(t, err, c.name)
		assert.Equal(t, c.walks, l.covered-before, "%s: %s", c.name, c.why)
		assert.Contains(t, textcut.ContentText(req.Contents[0]), "SUMMARY-ONE", c.name)
		assert.Equal(t, c.contents[c.cutAt:], req.Contents[1:], "%s: the summary replaces what it covers", c.name)
	}
	assert.Equal(t, 1, sum.Calls(), "no second compaction")
}
