package coretest

import (
	"context"
	"errors"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"
)

// TestSummarizer_BlockingFaults: FaultSlow and FaultHang record their input,
// tell the test they block (OnBlocked), and block: FaultSlow until its
// context ends or the summarizer is released, FaultHang until released
// whatever its context. Wait returns once every call has returned.
func TestSummarizer_BlockingFaults(t *testing.T) {
	baseline := runtime.NumGoroutine()
	input := []*genai.Content{genai.NewContentFromText("the user said MARK-0000beef", genai.RoleUser)}
	blocked := make(chan struct{}, 4)
	s := NewSummarizer(SummarizerConfig{OnBlocked: func() { blocked <- struct{}{} }})
	s.InjectFault(1, FaultSlow)
	s.InjectFault(2, FaultHang)

	// FaultSlow: its context ends first.
	ctx, cancel := context.WithCancel(context.Background())
	slow := make(chan error, 1)
	go func() {
		_, err := s.Summarize(ctx, input, nil)
		slow <- err
	}()
	<-blocked
	assert.Equal(t, []string{"MARK-0000beef"}, s.Records()[0].Markers, "the input is recorded before it blocks")
	cancel()
	assert.ErrorIs(t, <-slow, context.Canceled)

	// FaultHang: its context ends, and it goes on blocking until released.
	hung := make(chan *genai.Content, 1)
	go func() {
		c, err := s.Summarize(ctx, input, nil)
		assert.NoError(t, err)
		hung <- c
	}()
	<-blocked
	waitCtx, stopWaiting := context.WithCancelCause(context.Background())
	errStillBlocked := errors.New("still blocked")
	stopWaiting(errStillBlocked)
	assert.ErrorIs(t, s.Wait(waitCtx), errStillBlocked, "the hung call is still in progress")
	select {
	case <-hung:
		t.Fatal("FaultHang answered before it was released")
	default:
	}
	s.Release()
	require.NoError(t, s.Wait(context.Background()))
	c := <-hung
	require.NotNil(t, c)
	assert.Contains(t, c.Parts[0].Text, "MARK-0000beef", "a released call answers normally")
	assert.Equal(t, "hang", s.Records()[1].Fault.String())
	assert.Equal(t, "slow", s.Records()[0].Fault.String())

	// Once released, a blocking fault answers at once.
	s.InjectFault(3, FaultSlow)
	_, err := s.Summarize(context.Background(), input, nil)
	require.NoError(t, err)
	assert.Zero(t, GoroutinesLeft(baseline))
}
