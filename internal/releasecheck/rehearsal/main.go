//go:build ignore

// Command rehearsal runs a plugin's quickstart against a local Gemini API and
// checks what it printed and what the model received, as the quickstart's
// own test does (examples/quickstart/main_test.go). releasecheck writes it,
// without its build constraint, into a consumer module that requires the
// plugin from the rehearsal's file proxy, so the fake it serves
// (core/coretest.GeminiServer) comes from core's module zip too.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"time"

	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/coretest"
)

const (
	// apiKey is the key the fake requires and the quickstart is given.
	apiKey = "test-key"
	// answer is the fake model's reply, which the quickstart prints.
	answer = "Their requests outgrow the model's context window."
	// question is the user's message the quickstart sends.
	question = "Why do long agent sessions fail?"
	// wantPath is the REST path of the quickstart's model
	// (gemini-2.5-flash, not streamed).
	wantPath = "/v1beta/models/gemini-2.5-flash:generateContent"
	// reportedTokens is the prompt size the fake reports: more than
	// gemini-2.5-flash's window, so only a guard in the runner's plugins
	// judges it, and it logs a warning that it does not believe it. The
	// warning is how the rehearsal sees that the guard is wired in.
	reportedTokens = 5_000_000
)

// guardWarning matches a warning or error of the guard as the standard
// logger prints slog's default output ("2006/01/02 15:04:05 WARN contextguard: ...").
var guardWarning = regexp.MustCompile(`(?m)\b(WARN|ERROR) (contextguard: .*)$`)

func main() {
	quickstart := flag.String("quickstart", "", "the quickstart binary to run")
	timeout := flag.Duration("timeout", 2*time.Minute, "how long the quickstart may run")
	flag.Parse()
	if err := run(*quickstart, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "rehearsal:", err)
		os.Exit(1)
	}
}

func run(quickstart string, timeout time.Duration) error {
	if quickstart == "" {
		return errors.New("-quickstart is required")
	}
	srv := &coretest.GeminiServer{
		APIKey: apiKey,
		Count:  func(*coretest.GeminiCall) int { return reportedTokens },
		Reply: func(*coretest.GeminiCall) (*genai.Content, error) {
			return genai.NewContentFromText(answer, genai.RoleModel), nil
		},
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()

	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, quickstart)
	cmd.Env = append(os.Environ(),
		"GOOGLE_API_KEY="+apiKey,
		"GEMINI_API_KEY=",
		"GOOGLE_GENAI_USE_VERTEXAI=",
		"GOOGLE_GEMINI_BASE_URL="+ts.URL,
	)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("quickstart: %w\nstderr:\n%s", err, stderr.String())
	}

	var problems []string
	if got := stdout.String(); got != answer+"\n" {
		problems = append(problems, fmt.Sprintf("printed %q, want %q", got, answer+"\n"))
	}
	calls := srv.Calls()
	if len(calls) != 1 {
		problems = append(problems, fmt.Sprintf("made %d model calls, want 1", len(calls)))
	} else {
		c := calls[0]
		if c.Path != wantPath {
			problems = append(problems, fmt.Sprintf("called %s, want %s", c.Path, wantPath))
		}
		if last := lastText(c.Contents); last != question {
			problems = append(problems, fmt.Sprintf("the request's last content is %q, want the user's question %q", last, question))
		}
	}
	warning := guardWarning.FindStringSubmatch(stderr.String())
	if warning == nil {
		problems = append(problems, "the guard logged no warning about the model's prompt-token count: is its plugin in the runner?")
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s\nstdout:\n%s\nstderr:\n%s", strings.Join(problems, "\n"), stdout.String(), stderr.String())
	}
	fmt.Printf("quickstart printed the model's answer; 1 model call to %s ending with the user's question; the guard logged: %s\n",
		wantPath, warning[2])
	return nil
}

// lastText returns the first part's text of the last content, or "".
func lastText(contents []*genai.Content) string {
	if len(contents) == 0 {
		return ""
	}
	last := contents[len(contents)-1]
	if last == nil || len(last.Parts) == 0 || last.Parts[0] == nil {
		return ""
	}
	return last.Parts[0].Text
}
