package core

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"strings"
	"text/template"

	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/sat"
	"github.com/adk-contextguard/contextguard/core/internal/textcut"
)

// The summarizer: its interface, its prompt and transcript.

// Summarizer turns a conversation into a summary the agent can resume from.
// Implementations should honour ctx; the guard bounds each call with the
// agent's summary timeout (it stops waiting when the timeout expires, even
// if Summarize has not returned) and falls back to a deterministic summary
// on any error, empty or oversize output, timeout or panic. Summarize runs
// without the guard's session lock, but a call it makes back into the guard
// for the session it summarizes, with ctx or a context derived from it,
// cannot be served and gets ErrReentrant.
type Summarizer interface {
	Summarize(ctx context.Context, req SummaryRequest) (string, error)
}

// SummaryRequest is what the guard hands a Summarizer. Contents and
// Transcript describe the same messages, already fitted to the summarizer's
// window: Contents for custom summarizers, Transcript as the LLM summarizer
// renders it. In the cached form (Cached set), Transcript is empty and
// Contents are the messages the summary covers beyond PreviousSummary.
type SummaryRequest struct {
	// Agent is the name of the agent whose conversation is summarized.
	Agent string
	// PreviousSummary is the summary of everything before Contents, or "".
	PreviousSummary string
	// Contents are the messages to summarize, oldest first.
	Contents []*genai.Content
	// Transcript is Contents rendered as text with bounded tool excerpts.
	Transcript string
	// UserRequest is the user's current request.
	UserRequest string
	// Todos is the session's todo list (state key "todos").
	Todos []TodoItem
	// SummaryTokens is the length budget of the summary, in tokens as a
	// typical tokenizer counts them (the guard's estimate before it is
	// calibrated to the agent's provider); not the context window.
	SummaryTokens int
	// Instructions are extra instructions appended to the prompt.
	Instructions string
	// Cached, when set, asks for the summary in the cached form
	// (SummaryFormCached): the summarizer sends Cached's contents and
	// configuration to the agent's model as they are; the instruction
	// there carries the prompt, Instructions, Todos and SummaryTokens. It
	// is set only for a CachedSummarizer that shares the agent's model.
	Cached *CachedSummaryCall
}

// CachedSummarizer is a Summarizer that can be asked for a summary in the
// cached form (SummaryFormCached): it then sends SummaryRequest.Cached to
// the agent's model as it is. Each adapter's LLMSummarizer is one; a
// custom Summarizer is asked in the transcript form unless it implements
// this interface.
type CachedSummarizer interface {
	Summarizer
	// SharesModel reports whether the summarizer's calls go to the model
	// named model, the agent's (the name its requests carry): only then
	// does the provider's cache hold the agent's request.
	SharesModel(model string) bool
}

// CachedSummaryCall is the call a CachedSummarizer makes in the cached
// form (SummaryRequest.Cached). Its values are shared with the agent's
// request: read them, never modify them.
type CachedSummaryCall struct {
	// Contents are the agent's contents as the guard would have sent them
	// had it not compacted (the stored summary in place, old tool results
	// pruned), followed by one user content whose text is Instruction.
	Contents []*genai.Content
	// Config is the agent's system instruction, tools and cached content,
	// with tool calling disabled (the tools stay declared, so the prefix is
	// the agent's) and MaxOutputTokens set to the summary's room.
	Config *genai.GenerateContentConfig
	// Instruction is the summary instruction: the summary prompt, the
	// agent's and this compaction's instructions, the todo list, the
	// summary's length, and how many of the newest messages stay after it.
	Instruction string
}

//go:embed prompts/summary_system.md
var summarySystemText string

//go:embed prompts/summary_user.md
var summaryUserText string

var (
	summarySystemTmpl = template.Must(template.New("summary_system").Parse(summarySystemText))
	summaryUserTmpl   = template.Must(template.New("summary_user").Parse(summaryUserText))
)

// minSummaryWords is the least the summary prompt asks for: a summary of
// fewer words cannot hold the task, its state and the next step.
const minSummaryWords = 50

// wordsPerHundredTokens is English prose's ratio of words to tokens, by
// which a summary's length in tokens is asked for in words.
const wordsPerHundredTokens = 75

// RenderSummaryPrompt fills the embedded templates. The prompt asks for
// three words per four tokens of req.SummaryTokens, English prose's ratio.
func RenderSummaryPrompt(req SummaryRequest) (system, user string, err error) {
	if system, err = renderSummarySystem(req); err != nil {
		return "", "", err
	}
	var ub bytes.Buffer
	if err := summaryUserTmpl.Execute(&ub, map[string]any{
		"PreviousSummary": req.PreviousSummary,
		"Transcript":      req.Transcript,
		"Todos":           req.Todos,
		"UserRequest":     req.UserRequest,
	}); err != nil {
		return "", "", fmt.Errorf("contextguard: rendering summary prompt: %w", err)
	}
	return system, ub.String(), nil
}

