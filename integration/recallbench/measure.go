package recallbench

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"

	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard"
	"github.com/adk-contextguard/contextguard/core/coretest/estimator"
)

const (
	// defaultTokens and roomShare are the recall answer's budget (README.md,
	// Recall): about 2,000 tokens, at most a quarter of the room the last
	// request left.
	defaultTokens = 2000
	roomShare     = 4
	// defaultCorrection is what the guard multiplies its raw estimate by
	// when the provider reported no count (README.md, Calibrate): the
	// replay's model reports none.
	defaultCorrection = 1.10
)

// budget is an answer's budget when the last request was u.
func budget(u contextguard.Usage) int {
	if u.Window > 0 && u.Tokens > 0 {
		return min(defaultTokens, max(u.Window-u.Tokens, 0)/roomShare)
	}
	return defaultTokens
}

// answerTokens is the answer's size as the guard counts it in the agent's
// next request: the tool's response, with the estimator of the agent's
// model, times the correction the guard applies without a provider count.
func answerTokens(modelName, answer string) int {
	c := &genai.Content{Role: genai.RoleUser, Parts: []*genai.Part{{FunctionResponse: &genai.FunctionResponse{
		Name: contextguard.RecallToolName, Response: map[string]any{"result": answer}}}}}
	return int(math.Ceil(float64(estimator.Tokens(modelName, c)) * defaultCorrection))
}

// excerptHead matches an excerpt's header line in an answer: its rank and
// where it came from.
var excerptHead = regexp.MustCompile(`\n\[(\d+)\] ([^\n]*):\n`)

// excerpt is one excerpt of an answer.
type excerpt struct {
	head, text string
}

// excerpts are an answer's excerpts, in rank order.
func excerpts(answer string) []excerpt {
	idx := excerptHead.FindAllStringSubmatchIndex(answer, -1)
	out := make([]excerpt, 0, len(idx))
	for i, m := range idx {
		end := len(answer)
		if i+1 < len(idx) {
			end = idx[i+1][0]
		}
		text, _, _ := strings.Cut(answer[m[1]:end], "\nMore matches exist:")
		out = append(out, excerpt{head: answer[m[4]:m[5]], text: text})
	}
	return out
}

// rank is the rank (from 1) of the first excerpt of the answer that finds
// q, 0 when none does.
func rank(q Query, answer string) int {
	for i, e := range excerpts(answer) {
		switch {
		case q.Kind == KindCall && strings.Contains(e.head, "(call_id "+q.CallID+")"):
			return i + 1
		case q.Kind != KindCall && strings.Contains(e.text, q.Line):
			return i + 1
		}
	}
	return 0
}

// Row is one line of the table: a session, or the total.
type Row struct {
	Name                 string
	Queries, Top1, Top3  int
	Paraphrase, PTop3    int
	Over                 int
	Tokens               []int
	Latencies            []time.Duration
	Compactions, Answers int
}

// add counts run's answers into r.
func (r *Row) add(run *Run) {
	r.Compactions += run.Compactions
	for _, a := range run.Answers {
		r.Answers++
		rk := rank(a.Query, a.Text)
		if a.Query.Kind == KindLine {
			r.Queries++
			if rk == 1 {
				r.Top1++
			}
			if rk >= 1 && rk <= 3 {
				r.Top3++
			}
		} else {
			r.Paraphrase++
			if rk >= 1 && rk <= 3 {
				r.PTop3++
			}
		}
		if a.Tokens > a.Budget {
			r.Over++
		}
		r.Tokens = append(r.Tokens, a.Tokens)
		r.Latencies = append(r.Latencies, a.Latency)
	}
}

// percent is n of d as a percentage, "-" when d is 0.
func percent(n, d int) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*float64(n)/float64(d))
}

// quantile is the q-quantile (0..1) of xs, nearest rank; 0 for none.
func quantile[T int | time.Duration](xs []T, q float64) T {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[max(min(int(math.Ceil(q*float64(len(s))))-1, len(s)-1), 0)]
}

// Table renders rows as a markdown table.
func Table(rows []Row) string {
	var b strings.Builder
	b.WriteString("| session | compactions | line queries | top-1 | top-3 | paraphrase queries | top-3 | answer tokens median / max | over budget | latency median / p90 / max |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	ms := func(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond)) }
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %d | %d | %s | %s | %d | %s | %d / %d | %d | %s / %s / %s ms |\n",
			r.Name, r.Compactions, r.Queries, percent(r.Top1, r.Queries), percent(r.Top3, r.Queries),
			r.Paraphrase, percent(r.PTop3, r.Paraphrase), quantile(r.Tokens, 0.5), quantile(r.Tokens, 1), r.Over,
			ms(quantile(r.Latencies, 0.5)), ms(quantile(r.Latencies, 0.9)), ms(quantile(r.Latencies, 1)))
	}
	return b.String()
}
