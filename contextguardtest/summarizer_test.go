package contextguardtest

import (
	"context"
	"strings"
	"testing"

	"github.com/adk-contextguard/contextguard/core/coretest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/adk/model"
	"google.golang.org/genai"
)

func summarize(ctx context.Context, s *SummarizerModel, text string) (string, error) {
	req := &model.LLMRequest{Contents: []*genai.Content{genai.NewContentFromText(text, genai.RoleUser)}}
	var out string
	for r, err := range s.GenerateContent(ctx, req, false) {
		if err != nil {
			return "", err
		}
		for _, p := range r.Content.Parts {
			out += p.Text
		}
	}
	return out, nil
}

func TestSummarizerModel_DigestAndSize(t *testing.T) {
	s := NewSummarizerModel(SummarizerConfig{SummarySize: 500, KeepText: true})
	out, err := summarize(context.Background(), s, "user said MARK-00000001 then MARK-0000abcd and MARK-00000001 again")
	require.NoError(t, err)
	assert.Len(t, out, 500)
	assert.Contains(t, out, "Markers: MARK-00000001 MARK-0000abcd\n")
	recs := s.Records()
	require.Len(t, recs, 1)
	assert.Equal(t, []string{"MARK-00000001", "MARK-0000abcd"}, recs[0].Markers)
	assert.Contains(t, recs[0].Text, "user said")
	assert.Positive(t, recs[0].Tokens)

	// Too many markers for the size: the newest are kept.
	var many []string
	for i := range 100 {
		many = append(many, Marker(int64(i)))
	}
	out, err = summarize(context.Background(), s, strings.Join(many, " "))
	require.NoError(t, err)
	assert.Contains(t, out, many[99])
	assert.NotContains(t, out, many[0])
	assert.LessOrEqual(t, len(out), 500)
	assert.Equal(t, 2, s.Calls())
}

func TestSummarizerModel_Faults(t *testing.T) {
	s := NewSummarizerModel(SummarizerConfig{})
	s.InjectFault(1, coretest.FaultError)
	s.InjectFault(2, coretest.FaultEmpty)
	s.InjectFault(3, coretest.FaultHuge)
	s.InjectFault(4, coretest.FaultSlow)
	s.InjectFault(5, coretest.FaultPanic)

	_, err := summarize(context.Background(), s, "a")
	assert.ErrorIs(t, err, coretest.ErrSummarizerFault)
	out, err := summarize(context.Background(), s, "a")
	assert.NoError(t, err)
	assert.Empty(t, out)
	out, err = summarize(context.Background(), s, "a")
	assert.NoError(t, err)
	assert.Len(t, out, coretest.HugeSummarySize)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // coretest.FaultSlow blocks until its context ends
	_, err = summarize(ctx, s, "a")
	assert.ErrorIs(t, err, context.Canceled)
	assert.Panics(t, func() { _, _ = summarize(context.Background(), s, "a") })
	out, err = summarize(context.Background(), s, "a")
	assert.NoError(t, err)
	assert.Len(t, out, coretest.DefaultSummarySize)
	assert.Equal(t, 6, s.Calls())
	assert.Equal(t, "slow", s.Records()[3].Fault.String())
}

// TestSummarizerModel_HangUntilReleased: coretest.FaultHang ignores its context,
// tells the test it blocks, and answers once released; Wait then sees no
// call in progress.
func TestSummarizerModel_HangUntilReleased(t *testing.T) {
	blocked := make(chan struct{}, 1)
	s := NewSummarizerModel(SummarizerConfig{OnBlocked: func() { blocked <- struct{}{} }})
	s.InjectFaultFrom(1, coretest.FaultHang)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	done := make(chan error, 1)
	go func() {
		_, err := summarize(ctx, s, "MARK-0000cafe")
		done <- err
	}()
	<-blocked
	s.Release()
	require.NoError(t, <-done, "a released call answers, whatever its context")
	require.NoError(t, s.Wait(context.Background()))
	assert.Equal(t, []string{"MARK-0000cafe"}, s.Records()[0].Markers)
}
