package costbench

import (
	"fmt"
	"io"
	"strings"
)

// The table: one row per configuration and window, as the README's
// Developing section describes its columns.

// Row is one configuration's measures over every session.
type Row struct {
	Config     Config
	Stats      Stats
	Accounting Accounting
}

// percent returns part/whole in percent, 0 for an empty whole.
func percent(part, whole int) float64 {
	if whole <= 0 {
		return 0
	}
	return 100 * float64(part) / float64(whole)
}

// index returns cost relative to the cost with no cache at all.
func index(cost float64, tokens int) float64 {
	if tokens <= 0 {
		return 0
	}
	return cost / float64(tokens)
}

// windowName writes a window as "32k".
func windowName(w int) string {
	if w%1000 == 0 {
		return fmt.Sprintf("%dk", w/1000)
	}
	return fmt.Sprint(w)
}

// WriteTable writes rows as a markdown table.
func WriteTable(w io.Writer, rows []Row) error {
	var b strings.Builder
	b.WriteString("| configuration | window | requests (agent + summarizer) | prefix reused | rewrites with no compaction | summarizer input read from cache | Anthropic index (floor) | implicit index (floor) | compactions (inline) | overflows | lost user messages | errors |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		s := r.Stats
		tokens := s.Tokens()
		fromCache := "–" // no summarizer request
		if s.SummarizerTokens > 0 {
			fromCache = fmt.Sprintf("%.1f%%", percent(s.SummarizerCached, s.SummarizerTokens))
		}
		fmt.Fprintf(&b, "| %s | %s | %d + %d | %.1f%% | %d (%.2f%% of tokens) | %s | %.3f (%.3f) | %.3f (%.3f) | %d (%d) | %d | %d | %d |\n",
			r.Config.Name, windowName(r.Config.Window),
			s.AgentRequests, s.SummarizerRequests,
			percent(s.ReusedTokens, s.AgentTokens),
			s.Rewrites, percent(s.RewriteTokens, tokens),
			fromCache,
			index(s.Cost[0], tokens), index(s.Floor[0], tokens),
			index(s.Cost[1], tokens), index(s.Floor[1], tokens),
			s.Compactions, s.Inline, s.Overflows, s.LostUser, s.Errors)
	}
	_, err := io.WriteString(w, b.String())
	if err != nil {
		return fmt.Errorf("costbench: write table: %w", err)
	}
	return nil
}

// WriteAccounting writes the accounting of rows as a markdown table, then
// every loss and every event whose request did not shrink, one line each.
func WriteAccounting(w io.Writer, rows []Row) error {
	var b strings.Builder
	b.WriteString("| configuration | window | contents | kept | pruned | summarized | listed | lost | compaction events (discarded) | events without a smaller request |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		a := r.Accounting
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %d | %d | %d | %d (%d) | %d |\n",
			r.Config.Name, windowName(r.Config.Window), a.Contents, a.Kept, a.Pruned, a.Summarized, a.Listed, a.Lost,
			a.Events, a.Discarded, len(a.Unshrunk))
	}
	for _, r := range rows {
		name := r.Config.Name + " " + windowName(r.Config.Window)
		for _, l := range r.Accounting.Losses {
			fmt.Fprintf(&b, "\nlost: %s, %s, request %d, content %d: %s", name, l.Session, l.Request, l.Content, l.What)
		}
		for _, u := range r.Accounting.Unshrunk {
			fmt.Fprintf(&b, "\nnot smaller: %s, %s, request %d after event %d (%s): %d tokens sent, %d as ADK built it",
				name, u.Session, u.Request, u.EventIndex, u.Event, u.Sent, u.Raw)
		}
	}
	b.WriteString("\n")
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("costbench: write accounting: %w", err)
	}
	return nil
}
