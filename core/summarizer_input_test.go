package core

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/adk-contextguard/contextguard/core/internal/state"
)

// megabyte is the size of the oversized parts of a summarizer input the
// tests below try: far past any summarizer's window.
const megabyte = 1 << 20

// oversizedPart is a summarizer input part of a test: how the scenario puts
// about a megabyte of it where the guard reads it, and the text the
// summarizer's prompt then shows of it.
type oversizedPart struct {
	name string
	// setup stores the part in the session's state (ctx) or returns the
	// guard's options that supply it.
	setup func(ctx *fakeCtx) []Option
	// shows is a piece of text every summarizer prompt holds when the part
	// reached it; logs is a piece of the log line that says it was cut.
	shows, logs string
}

// megabyteOf is about a megabyte of prose-like text starting with head.
func megabyteOf(head string) string {
	var b strings.Builder
	b.WriteString(head)
	for i := 0; b.Len() < megabyte; i++ {
		b.WriteString(" keep ticket ")
		b.WriteString(strings.Repeat("x", i%7+1))
		b.WriteString(" and its owner")
	}
	return b.String()
}

func oversizedParts() []oversizedPart {
	return []oversizedPart{
		{"a todo item of 1 MB", func(ctx *fakeCtx) []Option {
			_ = ctx.state.Set(todosKey, []TodoItem{{Content: megabyteOf("TODO-HEAD"), Status: "pending"}})
			return nil
		}, "TODO-HEAD", "share of the summarizer's input"},
		{"a todo list of 1 MB in 20,000 items", func(ctx *fakeCtx) []Option {
			items := make([]any, 0, 20_000)
			for i := range 20_000 {
				items = append(items, map[string]any{"content": strings.Repeat("migrate table ", 3) + "TODO-ITEM", "status": "pending", "id": i})
			}
			_ = ctx.state.Set(todosKey, items)
			return nil
		}, "TODO-ITEM", "share of the summarizer's input"},
		{"a focus of 1 MB", func(ctx *fakeCtx) []Option {
			ctx.set(state.KeyCompactRequest, megabyteOf("FOCUS-HEAD"))
			return nil
		}, "FOCUS-HEAD", "focus is too long"},
		{"hook instructions of 1 MB", func(*fakeCtx) []Option {
			text := megabyteOf("HOOK-HEAD")
			return []Option{WithBeforeCompaction(func(context.Context, PendingCompaction) CompactionDecision {
				return CompactionDecision{Instructions: text}
			})}
		}, "HOOK-HEAD", "share of the summarizer's input"},
	}
}

// TestSummarizerInput_OversizedPartsFitTheWindow: a todo list, a requested
// compaction's focus or the before-compaction hook's instructions of a
// megabyte each take only their share of the summarizer's input: every
// summarizer request, with the room it keeps for its answer, fits the
// summarizer's window as the guard's estimator counts it, the part still
// shows (cut, with a visible marker) and the cut is logged. Before the
// shares, hook instructions of 1 MB made a 160k-token summarizer request
// for a 128k window, and a 1 MB todo list a 162k-token one.
func TestSummarizerInput_OversizedPartsFitTheWindow(t *testing.T) {
	windows := []struct {
		name                          string
		agentWindow, summarizerWindow int
	}{
		{"the agent's own model, 32k", 32_000, 32_000},
		{"a smaller summarizer model, 8k beside 32k", 32_000, 8_000},
	}
	for _, w := range windows {
		for _, part := range oversizedParts() {
			t.Run(w.name+"/"+part.name, func(t *testing.T) {
				raw, user := conversationOf(w.agentWindow*9/10, 600)
				var mu sync.Mutex
				var sizes []int
				var prompts []string
				llm := &fakeLLM{name: "small-summarizer"}
				llm.reply = func(_ context.Context, req *Request) (string, error) {
					n := newCalibration(state.Agent{}, testEst).Scale(requestTokens(testEst, req))
					mu.Lock()
					sizes = append(sizes, n+int(req.Config.MaxOutputTokens))
					prompts = append(prompts, requestText(req))
					mu.Unlock()
					return "## Current State\nSUMMARY-MARK of the migration.", nil
				}
				ctx := newFakeCtx("a").withUser(user)
				logs := &logBuffer{}
				reg := windowRegistry{"gemini-2.5-flash": w.agentWindow, "small-summarizer": w.summarizerWindow}
				g := newGuard(reg, append(part.setup(ctx), WithLogger(logs.logger()))...)
				g.addModel("a", nil, WithSummarizer(llm), WithMaxTokens(w.agentWindow))
				require.NoError(t, g.Err())

				_, err := g.beforeModel(ctx, request(raw...))
				require.NoError(t, err)

				require.NotEmpty(t, sizes, "the summarizer was asked")
				for k, n := range sizes {
					assert.LessOrEqual(t, n, w.summarizerWindow, "summarizer request %d with its answer's room", k+1)
					assert.Contains(t, prompts[k], part.shows, "the part reaches summarizer request %d", k+1)
				}
				assert.Contains(t, strings.Join(prompts, ""), "omitted", "the cut is visible")
				assert.Contains(t, logs.String(), part.logs, "the cut is logged")
			})
		}
	}
}

// TestSummarizerInput_TodoList: a todo list within its share reaches the
// summarizer as it is; past it, the leading items that fit are listed, each
// status bounded, and a last item says how many were left out; a single
// item larger than the share is shown by its head and tail.
func TestSummarizerInput_TodoList(t *testing.T) {
	short := []TodoItem{{Content: "write the migration", Status: "in_progress"}, {Content: "run the tests", Status: "pending"}}
	many := make([]TodoItem, 1_000)
	for i := range many {
		many[i] = TodoItem{Content: "migrate table " + strings.Repeat("t", i%9), Status: "pending"}
	}
	tests := []struct {
		name  string
		todos []TodoItem
		// listed is how many of todos are listed, all when -1; note
		// whether a last item says how many were left out.
		listed int
		note   bool
	}{
		{"a short list: as it is", short, -1, false},
		{"1,000 items: the first ones and a count of the rest", many, 0, true},
		{"one item of 1 MB: its head and tail", []TodoItem{{Content: megabyteOf("HEAD"), Status: "pending"}}, 1, false},
		{"a status of 1 MB: bounded", []TodoItem{{Content: "deploy", Status: megabyteOf("S")}}, 1, false},
	}
	const share = 300
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			turn := newTestTurn(request(), state.Agent{}, quietLog)
			turn.Cal = newCalibration(state.Agent{}, testEst)
			got, used := fitTodos(turn.measure, turn.log(), tt.todos, share)
			assert.LessOrEqual(t, used, share)
			weight := 0
			for _, it := range got {
				weight += todoLine(turn.measure, it)
				assert.LessOrEqual(t, len(it.Status), maxTodoFieldBytes)
			}
			assert.Equal(t, weight, used, "the weight returned is the items'")
			switch {
			case tt.listed < 0:
				assert.Equal(t, tt.todos, got)
			case tt.note:
				require.Greater(t, len(got), 1)
				last := got[len(got)-1]
				assert.Equal(t, "note", last.Status)
				assert.Contains(t, last.Content, strconv.Itoa(len(tt.todos)-(len(got)-1))+" more todo items omitted")
				assert.Equal(t, tt.todos[:len(got)-1], got[:len(got)-1], "the leading items, unchanged")
			default:
				require.Len(t, got, tt.listed)
				assert.Contains(t, got[0].Content+got[0].Status, "omitted")
			}
		})
	}
}
