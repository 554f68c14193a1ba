package costbench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"google.golang.org/genai"
)

// Traces: the recorded agent sessions, in the folder's JSON format (one
// file per session: system prompt, tool declarations, and turns of a user
// message followed by the assistant's steps, each a text and function calls
// with their real outputs, and a final text).

// Trace is one recorded session.
type Trace struct {
	// File is the name of the file the session was read from.
	File string `json:"-"`
	// System is the agent's system prompt (may be empty).
	System string `json:"system"`
	// Tools are the agent's tool declarations.
	Tools []ToolDecl `json:"tools"`
	// Turns are the user turns, in order.
	Turns []Turn `json:"turns"`
}

// ToolDecl is one tool declaration of a trace.
type ToolDecl struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Parameters  map[string]any `json:"parameters"`
}

// Turn is one user message and the assistant's work on it.
type Turn struct {
	// User is the user's message.
	User string `json:"user"`
	// Steps are the assistant's model responses that called tools, in order.
	Steps []Step `json:"steps"`
	// Final is the assistant's last text of the turn.
	Final string `json:"final"`
}

// Step is one model response: a text and the function calls made with it.
type Step struct {
	Text  string `json:"text"`
	Calls []Call `json:"calls"`
}

// Call is one function call and the tool output that was recorded for it.
type Call struct {
	ID     string          `json:"id"`
	Name   string          `json:"name"`
	Args   json.RawMessage `json:"args"`
	Output string          `json:"output"`
}

// ArgsMap returns the call's arguments as a function call's Args: the
// recorded object, or {"input": value} for a value that is not an object
// (a string, a list), so any recording can be replayed.
func (c Call) ArgsMap() map[string]any {
	var v any
	dec := json.NewDecoder(bytes.NewReader(c.Args))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil || v == nil {
		return map[string]any{}
	}
	if m, ok := v.(map[string]any); ok {
		return m
	}
	return map[string]any{"input": v}
}

// Requests is how many model calls the session makes with no guard: one per
// step and one for each turn's final text.
func (t *Trace) Requests() int {
	n := 0
	for _, turn := range t.Turns {
		n += len(turn.Steps) + 1
	}
	return n
}

// Truncate keeps the session's first maxRequests model calls (whole steps,
// the turn cut there ending with its final text); maxRequests <= 0 keeps
// everything.
func (t *Trace) Truncate(maxRequests int) {
	if maxRequests <= 0 || t.Requests() <= maxRequests {
		return
	}
	left := maxRequests
	for i := range t.Turns {
		need := len(t.Turns[i].Steps) + 1
		if need <= left {
			left -= need
			continue
		}
		if left == 0 {
			t.Turns = t.Turns[:i]
			return
		}
		t.Turns[i].Steps = t.Turns[i].Steps[:left-1]
		t.Turns = t.Turns[:i+1]
		return
	}
}

// uniqueCallIDs gives every call of the session an ID no other call has,
// keeping the recorded IDs that are already unique: the replayed tools find
// a call's output by its ID.
func (t *Trace) uniqueCallIDs() {
	seen := map[string]bool{}
	for ti := range t.Turns {
		for si := range t.Turns[ti].Steps {
			calls := t.Turns[ti].Steps[si].Calls
			for ci := range calls {
				id := calls[ci].ID
				if id == "" || seen[id] {
					id = "call_t" + strconv.Itoa(ti) + "_s" + strconv.Itoa(si) + "_" + strconv.Itoa(ci)
				}
				seen[id] = true
				calls[ci].ID = id
			}
		}
	}
}

// LoadTraces reads every *.json session of dir, sorted by file name. A file
// that does not parse is an error naming it.
func LoadTraces(dir string) ([]*Trace, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, fmt.Errorf("costbench: list %s: %w", dir, err)
	}
	sort.Strings(names)
	out := make([]*Trace, 0, len(names))
	for _, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("costbench: read trace: %w", err)
		}
		tr, err := ParseTrace(data)
		if err != nil {
			return nil, fmt.Errorf("costbench: %s: %w", filepath.Base(name), err)
		}
		tr.File = filepath.Base(name)
		out = append(out, tr)
	}
	return out, nil
}

// ParseTrace decodes one session and gives its calls unique IDs.
func ParseTrace(data []byte) (*Trace, error) {
	var tr Trace
	if err := json.Unmarshal(data, &tr); err != nil {
		return nil, fmt.Errorf("parse trace: %w", err)
	}
	tr.uniqueCallIDs()
	return &tr, nil
}

// emptyFinal is the final text of a turn whose recording has none: an empty
// model content would end ADK's flow differently from the recording.
const emptyFinal = "Done."

// Response is the model's recorded answer to the given agent request of a
// turn: its step-th recorded step, or the turn's final text past the steps
// (again, should the flow ask once more).
func (t *Trace) Response(turn, step int) *genai.Content {
	tr := t.Turns[turn]
	if step >= len(tr.Steps) {
		final := tr.Final
		if strings.TrimSpace(final) == "" {
			final = emptyFinal
		}
		return genai.NewContentFromText(final, genai.RoleModel)
	}
	st := tr.Steps[step]
	c := &genai.Content{Role: genai.RoleModel}
	if st.Text != "" {
		c.Parts = append(c.Parts, &genai.Part{Text: st.Text})
	}
	for _, call := range st.Calls {
		c.Parts = append(c.Parts, &genai.Part{FunctionCall: &genai.FunctionCall{ID: call.ID, Name: call.Name, Args: call.ArgsMap()}})
	}
	return c
}
