package core

import (
	"log/slog"
	"strconv"
	"strings"

	"github.com/adk-contextguard/contextguard/core/internal/sat"
	"github.com/adk-contextguard/contextguard/core/internal/textcut"
)

// The room of one summarizer call (ARCHITECTURE.md, The summarizer): the
// answer, the input its window leaves, and the parts of that input beside
// the transcript and the previous summary (the instructions, the focus, the
// hook's instructions, the todo list and the user's request), each bounded
// to its share.

// Sizes of a summarizer call.
const (
	// summarizerInputShare is the share of the summarizer's window its input
	// may take; the rest is its prompt and its answer (the earlier guard's
	// 80%, ARCHITECTURE.md, Origins).
	summarizerInputShare = 0.80
	// promptOverheadTokens is a bound on the summary prompt's own text.
	promptOverheadTokens = 700
	// minSummarizerInput is the smallest input budget assumed, so a tiny
	// summarizer window still gets readable excerpts.
	minSummarizerInput = 512
	// summarizerAnswerShare bounds the summary asked of a summarizer whose
	// window is small beside the agent's (a 12,800-token summary cannot be
	// asked of an 8k model): it keeps most of its window for its input, so
	// a rolling summary needs few pieces. The agent's own model is never
	// bound by it (half the buffer is at most a tenth of the window).
	summarizerAnswerShare = 0.25
)

// summarizerInput is the room of one summarizer call, in calibrated tokens:
// answer is the longest summary it is asked for (the compaction's budget,
// at most summarizerAnswerShare of its window); budget is what its window
// leaves for the previous summary and the transcript (summarizerInputShare
// of it, or less when the answer's room needs more, less the prompt's own
// text and the extras), of which the previous summary may take half; lim
// bounds the transcript's excerpts to what the previous summary leaves.
type summarizerInput struct {
	answer int
	budget int
	lim    excerptLimits
	// extras are the parts of every input beside the transcript and the
	// previous summary, already taken out of budget.
	extras summarizerExtras
}

// extraParts are the parts of a summarizer input beside the transcript and
// the previous summary, as the compaction has them: the agent's
// WithInstructions, the focus of a requested compaction, the
// before-compaction hook's instructions, the todo list and the user's
// request.
type extraParts struct {
	instructions, focus, hook, userRequest string
	todos                                  []TodoItem
}

// newSummarizerInput is the room of one call to a summarizer of window w
// for a summary of summaryTokens after prev, with the extra parts bounded
// to their shares of its input and taken out of its budget; log gets the
// cuts.
func newSummarizerInput(m measure, log *slog.Logger, w, summaryTokens int, prev string, parts extraParts) summarizerInput {
	answer := max(min(summaryTokens, int(float64(w)*summarizerAnswerShare)), minSummaryTokens/2)
	// The answer's room is what the call reserves for it (MaxOutputTokens,
	// twice the length asked), which some providers count against the
	// window; the input share keeps the estimate's margin.
	budget := max(min(int(float64(w)*summarizerInputShare), w-2*answer)-promptOverheadTokens, minSummarizerInput)
	extras := newSummarizerExtras(m, log, budget, parts)
	in := summarizerInput{answer: answer, budget: budget - extras.tokens, extras: extras}
	remaining := in.budget - m.Text(in.boundPrev(m, prev))
	in.lim = limitsForBudget(sat.Scale(remaining, textcut.BytesPerTokenGuess))
	return in
}

// boundPrev bounds a previous summary to half the input, cutting its
// middle (counted, not guessed from its bytes: a summary dense in
// identifiers would otherwise crowd out the transcript, and a rolling
// summary would need a piece per few contents).
func (in summarizerInput) boundPrev(m measure, prev string) string {
	if m.Text(prev) > in.budget/2 {
		return excerptToFit(m, prev, in.budget/2)
	}
	return prev
}

// Shares of a summarizer input (summarizerInput.budget) the parts beside
// the transcript may take, each at most: a part past its share is cut, with
// a marker the summarizer sees and a log line. Together they take at most
// half the input, so the transcript and the previous summary keep the other
// half whatever the session's state or a hook hold; each share is far above
// what the part usually takes, so an ordinary part is never cut.
const (
	// summarizerInstructionsShare bounds the agent's WithInstructions: a
	// few sentences, 300 tokens of an 8k summarizer's input.
	summarizerInstructionsShare = 0.10
	// summarizerFocusShare bounds a requested compaction's focus (at most
	// MaxFocusBytes, about 500 tokens, which a 32k summarizer takes whole).
	summarizerFocusShare = 0.10
	// summarizerHookShare bounds the before-compaction hook's
	// instructions for this compaction.
	summarizerHookShare = 0.10
	// summarizerTodoShare bounds the todo list: about 20 items of an 8k
	// summarizer's input, 250 of a 128k one's.
	summarizerTodoShare = 0.10
	// summarizerRequestShare bounds the user's current request as the
	// summarizer sees it (the continuation quotes it apart, sized to the
	// agent's window, which may be far larger than the summarizer's).
	summarizerRequestShare = 0.10
)

// maxTodoFieldBytes bounds a todo item's status and active form, which a
// todo tool fills with a word or a short phrase; the content is bounded by
// the list's share.
const maxTodoFieldBytes = 200

// summarizerExtras are the parts of every input of a compaction's
// summarizer calls beside the transcript and the previous summary, each
// within its share; tokens is their calibrated size as the prompt shows
// them.
type summarizerExtras struct {
	instructions string
	todos        []TodoItem
	userRequest  string
	tokens       int
}

// newSummarizerExtras bounds the extra parts (the instructions in the
// prompt's order) to their shares of an input of budget tokens.
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

// fitShare returns s when it weighs at most n calibrated tokens, else its
// head and tail cut to about n (excerptToFit, which marks the cut), and
// logs the cut to log.
func fitShare(m measure, log *slog.Logger, part, s string, n int) string {
	have := m.Text(s)
	if have <= n {
		return s
	}
	log.Warn("contextguard: a part of the summarizer's input is larger than its share of the summarizer's input; cutting its middle",
		"part", part, "tokens", have, "share_tokens", n)
	return excerptToFit(m, s, n)
}

// fitTodos returns the leading items of todos whose lines, as the summary
// prompt renders them, weigh at most n calibrated tokens, and their weight.
// A list within its share is returned as it is (cutTodos past it).
func fitTodos(m measure, log *slog.Logger, todos []TodoItem, n int) ([]TodoItem, int) {
	used := 0
	for _, it := range todos {
		if used += todoLine(m, it); used > n || len(it.Status) > maxTodoFieldBytes || len(it.ActiveForm) > maxTodoFieldBytes {
			return cutTodos(m, log, todos, n)
		}
	}
	return todos, used
}

// cutTodos is fitTodos past the share n: the leading items that fit beside
// a last item saying how many were left out, each item's status and active
// form bounded (maxTodoFieldBytes); when not even the first item fits, it
// is shown by its head and tail. The cut is logged to log.
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

// todoLine is the calibrated size of a todo item's line in the summary
// prompt.
func todoLine(m measure, it TodoItem) int {
	return m.Text("- [" + it.Status + "] " + it.Content + "\n")
}
