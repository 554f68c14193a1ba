package core

import (
	"fmt"
	"strconv"
	"strings"

	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/calib"
	"github.com/adk-contextguard/contextguard/core/internal/convo"
	"github.com/adk-contextguard/contextguard/core/internal/estimate"
	"github.com/adk-contextguard/contextguard/core/internal/sat"
	"github.com/adk-contextguard/contextguard/core/internal/textcut"
)

// The fallback summary (ARCHITECTURE.md, The summarizer): made from the
// contents alone when the summarizer fails.

// Sizes of the fallback summary.
const (
	// Shares of the fallback budget, so a long list of requests cannot push
	// out the other sections; what a section leaves goes to the requests.
	fallbackShareTodos = 0.15
	fallbackShareTools = 0.10
	fallbackShareModel = 0.10
	fallbackSharePrev  = 0.30
	// fallbackRequestBytes and fallbackModelBytes bound one user request
	// and the last model text, by head and tail: enough for what was
	// asked and the model's last conclusion, while the list stays long.
	fallbackRequestBytes = 600
	fallbackModelBytes   = 1_200
	// fallbackMinTokens is the smallest budget a fallback summary is
	// written for: below it not even its heading and one line fit, and the
	// summary message carries the continuation alone.
	fallbackMinTokens = 16
	// fitRetryThirds is how many thirds of the last cut each further try of
	// fit keeps: larger steps than textcut.RetryPercent's, since up to five
	// sections are fitted in turn. Below fitMinBytes nothing worth reading
	// is left.
	fitRetryThirds = 2
	fitMinBytes    = 32
	// fallbackLongHeadingDiv: the long heading is used while it takes at
	// most a third of the budget; past that the facts need the room.
	fallbackLongHeadingDiv = 3
)

// fallbackSummary is the deterministic summary used whenever the summarizer
// fails: the previous summary, the user's requests (newest first, with a
// count of those there is no room for), the last model text, the tools
// called (every call counted) and the todo list, all within maxTokens as the
// estimator counts them. It reads every content of cs.
func fallbackSummary(e estimate.Estimator, cal calib.Calibration, prev string, cs []*genai.Content, todos []TodoItem, maxTokens int) string {
	if maxTokens < fallbackMinTokens {
		return ""
	}
	f := collectFallbackFacts(cs)
	w := fallbackWriter{tokens: func(s string) int { return cal.Scale(e.Text(s)) }, budget: maxTokens}
	head := "(Automatic summary: the summarizer was unavailable, so this lists the conversation's facts mechanically.)\n"
	if w.tokens(head) > maxTokens/fallbackLongHeadingDiv {
		head = "(automatic summary)\n"
	}
	if w.tokens(head) > maxTokens { // a large calibration factor
		return ""
	}
	w.left = maxTokens - w.tokens(head)
	todoSec := w.section("\n## Todo List\n", todoList(todos), fallbackShareTodos)
	toolSec := w.section("\n## Tools called\n", f.toolList(), fallbackShareTools)
	modelSec := ""
	if f.lastModel != "" {
		modelSec = w.section("\n## Last assistant message\n", textcut.Middle(textcut.Sanitize(f.lastModel), fallbackModelBytes)+"\n", fallbackShareModel)
	}
	prevSec := w.section("\n## Earlier summary\n", textcut.Sanitize(prev), fallbackSharePrev)
	return head + prevSec + w.requests(f.requests) + modelSec + toolSec + todoSec
}

// fallbackFacts is what the fallback summary lists of the contents it
// covers.
type fallbackFacts struct {
	requests  []string // the user's messages' text, oldest first
	lastModel string
	calls     []string // the tools called, in the order of their first call
	callCount map[string]int
}

// collectFallbackFacts reads the facts of cs in one pass.
func collectFallbackFacts(cs []*genai.Content) fallbackFacts {
	f := fallbackFacts{callCount: map[string]int{}}
	for _, c := range cs {
		if c == nil {
			continue
		}
		for _, p := range c.Parts {
			if p != nil && p.FunctionCall != nil {
				if f.callCount[p.FunctionCall.Name] == 0 {
					f.calls = append(f.calls, p.FunctionCall.Name)
				}
				f.callCount[p.FunctionCall.Name]++
			}
		}
		t := textcut.ContentText(c)
		switch {
		case t == "":
		case convo.IsUserMessage(c):
			f.requests = append(f.requests, t)
		case c.Role == genai.RoleModel:
			f.lastModel = t
		}
	}
	return f
}

// toolList is the tools called, one line each with its count of calls.
func (f fallbackFacts) toolList() string {
	var b strings.Builder
	for _, name := range f.calls {
		b.WriteString("- " + name + " x" + strconv.Itoa(f.callCount[name]) + "\n")
	}
	return b.String()
}

// todoList is the todo list, one line each with its status.
func todoList(todos []TodoItem) string {
	var b strings.Builder
	for _, t := range todos {
		fmt.Fprintf(&b, "- [%s] %s\n", t.Status, t.Content)
	}
	return b.String()
}

// fallbackWriter writes the fallback summary's sections within its budget:
// left is what the sections written so far leave of it.
type fallbackWriter struct {
	tokens       func(string) int
	budget, left int
}

// section is title and body bounded by share of the budget (fit), "" for
// an empty body.
func (w *fallbackWriter) section(title, body string, share float64) string {
	n := int(float64(w.budget) * share)
	if body == "" || n <= 0 {
		return ""
	}
	s := w.fit(title+body, n)
	w.left -= w.tokens(s)
	return s
}

// fit bounds s to at most n tokens, cutting its middle, "" when no cut
// worth reading fits.
func (w *fallbackWriter) fit(s string, n int) string {
	if s == "" || w.tokens(s) <= n {
		return s
	}
	for room := sat.Scale(n, textcut.BytesPerTokenGuess); room > fitMinBytes; room = sat.MulDiv(room, fitRetryThirds, 3) {
		if cut := textcut.Middle(s, room) + "\n"; w.tokens(cut) <= n {
			return cut
		}
	}
	return ""
}

// requests is the user's requests, newest first, in what the other
// sections left: those that do not fit are counted, never dropped
// silently, and room for that line is kept while more than one remains.
func (w *fallbackWriter) requests(requests []string) string {
	title := "\n## User requests (newest first)\n"
	if len(requests) == 0 || w.tokens(title) >= w.left {
		return ""
	}
	unlisted := func(n int) string { return "- (" + strconv.Itoa(n) + " earlier requests not listed: no room)\n" }
	var b strings.Builder
	b.WriteString(title)
	w.left -= w.tokens(title)
	i := len(requests) - 1
	for ; i >= 0; i-- {
		line := "- " + textcut.Middle(textcut.Sanitize(requests[i]), fallbackRequestBytes) + "\n"
		n := w.tokens(line)
		if i > 0 {
			n += w.tokens(unlisted(i))
		}
		if n > w.left {
			break
		}
		b.WriteString(line)
		w.left -= w.tokens(line)
	}
	if note := unlisted(i + 1); i >= 0 && w.tokens(note) <= w.left {
		b.WriteString(note)
	}
	return b.String()
}
