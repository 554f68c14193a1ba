package corpus

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"hash/fnv"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Real agent traces: the conversations of the shared traces folder, loaded
// as fit and check data.

// TracesDir is where the real agent conversations are, relative to the
// repository root. They are read at fit and test time and never copied
// into the repository.
const TracesDir = "../shared/agent-traces"

// trace is the part of the agent-traces format (see its README.md) that the
// corpus uses.
type trace struct {
	System string `json:"system"`
	Tools  []any  `json:"tools"`
	Turns  []struct {
		User  string `json:"user"`
		Steps []struct {
			Text  string `json:"text"`
			Calls []struct {
				Args   any    `json:"args"`
				Output string `json:"output"`
			} `json:"calls"`
		} `json:"steps"`
		Final          string `json:"final"`
		FinalSynthetic bool   `json:"final_synthetic"`
	} `json:"turns"`
}

// TextKey identifies a text by a hash of its bytes, so that derived data
// (reference token counts) can be committed without the text.
func TextKey(text string) string {
	h := sha256.Sum256([]byte(text))
	return "sha256:" + hex.EncodeToString(h[:12])
}

// LoadTraces reads every conversation of dir and returns its texts as
// chunks of types trace_system (system prompts and tool declarations),
// trace_user, trace_assistant, trace_args (call arguments as compact JSON)
// and trace_output (tool results). Texts longer than MaxChunk are split as
// corpus files are. Chunk keys are TextKey hashes; one chunk in
// HeldOutOneIn, by its key, is held out.
func LoadTraces(dir string) ([]Chunk, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var out []Chunk
	seen := map[string]bool{}
	for _, path := range names {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		var tr trace
		if err := json.Unmarshal(data, &tr); err != nil {
			return nil, err
		}
		file := filepath.Base(path)
		add := func(typ, text string) {
			if strings.TrimSpace(text) == "" {
				return
			}
			for _, c := range Split(file+":"+typ+":"+TextKey(text), text) {
				c.Type = typ
				c.File = file
				c.ID = TextKey(c.Text)
				if seen[c.ID] {
					continue
				}
				seen[c.ID] = true
				h := fnv.New32a()
				h.Write([]byte(c.ID))
				c.HeldOut = h.Sum32()%HeldOutOneIn == 0
				out = append(out, c)
			}
		}
		add("trace_system", tr.System)
		for _, tool := range tr.Tools {
			b, _ := json.Marshal(tool)
			add("trace_system", string(b))
		}
		for _, turn := range tr.Turns {
			add("trace_user", turn.User)
			for _, st := range turn.Steps {
				add("trace_assistant", st.Text)
				for _, call := range st.Calls {
					b, _ := json.Marshal(call.Args)
					add("trace_args", string(b))
					add("trace_output", call.Output)
				}
			}
			if !turn.FinalSynthetic {
				add("trace_assistant", turn.Final)
			}
		}
	}
	return out, nil
}
