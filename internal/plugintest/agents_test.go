package plugintest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	. "github.com/adk-contextguard/contextguard"
)

// TestAdd_RejectsTypedNils: a model or summarizer variable that was declared
// but never assigned is a typed nil, which a plain == nil check lets
// through; before, such a model crashed the first compaction. Add and
// AddDefault reject it with an error naming the call and the type.
func TestAdd_RejectsTypedNils(t *testing.T) {
	var noModel *fakeLLM
	var noSummarizer *nilSummarizer
	tests := []struct {
		name    string
		add     func(g *ContextGuard)
		wantErr string // "" when the configuration is valid
	}{
		{"typed-nil model", func(g *ContextGuard) { g.Add("a", noModel) }, `Add("a"): model is a nil *plugintest.fakeLLM`},
		{"typed-nil model beside a summarizer", func(g *ContextGuard) { g.Add("a", noModel, WithSummarizer(constSummarizer("s"))) }, "model is a nil"},
		{"typed-nil summarizer", func(g *ContextGuard) { g.Add("a", nil, WithSummarizer(noSummarizer)) }, "WithSummarizer: summarizer is nil"},
		{"typed-nil recovery model", func(g *ContextGuard) { g.Add("a", fixedSummary("s"), WithRecoveryModel(noModel)) }, "WithRecoveryModel: model is nil"},
		{"typed-nil default model", func(g *ContextGuard) { g.AddDefault(noModel) }, "AddDefault: model is a nil"},
		{"nil model beside a summarizer", func(g *ContextGuard) { g.Add("a", nil, WithSummarizer(constSummarizer("s"))) }, ""},
		{"nil model alone", func(g *ContextGuard) { g.Add("a", nil) }, "model is nil and no WithSummarizer was given"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := New(nil, WithLogger(quietLogger))
			tt.add(g)
			_, err := g.Plugin()
			if tt.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantErr)
		})
	}
}

// nilSummarizer is a Summarizer implemented on a pointer, for a typed nil.
type nilSummarizer struct{}

func (*nilSummarizer) Summarize(context.Context, SummaryRequest) (string, error) { return "", nil }

// constSummarizer is a Summarizer that always answers its text.
type constSummarizer string

func (s constSummarizer) Summarize(context.Context, SummaryRequest) (string, error) {
	return string(s), nil
}
