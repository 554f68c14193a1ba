package contextguard

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/adk/model"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core"
)

// The LLM summarizer: summaries written by an ADK v1 model.LLM.

// LLMSummarizer is the default Summarizer: one call to any model.LLM with a
// structured prompt (sections Current State, Key Information, Context &
// Decisions, Exact Next Steps, and the todo list). Over the agent's own
// model it is a core.CachedSummarizer: the guard asks it for the summary as
// the agent's request plus an instruction (WithSummaryForm).
type LLMSummarizer struct {
	llm model.LLM
}

var _ core.CachedSummarizer = (*LLMSummarizer)(nil)

// NewLLMSummarizer returns a Summarizer that asks llm for the summary. llm may
// be the agent's own model or a cheaper one.
func NewLLMSummarizer(llm model.LLM) *LLMSummarizer { return &LLMSummarizer{llm: llm} }

// ModelName is the name of the model the summarizer calls (core.ModelNamer:
// the guard logs it and looks up the model's window).
func (s *LLMSummarizer) ModelName() (string, bool) {
	if s == nil || s.llm == nil {
		return "", false
	}
	return s.llm.Name(), true
}

// SharesModel reports whether the summarizer calls the model named model
// (core.CachedSummarizer): models are told apart by name, as providers
// cache them.
func (s *LLMSummarizer) SharesModel(model string) bool {
	name, ok := s.ModelName()
	return ok && name == model
}

// Summarize asks the model for a summary and returns its text: in the
// cached form, req.Cached's contents and configuration as they are; else
// the summary prompt over the transcript.
func (s *LLMSummarizer) Summarize(ctx context.Context, req SummaryRequest) (string, error) {
	if s == nil || s.llm == nil {
		return "", errors.New("contextguard: LLMSummarizer has no model")
	}
	llmReq, err := s.request(req)
	if err != nil {
		return "", err
	}
	var out strings.Builder
	for resp, err := range s.llm.GenerateContent(ctx, llmReq, false) {
		if err != nil {
			return "", fmt.Errorf("contextguard: summarizer model %q: %w", s.llm.Name(), err)
		}
		if resp == nil || resp.Partial || resp.Content == nil {
			continue
		}
		for _, p := range resp.Content.Parts {
			if p != nil && !p.Thought {
				out.WriteString(p.Text)
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("contextguard: summarizer model %q: %w", s.llm.Name(), err)
	}
	return out.String(), nil
}

// request is the model request of req: a fresh slice of the cached form's
// contents and a copy of its configuration (a model may write both, as
// ADK's Gemini model adds headers to the configuration), else the summary
// prompt with the transcript.
func (s *LLMSummarizer) request(req SummaryRequest) (*model.LLMRequest, error) {
	if c := req.Cached; c != nil && c.Config != nil {
		cfg := *c.Config
		return &model.LLMRequest{Model: s.llm.Name(), Contents: slices.Clone(c.Contents), Config: &cfg}, nil
	}
	system, user, err := core.RenderSummaryPrompt(req)
	if err != nil {
		return nil, err
	}
	llmReq := &model.LLMRequest{
		Model: s.llm.Name(),
		Contents: []*genai.Content{
			{Role: genai.RoleUser, Parts: []*genai.Part{{Text: user}}},
		},
		Config: &genai.GenerateContentConfig{
			SystemInstruction: &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{Text: system}}},
		},
	}
	if req.SummaryTokens > 0 {
		// Room above the asked length so a slightly long answer is not cut
		// mid-sentence; the guard checks the length itself.
		llmReq.Config.MaxOutputTokens = int32(min(req.SummaryTokens*2, 1<<30))
	}
	return llmReq, nil
}
