package main

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/adk/model"
	"google.golang.org/genai"
)

// runDemo runs the offline demo into a temporary directory. It returns
// what the demo printed and what the guard logged: the guard logs at WARN
// and above, to stderr under make demo.
func runDemo(t *testing.T, turns int) (rep *report, out, logged string) {
	t.Helper()
	dir := t.TempDir()
	var printed, logs bytes.Buffer
	rep, err := run(context.Background(), config{
		Turns:  turns,
		Window: 16_000,
		Out:    filepath.Join(dir, "out", "tokens.png"),
		DB:     filepath.Join(dir, "sessions.db"),
		Log:    &logs,
	}, &printed)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, printed.String())
	}
	if testing.Verbose() {
		t.Log("\n" + printed.String())
	}
	return rep, printed.String(), logs.String()
}

func TestDemoSmoke(t *testing.T) {
	rep, out, logged := runDemo(t, 6)
	if logged != "" {
		t.Errorf("the guard logged a warning, which make demo prints:\n%s", logged)
	}

	if !rep.Scripted {
		t.Fatal("the test must run the scripted model")
	}
	if rep.Compactions < 1 {
		t.Errorf("compactions = %d, want at least 1\n%s", rep.Compactions, out)
	}
	if rep.Calls != len(rep.Steps) || rep.Calls == 0 {
		t.Errorf("model calls = %d, steps recorded = %d", rep.Calls, len(rep.Steps))
	}
	for _, s := range rep.Steps {
		if s.Sent > rep.Window || s.Real > rep.Window {
			t.Errorf("step %d: %d tokens by o200k (model reported %d), over the %d window", s.Step, s.Sent, s.Real, rep.Window)
		}
	}
	if rep.OverWindow != 0 {
		t.Errorf("report counts %d requests over the window", rep.OverWindow)
	}
	if rep.MaxBuilt <= rep.Window {
		t.Errorf("ADK built at most %d tokens: the run never needed the guard", rep.MaxBuilt)
	}
	// The compaction events report the calls of the summaries they used;
	// the guard's metrics count every call it made, those of summaries it
	// prepared and dropped too, and a summary dropped before its call
	// started makes none.
	if rep.CompactionCalls > rep.summarizerOnSelf || rep.summarizerOnSelf > rep.SummarizerCalls {
		t.Errorf("compaction events report %d summarizer calls, the summarizer saw %d, the guard's metrics count %d",
			rep.CompactionCalls, rep.summarizerOnSelf, rep.SummarizerCalls)
	}
	if !strings.Contains(out, "COMPACTED") {
		t.Errorf("no COMPACTED line in the output:\n%s", out)
	}
	if !strings.Contains(out, "== the last summary (written by the demo's scripted summarizer") || !strings.Contains(out, "## Key Information") {
		t.Errorf("the last summary is not printed, marked as the scripted summarizer's:\n%s", out)
	}

	if !strings.Contains(rep.Recalled, "about 12% of requests") || !strings.Contains(out, "== recall after compaction") {
		t.Errorf("the first turn's numbers are not recalled after the compaction:\n%s", out)
	}

	f, err := os.Open(rep.Chart)
	if err != nil {
		t.Fatalf("chart: %v", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || info.Size() == 0 {
		t.Fatalf("chart %s: size %v, err %v", rep.Chart, info.Size(), err)
	}
	cfg, err := png.DecodeConfig(f)
	if err != nil {
		t.Fatalf("chart is not a PNG: %v", err)
	}
	if cfg.Width == 0 || cfg.Height == 0 {
		t.Errorf("chart is %dx%d", cfg.Width, cfg.Height)
	}
}

// TestDemoFullStory plays all turns: the agent finishes every turn after
// each compaction, and its closing summary still holds every finding.
func TestDemoFullStory(t *testing.T) {
	if testing.Short() {
		t.Skip("plays the whole story")
	}
	rep, out, logged := runDemo(t, len(story))
	if logged != "" {
		t.Errorf("the guard logged a warning, which make demo prints:\n%s", logged)
	}
	if strings.Contains(out, " 1 compactions") || strings.Contains(out, " 1 REQUESTS") {
		t.Errorf("a count of one is followed by a plural:\n%s", out)
	}
	// A step sent over the trigger by o200k that did not compact says why.
	for _, s := range rep.Steps {
		if s.Compaction == nil && s.tokens() > rep.Trigger {
			note := fmt.Sprintf("note: sent %s > trigger %s by o200k, but the guard judges the trigger on its own estimate (%s)",
				thousands(s.tokens()), thousands(rep.Trigger), thousands(s.GuardEst))
			if !strings.Contains(out, note) {
				t.Errorf("step %d: sent %d over the trigger %d without a compaction, and no note says why:\n%s", s.Step, s.tokens(), rep.Trigger, out)
			}
		}
	}
	if rep.Compactions < 3 {
		t.Errorf("compactions = %d, want at least 3", rep.Compactions)
	}
	if rep.OverWindow != 0 {
		t.Errorf("%d requests over the window", rep.OverWindow)
	}
	if rep.FindingsKept != rep.FindingsTotal {
		t.Errorf("findings kept %d/%d\n%s", rep.FindingsKept, rep.FindingsTotal, out)
	}
	// One call per step plus one answer per turn: nothing redone, nothing
	// skipped, although the history was replaced by summaries.
	want := 0
	for _, st := range story {
		want += len(st.Steps) + 1
	}
	if rep.Calls != want {
		t.Errorf("model calls = %d, want %d (a step was redone or skipped)\n%s", rep.Calls, want, out)
	}
	if strings.Contains(out, "does not match") {
		t.Errorf("the scripted model lost its place:\n%s", out)
	}
	// The /compact before turn compactRequestTurn compacts its first call,
	// below the trigger, and the context line after it says so.
	if rep.Requested != 1 || rep.OnRequest != 1 {
		t.Errorf("compactions asked %d, answered on request %d; want 1 and 1\n%s", rep.Requested, rep.OnRequest, out)
	}
	for _, s := range rep.Steps {
		if s.Turn == compactRequestTurn && s.Compaction == nil {
			t.Errorf("step %d, the first of turn %d, did not compact on request", s.Step, s.Turn)
		}
		if s.Turn == compactRequestTurn {
			break
		}
	}
	if !strings.Contains(out, "compactions, last: requested") {
		t.Errorf("no context line after the requested compaction:\n%s", out)
	}
	if got := strings.Count(out, "           context: "); got != len(story) {
		t.Errorf("%d context lines, want one per turn (%d)", got, len(story))
	}

	// The sample in examples/README.md is what the demo prints.
	printed := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		printed[line] = true
	}
	for _, line := range readmeSample(t) {
		if line != "..." && !printed[line] {
			t.Errorf("examples/README.md shows a line the demo does not print (update the sample from make demo):\n%q", line)
		}
	}
}

// readmeSample is the first code block after "### What it prints" in
// examples/README.md.
func readmeSample(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatalf("examples/README.md: %v", err)
	}
	_, rest, ok := strings.Cut(string(b), "### What it prints")
	if !ok {
		t.Fatal(`examples/README.md has no "### What it prints" section`)
	}
	_, rest, ok = strings.Cut(rest, "```\n")
	block, _, closed := strings.Cut(rest, "```")
	if !ok || !closed {
		t.Fatal("no sample block in examples/README.md's \"What it prints\"")
	}
	lines := strings.Split(strings.TrimRight(block, "\n"), "\n")
	if len(lines) < 10 {
		t.Fatalf("the sample block has %d lines", len(lines))
	}
	return lines
}

