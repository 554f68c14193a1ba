package core

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"
)

// windowRegistry is a ModelRegistry with fixed windows, so a test can give
// the summarizer a smaller window than the agent's model.
type windowRegistry map[string]int

func (r windowRegistry) ContextWindow(m string) int { return r[m] }

// conversationOf builds swTurn turns of size bytes until the history weighs
// at least tokens (calibrated, as the guard counts it before any real
// count), then the user's new request; every message carries a marker.
func conversationOf(tokens, size int) (raw []*genai.Content, user string) {
	cal := newCalibration(guardState{}, testEst)
	i := 0
	for cal.scale(contentsTokens(testEst, raw)) < tokens {
		raw = append(raw, swTurn(i, size)...)
		i++
	}
	user = fmt.Sprintf("U%d-MARK carry on with the migration", i)
	return append(raw, userMsg(user)), user
}

// llmTranscript is the <conversation> part of a rendered summary prompt.
var llmTranscript = regexp.MustCompile(`(?s)<conversation>\n(.*)\n</conversation>`)

// TestRollingSummary_NoMessageLost: a conversation three times the
// summarizer's window is summarized in pieces, oldest first, each folding in
// the summary so far. Every message's marker reaches exactly one summarizer
// input, the last input holds the previous pieces' summary, and the extra
// calls are counted in the event and the log. Before the rolling summary,
// the oldest messages that did not fit one input were dropped.
func TestRollingSummary_NoMessageLost(t *testing.T) {
	tests := []struct {
		name string
		// agentWindow is the agent's window; summarizerWindow the
		// summarizer's (the agent's own model when equal).
		agentWindow, summarizerWindow int
	}{
		{"the agent's own model, 8k", 8_000, 8_000},
		{"the agent's own model, 32k", 32_000, 32_000},
		{"a smaller summarizer model, 8k beside 128k", 128_000, 8_000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// The conversation weighs three summarizer windows (and at
			// least the agent's trigger).
			raw, user := conversationOf(max(3*tc.summarizerWindow, tc.agentWindow*9/10), 600)
			want := swMarkers(flattenAll(raw[:len(raw)-1]))
			want[strings.Fields(user)[0]] = true

			var inputs []string // the transcript of each summarizer call
			var prevs []string  // the summary each call folds in
			llm := &fakeLLM{name: "small-summarizer"}
			llm.reply = func(_ context.Context, req *Request) (string, error) {
				text := contentText(req.Contents[0])
				m := llmTranscript.FindStringSubmatch(text)
				require.NotNil(t, m, "the prompt holds a transcript")
				inputs = append(inputs, m[1])
				prevs = append(prevs, text[:strings.Index(text, "<conversation>")])
				return fmt.Sprintf("## Current State\nROLLING-SUMMARY-%d of the migration.", len(inputs)), nil
			}
			var events []CompactionEvent
			logs := &logBuffer{}
			reg := windowRegistry{"gemini-2.5-flash": tc.agentWindow, "small-summarizer": tc.summarizerWindow}
			g := newGuard(reg, WithLogger(logs.logger()), WithOnCompaction(func(_ context.Context, e CompactionEvent) { events = append(events, e) }))
			g.addModel("a", nil, WithSummarizer(llm), WithMaxTokens(tc.agentWindow))
			require.NoError(t, g.Err())
			ctx := newFakeCtx("a").withUser(user)
			req := request(raw...)
			_, err := g.beforeModel(ctx, req)
			require.NoError(t, err)

			// Every marker in exactly one summarizer input.
			seen := map[string]int{}
			for _, in := range inputs {
				for m := range swMarkers(in) {
					seen[m]++
				}
			}
			for m := range want {
				assert.Equal(t, 1, seen[m], "marker %s in %d summarizer inputs", m, seen[m])
			}
			assert.NotContains(t, strings.Join(inputs, ""), "omitted: they did not fit")

			// Pieces, oldest first, each folding in the summary so far.
			require.GreaterOrEqual(t, len(inputs), 3, "three windows need at least three pieces")
			for k := 1; k < len(inputs); k++ {
				assert.Contains(t, prevs[k], fmt.Sprintf("ROLLING-SUMMARY-%d", k), "call %d folds in the summary of call %d", k+1, k)
			}
			assert.Contains(t, contentText(req.Contents[0]), fmt.Sprintf("ROLLING-SUMMARY-%d", len(inputs)), "the last summary is sent")

			// Every input within the summarizer's window.
			for k := range inputs {
				n := newCalibration(guardState{}, testEst).scale(testEst.text(prevs[k] + inputs[k]))
				assert.LessOrEqual(t, n, int(float64(tc.summarizerWindow)*summarizerInputShare), "call %d", k+1)
			}

			// Counted in the event and the log.
			require.Len(t, events, 1)
			assert.Equal(t, len(inputs), events[0].SummarizerCalls)
			assert.Equal(t, len(inputs)-1, events[0].RollingCalls)
			assert.False(t, events[0].Fallback)
			assert.Contains(t, logs.String(), fmt.Sprintf("rolling_calls=%d", len(inputs)-1))
			assert.LessOrEqual(t, events[0].TokensAfter, newLimits(tc.agentWindow).threshold)
			t.Logf("%d summarizer calls for a conversation of %d tokens (%.1fx the summarizer's window)",
				len(inputs), events[0].TokensBefore, float64(events[0].TokensBefore)/float64(tc.summarizerWindow))
		})
	}
}

// flattenAll is the text of cs as the kit flattens it.
func flattenAll(cs []*genai.Content) string {
	var b strings.Builder
	for _, c := range cs {
		b.WriteString(renderContent(c, excerptLimits{text: 1 << 30, toolArgs: 1 << 30, toolResult: 1 << 30}))
	}
	return b.String()
}
