package contextguardtest

import (
	"context"
	"errors"
	"iter"

	"github.com/adk-contextguard/contextguard/core/coretest"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/model"
)

// The scripted model: core/coretest's Script as an ADK v1 model.LLM.

// ScriptConfig configures a [ScriptedModel]. Its fields are those of
// [coretest.ScriptConfig], with the ground truth as a [Counter].
type ScriptConfig struct {
	// Name is the model name (default "scripted-model").
	Name string
	// Window is the context window in ground-truth tokens; a request above it
	// is rejected with an [*coretest.OverflowError]. 0 means unlimited.
	Window int
	// Counter is the ground truth (default SeedCounter(1)).
	Counter Counter
	// Plan returns the plan of a user turn (0-based). Nil plans answer every
	// turn with a short text.
	Plan func(turn int) TurnPlan
	// NoUsage disables UsageMetadata in responses.
	NoUsage bool
	// UsageFromTurn reports usage only from this turn on (0: from the start).
	UsageFromTurn int
	// ErrorStyle selects the overflow error's provider shape.
	ErrorStyle coretest.ErrorStyle
	// ProviderCallIDs gives function calls provider-style IDs ("call_..."),
	// which ADK keeps in later requests; by default calls have no ID, like
	// Gemini, and ADK's client IDs are stripped from contents.
	ProviderCallIDs bool
	// StreamChunks is the number of partial chunks yielded before the final
	// response when streaming a text answer (default 3).
	StreamChunks int
	// Seed makes tool arguments and texts deterministic.
	Seed int64
	// ReportUsage, if set, is the PromptTokenCount reported for the request
	// at index (its position in the model's log) whose ground truth is
	// tokens, in place of tokens. See [coretest.ScriptConfig].
	ReportUsage func(index, tokens int) int
	// CutAtOutputLimit, if set and true for a request's record, makes the
	// response stop at the output-token limit. See [coretest.ScriptConfig].
	CutAtOutputLimit func(rec coretest.RequestRecord) bool
}

// kit returns c as the configuration of a [coretest.Script].
func (c ScriptConfig) kit() coretest.ScriptConfig {
	return coretest.ScriptConfig{
		Name: c.Name, Window: c.Window, Counter: toKit(c.Counter), Plan: c.Plan,
		NoUsage: c.NoUsage, UsageFromTurn: c.UsageFromTurn, ErrorStyle: c.ErrorStyle,
		ProviderCallIDs: c.ProviderCallIDs, StreamChunks: c.StreamChunks, Seed: c.Seed,
		ReportUsage: c.ReportUsage, CutAtOutputLimit: c.CutAtOutputLimit,
	}
}

// ScriptedModel is a model.LLM that plays a scripted scenario: the ADK v1
// glue of a [coretest.Script], which decides each response (see there for
// how it finds its position in a rewritten request). It reports
// UsageMetadata.PromptTokenCount from its ground-truth [Counter], rejects
// requests above its window with an [*coretest.OverflowError], and records every
// request ([ScriptedModel.Requests]). It is safe for concurrent use across
// sessions.
type ScriptedModel struct {
	script  *coretest.Script
	observe func(rec *coretest.RequestRecord, req *model.LLMRequest)
}

var _ model.LLM = (*ScriptedModel)(nil)

// NewScriptedModel returns a model playing cfg.
func NewScriptedModel(cfg ScriptConfig) *ScriptedModel {
	return &ScriptedModel{script: coretest.NewScript(cfg.kit())}
}

// Name returns the configured model name.
func (m *ScriptedModel) Name() string { return m.script.Name() }

// Requests returns a copy of the records of every request received so far.
func (m *ScriptedModel) Requests() []coretest.RequestRecord { return m.script.Requests() }

// Rejected returns how many requests were rejected as too long.
func (m *ScriptedModel) Rejected() int { return m.script.Rejected() }

// sessionIDOf extracts the ADK session ID from the context ADK passes to
// models, if any. A context that names its session is asked for the ID
// first: ADK v2.2's callback context, which the guard's recovery model is
// called with, also answers Session(), with nil and a log line ("not
// supported for callback context").
func sessionIDOf(ctx context.Context) string {
	switch c := ctx.(type) {
	case agent.ReadonlyContext:
		return c.SessionID()
	case agent.InvocationContext:
		if sess := c.Session(); sess != nil {
			return sess.ID()
		}
	}
	return ""
}

// GenerateContent plays the next step of the scenario for req.
func (m *ScriptedModel) GenerateContent(ctx context.Context, req *model.LLMRequest, stream bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		if err := ctx.Err(); err != nil {
			yield(nil, err)
			return
		}
		if req == nil {
			yield(nil, errors.New("scripted model: nil request"))
			return
		}
		var observe func(*coretest.RequestRecord)
		if m.observe != nil {
			observe = func(rec *coretest.RequestRecord) { m.observe(rec, req) }
		}
		reply, err := m.script.Respond(ctx, sessionIDOf(ctx), req.Contents, req.Config, stream, observe)
		if err != nil {
			yield(nil, err)
			return
		}
		for _, chunk := range reply.Chunks {
			partial := &model.LLMResponse{Content: textContent(chunk), Partial: true}
			if !yield(partial, nil) {
				return
			}
		}
		yield(&model.LLMResponse{
			Content:       reply.Content,
			UsageMetadata: reply.Usage,
			TurnComplete:  true,
			FinishReason:  reply.FinishReason,
			ModelVersion:  m.script.Name(),
		}, nil)
	}
}
