package core

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/adk-contextguard/contextguard/core/internal/textcut"
)

// Compaction on request (ARCHITECTURE.md, One model call): the agent's next
// guarded call compacts whatever its count, with the focus in the prompt.

// ReasonRequested is CompactionEvent.Reason of a compaction that answered
// RequestCompaction.
const ReasonRequested = "requested"

// MaxFocusBytes bounds the focus instructions of RequestCompaction: they are
// appended to the summary prompt of one compaction.
const MaxFocusBytes = 2_000

// CompactToolName is the name of the tool CompactTool returns.
const CompactToolName = "compact_context"

// compactionRequest is a compaction asked for and not yet answered. In
// session state it is true (no focus) or the focus text; false, "" or no
// value mean none.
type compactionRequest struct {
	pending bool
	focus   string
}

func (r compactionRequest) value() any {
	switch {
	case !r.pending:
		return false
	case r.focus != "":
		return r.focus
	}
	return true
}

// requestAt reads the request stored under fullKey; a value of another
// type is logged and treated as absent.
func (s stateIO) requestAt(st StateReader, fullKey string) compactionRequest {
	if st == nil {
		return compactionRequest{}
	}
	v, err := st.Get(fullKey)
	if err != nil {
		if !s.missingKey(err) {
			s.log.Warn("contextguard: reading session state failed; treating key as absent",
				"agent", s.agent, "key", fullKey, "error", err)
		}
		return compactionRequest{}
	}
	switch r := v.(type) {
	case nil:
		return compactionRequest{}
	case bool:
		return compactionRequest{pending: r}
	case string:
		if len(r) > MaxFocusBytes {
			// Written by an application itself: cut, not refused.
			s.log.Warn("contextguard: the requested compaction's focus is too long; using its beginning",
				"agent", s.agent, "key", fullKey, "bytes", len(r), "max_bytes", MaxFocusBytes)
			r = focusHead(r)
		}
		return compactionRequest{pending: r != "", focus: r}
	}
	s.log.Warn("contextguard: session state has the wrong type; ignoring it",
		"agent", s.agent, "key", fullKey, "type", typeName(v))
	return compactionRequest{}
}

func cleanFocus(focus string) (string, error) {
	focus = strings.TrimSpace(focus)
	if len(focus) > MaxFocusBytes {
		return "", fmt.Errorf("contextguard: the focus is %d bytes, at most %d are accepted", len(focus), MaxFocusBytes)
	}
	return focus, nil
}

// takeRequest answers r whatever the compaction's outcome: the focus, and
// no request left.
func takeRequest(r compactionRequest) (focus string, left compactionRequest) {
	if r.pending {
		focus = r.focus
	}
	return focus, compactionRequest{}
}

// focusHead cuts a focus to MaxFocusBytes with a marker the summarizer sees.
func focusHead(s string) string {
	marker := func(n int) string { return " [... " + strconv.Itoa(n) + " more bytes of the focus omitted]" }
	head := textcut.Prefix(s, MaxFocusBytes-len(marker(len(s))))
	return head + marker(len(s)-len(head))
}
