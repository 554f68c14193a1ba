package core

import (
	"log/slog"
	"strconv"
	"strings"

	"github.com/adk-contextguard/contextguard/core/internal/textcut"
)

// The parts of a summarizer input beside the transcript and the previous
// summary (the instructions, the focus, the hook's instructions, the todo
// list and the user's request), each bounded to its share of the input
// (ARCHITECTURE.md, The summarizer).

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

// newSummarizerExtras bounds the turn's instructions (in the prompt's order:
// the agent's WithInstructions, the focus of a requested compaction, the
// before-compaction hook's), the todo list and the
// user's request to their shares of an input of budget tokens.
func newSummarizerExtras(t *turn, budget int, todos []TodoItem, userRequest string) summarizerExtras {
	share := func(f float64) int { return int(float64(budget) * f) }
	m, log := t.measure, t.log()
	var x summarizerExtras
	var parts []string
	add := func(part, label, s string, f float64) {
		if s == "" {
			return
		}
		s = fitShare(m, log, part, label+s, share(f))
		x.tokens += m.text(s)
		parts = append(parts, s)
	}
	add("instructions", "", t.cfg.instructions, summarizerInstructionsShare)
	add("focus", "Focus of this summary: ", t.focus, summarizerFocusShare)
	add("hook instructions", "", t.hookInstructions, summarizerHookShare)
	x.instructions = strings.Join(parts, "\n\n")
	x.userRequest = fitShare(m, log, "user request", userRequest, share(summarizerRequestShare))
	x.tokens += m.text(x.userRequest)
	var n int
	x.todos, n = fitTodos(m, log, todos, share(summarizerTodoShare))
	x.tokens += n
	return x
}

// fitShare returns s when it weighs at most n calibrated tokens, else its
// head and tail cut to about n (excerptToFit, which marks the cut), and
// logs the cut to log.
func fitShare(m measure, log *slog.Logger, part, s string, n int) string {
	have := m.text(s)
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
	return m.text("- [" + it.Status + "] " + it.Content + "\n")
}
