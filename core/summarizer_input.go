package core

import (
	"log/slog"
	"strconv"
	"strings"

	"github.com/adk-contextguard/contextguard/core/internal/sat"
	"github.com/adk-contextguard/contextguard/core/internal/textcut"
)

// The room of one summarizer call (ARCHITECTURE.md, The summarizer).
const (
	// summarizerInputShare is the share of the summarizer's window its input
	// may take; the rest is its prompt and its answer (ARCHITECTURE.md,
	// Origins).
	summarizerInputShare = 0.80
	// promptOverheadTokens is a bound on the summary prompt's own text.
	promptOverheadTokens = 700
	// minSummarizerInput is the smallest input budget assumed, so a tiny
	// summarizer window still gets readable excerpts.
	minSummarizerInput = 512
	// summarizerAnswerShare bounds the summary asked of a small summarizer
	// so most of its window stays input and a rolling summary needs few
	// pieces; it never binds the agent's own model.
	summarizerAnswerShare = 0.25
)

// summarizerInput is the room of one summarizer call, in calibrated tokens:
// answer is the longest summary asked; budget what the window leaves for
// the previous summary (half at most) and the transcript, the prompt and
// extras taken out; lim bounds the excerpts to what the summary leaves.
type summarizerInput struct {
	answer int
	budget int
	lim    excerptLimits
	extras summarizerExtras
}

// extraParts are the parts of a summarizer input beside the transcript and
// the previous summary, as the compaction has them.
type extraParts struct {
	instructions, focus, hook, userRequest string
	todos                                  []TodoItem
}

// newSummarizerInput is the room of one call to a summarizer of window w
// for a summary of summaryTokens after prev; log gets the cuts.
func newSummarizerInput(m measure, log *slog.Logger, w, summaryTokens int, prev string, parts extraParts) summarizerInput {
	answer := max(min(summaryTokens, int(float64(w)*summarizerAnswerShare)), minSummaryTokens/2)
	// Some providers count the answer's MaxOutputTokens (twice the length
	// asked) against the window; the input share keeps the estimate's margin.
	budget := max(min(int(float64(w)*summarizerInputShare), w-2*answer)-promptOverheadTokens, minSummarizerInput)
	extras := newSummarizerExtras(m, log, budget, parts)
	in := summarizerInput{answer: answer, budget: budget - extras.tokens, extras: extras}
	remaining := in.budget - m.Text(in.boundPrev(m, prev))
	in.lim = limitsForBudget(sat.Scale(remaining, textcut.BytesPerTokenGuess))
	return in
}

// boundPrev bounds a previous summary to half the input, counted, not
// guessed from bytes: one dense in identifiers would crowd out the
// transcript.
func (in summarizerInput) boundPrev(m measure, prev string) string {
	if m.Text(prev) > in.budget/2 {
		return excerptToFit(m, prev, in.budget/2)
	}
	return prev
}

// Shares of a summarizer input the parts beside the transcript may take;
// a part past its share is cut, marked and logged. Together at most half,
// so the transcript and previous summary keep the other half whatever the
// state or a hook hold; each is far above an ordinary part.
const (
	summarizerInstructionsShare = 0.10 // WithInstructions: 300 tokens of an 8k input
	summarizerFocusShare        = 0.10 // MaxFocusBytes, whole at 32k
	summarizerHookShare         = 0.10 // the before-compaction hook's instructions
	summarizerTodoShare         = 0.10 // about 20 items at 8k, 250 at 128k
	// The user's request as the summarizer sees it; the continuation quotes
	// it apart, sized to the agent's window.
	summarizerRequestShare = 0.10
)

// maxTodoFieldBytes bounds a todo item's status and active form, a word or
// a short phrase; the list's share bounds the content.
const maxTodoFieldBytes = 200

// summarizerExtras are the extra parts within their shares; tokens is
// their calibrated size as the prompt shows them.
type summarizerExtras struct {
	instructions string
	todos        []TodoItem
	userRequest  string
	tokens       int
}

// newSummarizerExtras bounds the extra parts to their shares of budget.
func newSummarizerExtras(m measure, log *slog.Logger, budget int, p extraParts) summarizerExtras {
	share := func(f float64) int { return int(float64(budget) * f) }
	var x summarizerExtras
	var parts []string
	add := func(part, label, s string, f float64) {
		if s == "" {
			return
		}
		s = fitShare(m, log, part, label+s, share(f))
		x.tokens += m.Text(s)
		parts = append(parts, s)
	}
	add("instructions", "", p.instructions, summarizerInstructionsShare)
	add("focus", "Focus of this summary: ", p.focus, summarizerFocusShare)
	add("hook instructions", "", p.hook, summarizerHookShare)
	x.instructions = strings.Join(parts, "\n\n")
	x.userRequest = fitShare(m, log, "user request", p.userRequest, share(summarizerRequestShare))
	x.tokens += m.Text(x.userRequest)
	var n int
	x.todos, n = fitTodos(m, log, p.todos, share(summarizerTodoShare))
	x.tokens += n
	return x
}

// fitShare returns s, or its head and tail cut to about n tokens, logged.
func fitShare(m measure, log *slog.Logger, part, s string, n int) string {
	have := m.Text(s)
	if have <= n {
		return s
	}
	log.Warn("contextguard: a part of the summarizer's input is larger than its share of the summarizer's input; cutting its middle",
		"part", part, "tokens", have, "share_tokens", n)
	return excerptToFit(m, s, n)
}

// fitTodos returns todos and their weight when the list is within n
// calibrated tokens, else cutTodos.
func fitTodos(m measure, log *slog.Logger, todos []TodoItem, n int) ([]TodoItem, int) {
	used := 0
	for _, it := range todos {
		if used += todoLine(m, it); used > n || len(it.Status) > maxTodoFieldBytes || len(it.ActiveForm) > maxTodoFieldBytes {
			return cutTodos(m, log, todos, n)
		}
	}
	return todos, used
}

// cutTodos keeps the leading items that fit in n beside a note of how
// many were left out, fields bounded; a first item too large is shown by
// its head and tail. The cut is logged.
func cutTodos(m measure, log *slog.Logger, todos []TodoItem, n int) ([]TodoItem, int) {
	note := func(left int) TodoItem {
		return TodoItem{Status: "note", Content: strconv.Itoa(left) +
			" more todo items omitted: the todo list is larger than its share of the summarizer's input"}
	}
	room := n - todoLine(m, note(len(todos)))
	out := make([]TodoItem, 0, min(len(todos), n)+1)
	used := 0
	for _, it := range todos {
		it.Status = textcut.Middle(it.Status, maxTodoFieldBytes)
		it.ActiveForm = textcut.Middle(it.ActiveForm, maxTodoFieldBytes)
		w := todoLine(m, it)
		if used+w > room {
			if len(out) == 0 {
				it.Content = excerptToFit(m, it.Content, max(room-todoLine(m, TodoItem{Status: it.Status}), 0))
				used += todoLine(m, it)
				out = append(out, it)
			}
			break
		}
		used += w
		out = append(out, it)
	}
	listed := len(out)
	if left := len(todos) - listed; left > 0 {
		out = append(out, note(left))
		used += todoLine(m, out[listed])
	}
	log.Warn("contextguard: the todo list is larger than its share of the summarizer's input; listing its first items",
		"items", len(todos), "items_listed", listed, "share_tokens", n)
	return out, used
}

// todoLine is the calibrated size of a todo item's prompt line.
func todoLine(m measure, it TodoItem) int {
	return m.Text("- [" + it.Status + "] " + it.Content + "\n")
}