// renderSummarySystem is the summary prompt both forms ask with, its length
// in words at least minSummaryWords.
func renderSummarySystem(req SummaryRequest) (string, error) {
	var b bytes.Buffer
	words := max(sat.MulDiv(req.SummaryTokens, wordsPerHundredTokens, 100), minSummaryWords)
	if err := summarySystemTmpl.Execute(&b, map[string]any{
		"MaxWords": words, "HasTodos": len(req.Todos) > 0, "Instructions": req.Instructions,
	}); err != nil {
		return "", fmt.Errorf("contextguard: rendering summary prompt: %w", err)
	}
	return b.String(), nil
}

// Transcript rendering (ARCHITECTURE.md, The summarizer).

// excerptLimits bound what one message may contribute to a transcript. Tool
// results keep head and tail: the facts the agent learned live there.
type excerptLimits struct {
	text       int // bytes of user or model text
	toolArgs   int // bytes of one call's arguments
	toolResult int // bytes of one tool result
}

// The excerpts' bounds, in bytes: below the minimums an excerpt says too
// little to be worth its line; above the maximums one message would crowd
// out the rest of the span.
const (
	minTextExcerpt       = 400
	maxTextExcerpt       = 16_000
	minToolArgsExcerpt   = 200
	maxToolArgsExcerpt   = 2_000
	minToolResultExcerpt = 300
	maxToolResultExcerpt = 6_000
)

// The share of the transcript budget one excerpt may take, as a divisor:
// the most for the words of the user and the model, which a summary most
// needs.
const (
	textExcerptDiv       = 4
	toolResultExcerptDiv = 8
	toolArgsExcerptDiv   = 16
)

// limitsForBudget scales the excerpts to the transcript budget (in bytes), so
// a small window gets short excerpts and a large one keeps more detail.
func limitsForBudget(budgetBytes int) excerptLimits {
	clamp := func(v, lo, hi int) int { return min(max(v, lo), hi) }
	return excerptLimits{
		text:       clamp(budgetBytes/textExcerptDiv, minTextExcerpt, maxTextExcerpt),
		toolArgs:   clamp(budgetBytes/toolArgsExcerptDiv, minToolArgsExcerpt, maxToolArgsExcerpt),
		toolResult: clamp(budgetBytes/toolResultExcerptDiv, minToolResultExcerpt, maxToolResultExcerpt),
	}
}

// renderContent renders one message as transcript lines.
func renderContent(c *genai.Content, lim excerptLimits) string {
	if c == nil {
		return ""
	}
	role := c.Role
	if role == "" {
		role = "unknown"
	}
	var b strings.Builder
	for _, p := range c.Parts {
		if p == nil {
			continue
		}
		switch {
		case p.Thought:
			// Thoughts are the model's scratchpad; the visible text carries
			// what it decided.
		case p.Text != "":
			fmt.Fprintf(&b, "[%s]: %s\n", role, textcut.Middle(textcut.Sanitize(p.Text), lim.text))
		case p.FunctionCall != nil:
			fmt.Fprintf(&b, "[%s called tool %s] args: %s\n", role, p.FunctionCall.Name,
				textcut.Middle(textcut.JSON(p.FunctionCall.Args), lim.toolArgs))
		case p.FunctionResponse != nil:
			fmt.Fprintf(&b, "[tool %s returned] %s\n", p.FunctionResponse.Name,
				textcut.Middle(textcut.CompactJSON(p.FunctionResponse.Response), lim.toolResult))
		case p.InlineData != nil:
			fmt.Fprintf(&b, "[%s attached %s, %d bytes]\n", role, p.InlineData.MIMEType, len(p.InlineData.Data))
		case p.FileData != nil:
			fmt.Fprintf(&b, "[%s attached file %s (%s)]\n", role, p.FileData.FileURI, p.FileData.MIMEType)
		case p.ExecutableCode != nil:
			fmt.Fprintf(&b, "[%s ran code]: %s\n", role, textcut.Middle(p.ExecutableCode.Code, lim.toolArgs))
		case p.CodeExecutionResult != nil:
			fmt.Fprintf(&b, "[code result]: %s\n", textcut.Middle(p.CodeExecutionResult.Output, lim.toolResult))
		}
	}
	return b.String()
}

// summarizerModel names a summarizer in logs: its model's name for the LLM
// summarizer (ModelNamer), else its Go type.
func summarizerModel(s Summarizer) string {
	if l, ok := s.(ModelNamer); ok {
		if name, ok := l.ModelName(); ok {
			return name
		}
	}
	return fmt.Sprintf("%T", s)
}
