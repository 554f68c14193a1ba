package core

import (
	"strconv"
	"strings"

	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard/core/internal/contentid"
	"github.com/adk-contextguard/contextguard/core/internal/pairs"
	"github.com/adk-contextguard/contextguard/core/internal/recallindex"
	"github.com/adk-contextguard/contextguard/core/internal/sat"
	"github.com/adk-contextguard/contextguard/core/internal/textcut"
)

// recallSourceOverhead is what one source's record retains beside its text.
const recallSourceOverhead = 48

// recallSource is where indexed text number i (srcs[i]) came from.
type recallSource struct {
	pos    int // in the history the host gave
	turn   int // user turns up to and including it
	role   string
	tool   string // the tool called or answered, if any
	callID string
}

// recallIndex is what compactions and pruning removed for one agent of a
// session, in one scope (ARCHITECTURE.md, Recall); rebuilt from the host's
// log after a restart or an eviction. Guarded by the session entry's mutex.
type recallIndex struct {
	scope string
	ix    *recallindex.Index
	srcs  []recallSource
	// indexed marks the positions indexed; the fingerprints of the lowest
	// and highest are checked on each use (the log is append-only, so its
	// ends tell another log) to rebuild it.
	indexed         []bool
	first, last     int
	firstFP, lastFP string
	bytes           int // what the index retains, for the table's accounting
	scanned         recallScan
}

func newRecallIndex(scope string) *recallIndex {
	return &recallIndex{scope: scope, ix: recallindex.New(), first: -1, last: -1}
}

func (x *recallIndex) valid(history []*genai.Content) bool {
	if x.last < 0 {
		return true
	}
	return x.last < len(history) && contentid.Fingerprint(history[x.last]) == x.lastFP &&
		contentid.Fingerprint(history[x.first]) == x.firstFP
}

// add indexes history[pos] once.
func (x *recallIndex) add(history []*genai.Content, pos, turn int) {
	for len(x.indexed) <= pos {
		x.indexed = append(x.indexed, false)
	}
	if x.indexed[pos] {
		return
	}
	x.indexed[pos] = true
	c := history[pos]
	if pos > x.last {
		x.last, x.lastFP = pos, contentid.Fingerprint(c)
	}
	if x.first < 0 || pos < x.first {
		x.first, x.firstFP = pos, contentid.Fingerprint(c)
	}
	for _, p := range pairs.Parts(c) {
		if p == nil || p.Thought {
			continue
		}
		src, text, ok := partSource(p)
		if !ok || strings.TrimSpace(text) == "" {
			continue
		}
		src.pos, src.turn, src.role = pos, turn, c.Role
		before := x.ix.Retained()
		x.ix.Add(text)
		x.srcs = append(x.srcs, src)
		x.bytes = sat.Add(x.bytes, x.ix.Retained()-before+recallSourceOverhead)
	}
}

// partSource is a part's searchable text, tool and call_id; ok is false for
// the recall tool's own calls, which say nothing new.
func partSource(p *genai.Part) (src recallSource, text string, ok bool) {
	switch {
	case p.Text != "":
		return src, textcut.Sanitize(p.Text), true
	case p.FunctionCall != nil:
		if p.FunctionCall.Name == RecallToolName {
			return src, "", false
		}
		src.tool, src.callID = p.FunctionCall.Name, p.FunctionCall.ID
		return src, p.FunctionCall.Name + " " + readableJSON(textcut.JSON(p.FunctionCall.Args)), true
	case p.FunctionResponse != nil:
		if p.FunctionResponse.Name == RecallToolName {
			return src, "", false
		}
		src.tool, src.callID = p.FunctionResponse.Name, p.FunctionResponse.ID
		if s, ok := textcut.SingleString(p.FunctionResponse.Response); ok {
			return src, s, true
		}
		return src, readableJSON(textcut.JSON(p.FunctionResponse.Response)), true
	case p.ExecutableCode != nil:
		return src, textcut.Sanitize(p.ExecutableCode.Code), true
	case p.CodeExecutionResult != nil:
		return src, textcut.Sanitize(p.CodeExecutionResult.Output), true
	}
	return src, "", false
}

func (x *recallIndex) source(t int) recallindex.Source {
	s := x.srcs[t]
	d := "turn " + strconv.Itoa(s.turn) + ", "
	switch {
	case s.role == genai.RoleUser && s.tool != "":
		d += "result of tool " + s.tool
	case s.tool != "":
		d += s.role + " called tool " + s.tool
	default:
		d += s.role
	}
	if s.callID != "" {
		d += " (call_id " + textcut.Prefix(s.callID, recallindex.QuoteBytes) + ")"
	}
	return recallindex.Source{Turn: s.turn, Where: d}
}

// readableJSON undoes encoding/json's escapes of <, > and &, so an excerpt
// shows "a && b" as written and "u0026b" is no term; an escaped backslash
// is read first.
func readableJSON(s string) string {
	if !strings.Contains(s, `\u00`) {
		return s
	}
	return htmlUnescaper.Replace(s)
}

var htmlUnescaper = strings.NewReplacer(`\\`, `\\`, `\u003c`, "<", `\u003e`, ">", `\u0026`, "&")
