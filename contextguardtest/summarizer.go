package contextguardtest

import (
	"context"
	"iter"
	"regexp"

	"github.com/adk-contextguard/contextguard/core/coretest"
	"google.golang.org/adk/model"
	"google.golang.org/genai"
)

// The summarizer model: core/coretest's Summarizer as an ADK v1 model.LLM.

// SummarizerConfig configures a [SummarizerModel]. Its fields are those of
// [coretest.SummarizerConfig], with the ground truth as a [Counter].
type SummarizerConfig struct {
	// Name is the model name (default "scripted-summarizer").
	Name string
	// SummarySize is the size of the summaries in bytes (default
	// [coretest.DefaultSummarySize]).
	SummarySize int
	// Markers is the pattern of the markers the summary digests (default
	// [MarkerPattern]).
	Markers *regexp.Regexp
	// Counter measures the ground-truth tokens of each input (default
	// SeedCounter(1)).
	Counter Counter
	// KeepText keeps the flattened input of each call in
	// [coretest.SummarizerCall.Text] (off by default: inputs can be large).
	KeepText bool
	// FillBudget makes every summary as long as the length the guard asks
	// for, in tokens of Counter, instead of SummarySize bytes. See
	// [coretest.SummarizerConfig].
	FillBudget bool
	// OnBlocked, when set, is called by each call that blocks
	// ([coretest.FaultSlow], [coretest.FaultHang]) before it blocks, e.g. to advance the
	// guard's [FakeClock] past its summary timeout. See
	// [coretest.SummarizerConfig].
	OnBlocked func()
}

// SummarizerModel is a model.LLM to use as a guard's summarizer: the ADK v1
// glue of a [coretest.Summarizer]. It counts and records its calls and
// answers with a deterministic summary of a configured size that starts
// with a digest of the markers it saw in its input. Faults can be injected
// per call. It is safe for concurrent use.
type SummarizerModel struct {
	s *coretest.Summarizer
}

var _ model.LLM = (*SummarizerModel)(nil)

// NewSummarizerModel returns a summarizer configured by cfg.
func NewSummarizerModel(cfg SummarizerConfig) *SummarizerModel {
	return &SummarizerModel{s: coretest.NewSummarizer(coretest.SummarizerConfig{
		Name: cfg.Name, SummarySize: cfg.SummarySize, Markers: cfg.Markers,
		Counter: toKit(cfg.Counter), KeepText: cfg.KeepText, FillBudget: cfg.FillBudget, OnBlocked: cfg.OnBlocked,
	})}
}

// Name returns the model name.
func (s *SummarizerModel) Name() string { return s.s.Name() }

// InjectFault makes call number call (1-based) fail with f.
func (s *SummarizerModel) InjectFault(call int, f coretest.Fault) { s.s.InjectFault(call, f) }

// InjectFaultFrom makes every call from number call (1-based) on fail with
// f, unless [SummarizerModel.InjectFault] set a fault for that call.
func (s *SummarizerModel) InjectFaultFrom(call int, f coretest.Fault) { s.s.InjectFaultFrom(call, f) }

// Release lets every call blocked by [coretest.FaultSlow] or [coretest.FaultHang], and every
// later one, answer. See [coretest.Summarizer.Release].
func (s *SummarizerModel) Release() { s.s.Release() }

// Wait waits until no call is in progress, or returns ctx's error. A test
// that injects [coretest.FaultHang] calls Release and then Wait at its end, so that
// no goroutine is left behind. See [coretest.Summarizer.Wait].
func (s *SummarizerModel) Wait(ctx context.Context) error { return s.s.Wait(ctx) }

// Calls returns how many times the summarizer was called.
func (s *SummarizerModel) Calls() int { return s.s.Calls() }

// Records returns a copy of the record of every call.
func (s *SummarizerModel) Records() []coretest.SummarizerCall { return s.s.Records() }

// kit returns the summarizer's core (nil for a nil model).
func (s *SummarizerModel) kit() *coretest.Summarizer {
	if s == nil {
		return nil
	}
	return s.s
}

// GenerateContent records the call and answers with a summary (or the
// injected fault).
func (s *SummarizerModel) GenerateContent(ctx context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		var contents []*genai.Content
		var config *genai.GenerateContentConfig
		if req != nil {
			contents, config = req.Contents, req.Config
		}
		c, err := s.s.Summarize(ctx, contents, config)
		if err != nil {
			yield(nil, err)
			return
		}
		resp := &model.LLMResponse{Content: c, TurnComplete: true}
		if len(c.Parts) > 0 {
			resp.FinishReason = genai.FinishReasonStop
		}
		yield(resp, nil)
	}
}

// textContent is a model content of one text part.
func textContent(text string) *genai.Content {
	return &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{Text: text}}}
}
