package main

import (
	"bytes"
	"context"
	"io"
	"log"
	"log/slog"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/coretest"
)

// readmeSection is the README's section that holds this program.
const readmeSection = "## Start here"

// readmeHoldsWholeProgram says what that section's ```go block is: this
// program byte for byte (true), or an excerpt of it, its lines in order
// (false: the ADK v2 section shows only what differs from ADK v1's).
const readmeHoldsWholeProgram = true

// readmeQuickstart returns the first ```go block of the README's section
// readmeSection.
func readmeQuickstart(t *testing.T, readme string) string {
	t.Helper()
	_, section, ok := strings.Cut(readme, "\n"+readmeSection+"\n")
	require.True(t, ok, "README.md has no %q section", readmeSection)
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	_, block, ok := strings.Cut(section, "\n```go\n")
	require.True(t, ok, "the README's %q section has no ```go block", readmeSection)
	block, _, ok = strings.Cut(block, "\n```\n")
	require.True(t, ok, "the README's %q ```go block is not closed", readmeSection)
	return block + "\n"
}

// missingFromProgram returns the first line of excerpt that is not a line
// of program after the lines matched before it, or "" when every line of
// excerpt is one of program's, in order.
func missingFromProgram(excerpt, program string) string {
	lines := strings.Split(program, "\n")
	for _, want := range strings.Split(strings.TrimSuffix(excerpt, "\n"), "\n") {
		for len(lines) > 0 && lines[0] != want {
			lines = lines[1:]
		}
		if len(lines) == 0 {
			return want
		}
		lines = lines[1:]
	}
	return ""
}

// TestReadmeQuickstartIsMainGo checks that the README's Start here block is
// this program (or, per readmeHoldsWholeProgram, an excerpt of it), so what
// a user pastes is what CI builds and runs.
func TestReadmeQuickstartIsMainGo(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	file, err := os.ReadFile("main.go")
	require.NoError(t, err)
	block := readmeQuickstart(t, string(readme))
	if readmeHoldsWholeProgram {
		assert.Equal(t, string(file), block,
			"README.md's Start here block differs from examples/quickstart/main.go (expected: main.go, actual: README); copy main.go into the README's ```go block")
		return
	}
	assert.Empty(t, missingFromProgram(block, string(file)),
		"README.md's Start here block has a line that differs from examples/quickstart/main.go at that place; copy the lines from main.go")
}

func TestReadmeQuickstartExtraction(t *testing.T) {
	tests := []struct {
		name, readme, want string
	}{
		{"first go block of the section", "# x\n\n## Start here\n\ntext\n\n```go\npackage main\n```\n\n```go\nother\n```\n", "package main\n"},
		{"blocks of other sections are ignored", "## Before\n\n```go\nbefore\n```\n\n## Start here\n\n```sh\nmake\n```\n\n```go\nmine\n```\n\n## After\n", "mine\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, readmeQuickstart(t, tt.readme))
		})
	}
}

func TestReadmeQuickstartExcerpt(t *testing.T) {
	const program = "package main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n)\n\nfunc main() {\n\tfmt.Println(os.Args)\n}\n"
	tests := []struct {
		name, excerpt, missing string
	}{
		{"the whole program", program, ""},
		{"lines in order, with gaps", "import (\n\t\"os\"\n\tfmt.Println(os.Args)\n", ""},
		{"a line the program does not have", "import (\n\t\"log\"\n", "\t\"log\""},
		{"lines out of order", "\tfmt.Println(os.Args)\nimport (\n", "import ("},
		{"a line indented otherwise", "fmt.Println(os.Args)\n", "fmt.Println(os.Args)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.missing, missingFromProgram(tt.excerpt, program))
		})
	}
}

// recordingHandler keeps every log record and writes it to stderr, where
// a log.Fatal of main (which goes through slog's default) stays visible.
type recordingHandler struct {
	mu      sync.Mutex
	records []slog.Record
}

func (h *recordingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordingHandler) Handle(ctx context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.records = append(h.records, r.Clone())
	return slog.NewTextHandler(os.Stderr, nil).Handle(ctx, r)
}
func (h *recordingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *recordingHandler) WithGroup(string) slog.Handler      { return h }

// TestQuickstartRuns runs main against a local Gemini API and checks what
// it prints and what the model received. The server reports a prompt of
// more tokens than gemini-2.5-flash's window: only a guard in the runner's
// plugins judges that count, and it logs that it does not believe it, so
// the test also sees that the guard is wired in.
func TestQuickstartRuns(t *testing.T) {
	const answer = "Their requests outgrow the model's context window."
	srv := &coretest.GeminiServer{
		APIKey: "test-key",
		Count:  func(*coretest.GeminiCall) int { return 5_000_000 },
		Reply: func(*coretest.GeminiCall) (*genai.Content, error) {
			return genai.NewContentFromText(answer, genai.RoleModel), nil
		},
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	t.Setenv("GOOGLE_API_KEY", "test-key")
	t.Setenv("GEMINI_API_KEY", "")
	t.Setenv("GOOGLE_GENAI_USE_VERTEXAI", "")
	t.Setenv("GOOGLE_GEMINI_BASE_URL", ts.URL)

	logs := &recordingHandler{}
	defer func(l *slog.Logger, w io.Writer, flags int) {
		slog.SetDefault(l) // the default handler does not reset the log package
		log.SetOutput(w)
		log.SetFlags(flags)
	}(slog.Default(), log.Writer(), log.Flags())
	slog.SetDefault(slog.New(logs))

	out := captureStdout(t, main)

	assert.Equal(t, answer+"\n", out)
	calls := srv.Calls()
	require.Len(t, calls, 1)
	assert.Equal(t, "/v1beta/models/gemini-2.5-flash:generateContent", calls[0].Path)
	require.NotEmpty(t, calls[0].Contents)
	last := calls[0].Contents[len(calls[0].Contents)-1]
	require.NotEmpty(t, last.Parts)
	assert.Equal(t, "Why do long agent sessions fail?", last.Parts[0].Text)

	logs.mu.Lock()
	defer logs.mu.Unlock()
	var guardWarnings []string
	for _, r := range logs.records {
		if r.Level >= slog.LevelWarn && strings.HasPrefix(r.Message, "contextguard") {
			guardWarnings = append(guardWarnings, r.Message)
		}
	}
	assert.NotEmpty(t, guardWarnings, "the guard did not judge the model's prompt-token count: is its plugin in the runner?")
}

// captureStdout runs f with os.Stdout redirected and returns what it wrote.
func captureStdout(t *testing.T, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	stdout := os.Stdout
	os.Stdout = w
	defer func() { os.Stdout = stdout }()

	var buf bytes.Buffer
	done := make(chan error, 1)
	go func() {
		_, err := io.Copy(&buf, r)
		done <- err
	}()
	f()
	require.NoError(t, w.Close())
	require.NoError(t, <-done)
	require.NoError(t, r.Close())
	return buf.String()
}
