package integration

import (
	"context"
	"fmt"
	"iter"
	"sync"

	"google.golang.org/adk/v2/model"
	"google.golang.org/genai"
)

// agentRecord is one request the scripted agent model received.
type agentRecord struct {
	// Tokens is the ground truth of the request, reported as
	// UsageMetadata.PromptTokenCount.
	Tokens int
	// FirstText is the text of the request's first content.
	FirstText string
	// Text is every text and tool payload of the request.
	Text string
}

// agentModel is the scripted agent: a model.LLM that plays the scenario's
// tool-calling turns and reports the ground truth of each request as its
// prompt-token count. Like a provider it rejects a request larger than its
// window. It stands for the remote model, so replicas may share one.
type agentModel struct {
	name         string
	stepsPerTurn int
	window       int

	mu      sync.Mutex
	records []agentRecord
	// beforeReply, when set, runs (outside the lock) before the reply to
	// the request with the given index; tests use it to interleave work.
	beforeReply func(call int)
}

func newAgentModel(stepsPerTurn, window int) *agentModel {
	return &agentModel{name: agentModelName, stepsPerTurn: stepsPerTurn, window: window}
}

// Name implements model.LLM.
func (m *agentModel) Name() string { return m.name }

// Records returns a copy of the requests received so far.
func (m *agentModel) Records() []agentRecord {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]agentRecord(nil), m.records...)
}

// GenerateContent implements model.LLM.
func (m *agentModel) GenerateContent(_ context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		var system *genai.Content
		var tools []*genai.Tool
		if req.Config != nil {
			system, tools = req.Config.SystemInstruction, req.Config.Tools
		}
		rec := agentRecord{
			Tokens: groundTruth(req.Contents, system, tools),
			Text:   requestText(req.Contents),
		}
		if len(req.Contents) > 0 {
			rec.FirstText = contentText(req.Contents[0])
		}
		m.mu.Lock()
		call := len(m.records)
		m.records = append(m.records, rec)
		hook := m.beforeReply
		m.mu.Unlock()
		if hook != nil {
			hook(call)
		}
		if rec.Tokens > m.window {
			yield(nil, fmt.Errorf("400 INVALID_ARGUMENT: the input token count (%d) exceeds the maximum number of tokens allowed (%d)", rec.Tokens, m.window))
			return
		}
		reply, err := nextReply(req.Contents, m.stepsPerTurn)
		if err != nil {
			yield(nil, err)
			return
		}
		out := o200kCount(contentText(reply))
		yield(&model.LLMResponse{
			Content:      reply,
			FinishReason: genai.FinishReasonStop,
			TurnComplete: true,
			UsageMetadata: &genai.GenerateContentResponseUsageMetadata{
				PromptTokenCount:     int32(rec.Tokens),
				CandidatesTokenCount: int32(out),
				TotalTokenCount:      int32(rec.Tokens + out),
			},
		}, nil)
	}
}

// summarizerModel is the scripted summarizer: a model.LLM that counts its
// calls, keeps every input, and answers with summaryOf(input).
type summarizerModel struct {
	mu     sync.Mutex
	inputs []string
}

// Name implements model.LLM.
func (s *summarizerModel) Name() string { return summarizerModelName }

// Calls returns how many summaries were asked for.
func (s *summarizerModel) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.inputs)
}

// Inputs returns the inputs received, in order.
func (s *summarizerModel) Inputs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.inputs...)
}

// GenerateContent implements model.LLM.
func (s *summarizerModel) GenerateContent(_ context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		input := requestText(req.Contents)
		s.mu.Lock()
		s.inputs = append(s.inputs, input)
		s.mu.Unlock()
		var system *genai.Content
		if req.Config != nil {
			system = req.Config.SystemInstruction
		}
		in := groundTruth(req.Contents, system, nil)
		text := summaryOf(input)
		out := o200kCount(text)
		yield(&model.LLMResponse{
			Content:      genai.NewContentFromText(text, genai.RoleModel),
			FinishReason: genai.FinishReasonStop,
			TurnComplete: true,
			UsageMetadata: &genai.GenerateContentResponseUsageMetadata{
				PromptTokenCount: int32(in), CandidatesTokenCount: int32(out), TotalTokenCount: int32(in + out),
			},
		}, nil)
	}
}