// TestScriptedModelResumes checks that the scripted model continues a turn
// from a summary message, whatever the number of contents.
func TestScriptedModelResumes(t *testing.T) {
	const turn = 12 // two sequential steps
	first := storyCommands(turn, 0)[0]
	summary := "[Conversation summary: ...]\n\n## Context & Decisions\n- `$ " + first + "`\n\n[End of summary]\n\n<user_request>\n" + story[turn].User + "\n</user_request>"
	req := &model.LLMRequest{Contents: []*genai.Content{genai.NewContentFromText(summary, genai.RoleUser)}}
	got := respond(req)
	var calls []string
	for _, p := range got.Parts {
		if p.FunctionCall != nil {
			calls = append(calls, p.FunctionCall.Name)
		}
	}
	if len(calls) != 1 || calls[0] != story[turn].Steps[1].Calls[0].Tool {
		t.Fatalf("after a summary listing step 0, the model called %v; want step 1 (%s)", calls, story[turn].Steps[1].Calls[0].Tool)
	}

	// The same turn from the user's message alone starts at step 0.
	req = &model.LLMRequest{Contents: []*genai.Content{genai.NewContentFromText(story[turn].User, genai.RoleUser)}}
	got = respond(req)
	if len(got.Parts) < 2 || got.Parts[1].FunctionCall == nil || got.Parts[1].FunctionCall.Name != story[turn].Steps[0].Calls[0].Tool {
		t.Fatalf("from the user message the model answered %+v; want step 0", got.Parts)
	}
}

// TestStoryCommandsUnique guards the scripted model's way of finding its
// place: every command of the story is run by exactly one step.
func TestStoryCommandsUnique(t *testing.T) {
	seen := map[string]string{}
	for ti, st := range story {
		for si := range st.Steps {
			for _, c := range storyCommands(ti, si) {
				where := fmt.Sprintf("turn %d step %d", ti+1, si)
				if prev, dup := seen[c]; dup {
					t.Errorf("%q run by %s and %s", c, prev, where)
				}
				seen[c] = where
			}
		}
	}
}
