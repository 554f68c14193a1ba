package core

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/adk-contextguard/contextguard/core/coretest"

	"github.com/adk-contextguard/contextguard/core/internal/state"
	"github.com/adk-contextguard/contextguard/core/internal/textcut"
)

// Using a prepared summary (prepared_use.go): sent when it still covers the
// request's prefix, waited for only as long as it is not written, dropped
// when the history changes or another compaction comes first.

// TestPrepared_UsedWhenReady: the summary prepared while the tools ran is
// written by the time the request reaches the trigger; the request compacts
// with it, without waiting: the model's tool calls and results after what
// it covers are sent verbatim, pairs intact, and no more summarizer calls
// are made than the one prepared.
func TestPrepared_UsedWhenReady(t *testing.T) {
	baseline := runtime.NumGoroutine()
	sum := newCtl(gateAnswer)
	s := newToolSession(t, sum)
	p := s.untilPrepared(t)
	waitUntil(t, "the prepared summary is written", p.ready)
	end := p.end

	ev, req := s.untilCompaction(t)
	assert.Equal(t, RanPrepared, ev.Ran)
	assert.Zero(t, ev.Waited, "the summary was ready")
	assert.Equal(t, 1, ev.SummarizerCalls)
	assert.Equal(t, 1, sum.Calls(), "no inline call beside the prepared one")
	assert.False(t, ev.Fallback)
	assert.LessOrEqual(t, ev.TokensAfter, ev.Threshold)
	assert.Equal(t, end, ev.ContentsSummarized, "the summary covers the request it was prepared from")
	require.NotEmpty(t, req.Contents)
	assert.Contains(t, textcut.ContentText(req.Contents[0]), "SUMMARY-1")
	assert.Equal(t, s.raw[end:], req.Contents[1:], "the contents after what it covers are sent verbatim")
	assert.NoError(t, coretest.CheckPairs(req.Contents))
	assert.Equal(t, end, s.ctx.getInt(state.KeyWatermark))
	assert.EqualValues(t, 1, s.g.prep.used.Load())
	assert.Nil(t, s.prepared())

	// The next steps go on from the compacted state.
	s.respond(t)
	s.request(t)
	s.finish(t, baseline)
}

// TestPrepared_WaitsForWhatIsLeft: the request reaches the trigger while
// the summary is still being written; the call waits for it (3 s on the
// guard's clock), and the event says so.
func TestPrepared_WaitsForWhatIsLeft(t *testing.T) {
	baseline := runtime.NumGoroutine()
	sum := newCtl(gateBlock)
	s := newToolSession(t, sum)
	s.untilPrepared(t)
	sum.waitEntered(t)

	type result struct {
		ev  CompactionEvent
		err error
	}
	done := make(chan result, 1)
	go func() {
		// Steps until the request compacts, on this goroutine: the
		// compacting one waits for the summary.
		for range 40 {
			req := request(s.raw...)
			if _, err := s.g.beforeModel(s.ctx, req); err != nil {
				done <- result{err: err}
				return
			}
			if ev, ok := s.lastEvent(); ok {
				done <- result{ev: ev}
				return
			}
			s.step++
			call := callMsg("read_file", map[string]any{"path": fmt.Sprintf("f%d.go", s.step)})
			if _, err := s.g.afterModel(s.ctx, &Response{Content: call}, nil); err != nil {
				done <- result{err: err}
				return
			}
			s.raw = append(s.raw, call, respMsg("read_file", map[string]any{"content": fillerOf(s.stepTokens, s.step)}))
		}
		done <- result{err: errors.New("no compaction")}
	}()
	// The summarizer's own timeout and the wait's are armed.
	ctx, cancel := context.WithTimeout(context.Background(), hangBound)
	defer cancel()
	require.NoError(t, s.clock.WaitTimers(ctx, 2))
	s.clock.Advance(3 * time.Second)
	sum.Release()
	r := <-done
	require.NoError(t, r.err)
	assert.Equal(t, RanPrepared, r.ev.Ran)
	assert.Equal(t, 3*time.Second, r.ev.Waited)
	assert.Equal(t, 1, sum.Calls())
	s.finish(t, baseline)
}

// TestPrepared_DroppedWhenHistoryChanges: the history the summary covers
// is no longer the request's prefix (an earlier content was edited); the
// prepared summary is dropped and cancelled, and a compaction of this
// request runs inline.
func TestPrepared_DroppedWhenHistoryChanges(t *testing.T) {
	baseline := runtime.NumGoroutine()
	sum := newCtl(gateBlock)
	s := newToolSession(t, sum)
	s.untilPrepared(t)
	sum.waitEntered(t)
	sum.set(gateAnswer) // the blocked call stays blocked until cancelled

	s.raw[1] = callMsg("read_file", map[string]any{"path": "another.go"})
	s.request(t)
	assert.Nil(t, s.prepared())
	assert.EqualValues(t, 1, s.g.prep.dropped.Load())
	sum.inFlight.Wait() // cancelled: it returns without being released
	sum.mu.Lock()
	assert.Len(t, sum.ctxErrs, 1, "the background summary was cancelled")
	sum.mu.Unlock()
	require.NotEmpty(t, s.events, "the request compacted")
	for _, ev := range s.events {
		assert.Equal(t, RanInline, ev.Ran)
		assert.Equal(t, InlinePreparedUnusable, ev.InlineReason)
	}
	s.finish(t, baseline)
}

// TestPrepared_DroppedWhenAnotherCompactionComesFirst: a requested
// compaction runs inline before the prepared summary is needed; the
// prepared summary is dropped and cancelled.
func TestPrepared_DroppedWhenAnotherCompactionComesFirst(t *testing.T) {
	baseline := runtime.NumGoroutine()
	sum := newCtl(gateBlock)
	s := newToolSession(t, sum)
	s.untilPrepared(t)
	sum.waitEntered(t)
	require.NoError(t, s.g.RequestCompactionInState(s.ctx.state, "a", ""))
	sum.set(gateAnswer)

	s.request(t)
	ev, ok := s.lastEvent()
	require.True(t, ok)
	assert.Equal(t, ReasonRequested, ev.Reason)
	assert.Equal(t, RanInline, ev.Ran)
	assert.Empty(t, ev.InlineReason, "a requested compaction runs inline by design")
	assert.Nil(t, s.prepared())
	assert.EqualValues(t, 1, s.g.prep.dropped.Load())
	s.finish(t, baseline)
}
