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

// TestSummarizer_AskedLength: the length a call asks for is read from the
// summary prompt's "under N words" in the system instruction (the
// transcript form) or in the last content (the instruction a guard appends
// to the agent's own request, its cached form), else half the output
// limit.
func TestSummarizer_AskedLength(t *testing.T) {
	prompt := func(s string) *genai.Content { return genai.NewContentFromText(s, genai.RoleUser) }
	tests := []struct {
		name     string
		contents []*genai.Content
		config   *genai.GenerateContentConfig
		want     int
	}{
		{"the transcript form", []*genai.Content{prompt("<conversation>...")},
			&genai.GenerateContentConfig{SystemInstruction: prompt("Keep the whole summary under 300 words."), MaxOutputTokens: 900}, 400},
		{"the cached form", []*genai.Content{prompt("the user's task"), prompt("Keep the whole summary under 600 words.")},
			&genai.GenerateContentConfig{SystemInstruction: prompt("You are a coding agent."), MaxOutputTokens: 900}, 800},
		{"only an output limit", []*genai.Content{prompt("the user's task")},
			&genai.GenerateContentConfig{SystemInstruction: prompt("You are a coding agent."), MaxOutputTokens: 900}, 450},
		{"nothing stated", []*genai.Content{prompt("the user's task")}, &genai.GenerateContentConfig{}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewSummarizer(SummarizerConfig{})
			_, err := s.Summarize(t.Context(), tc.contents, tc.config)
			require.NoError(t, err)
			require.Len(t, s.Records(), 1)
			assert.Equal(t, tc.want, s.Records()[0].Asked)
		})
	}
}
