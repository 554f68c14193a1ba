package core

import (
	"fmt"
	"strings"

	"github.com/adk-contextguard/contextguard/core/internal/state"
)

// Compaction on request (ARCHITECTURE.md, One model call): the agent's next
// guarded call compacts whatever its count, with the focus in the prompt.

// ReasonRequested is CompactionEvent.Reason of a compaction that answered
// RequestCompaction.
const ReasonRequested = "requested"

// MaxFocusBytes bounds the focus instructions of RequestCompaction: they are
// appended to the summary prompt of one compaction.
const MaxFocusBytes = state.MaxFocusBytes

// CompactToolName is the name of the tool CompactTool returns.
const CompactToolName = "compact_context"

func cleanFocus(focus string) (string, error) {
	focus = strings.TrimSpace(focus)
	if len(focus) > MaxFocusBytes {
		return "", fmt.Errorf("contextguard: the focus is %d bytes, at most %d are accepted", len(focus), MaxFocusBytes)
	}
	return focus, nil
}

// takeRequest answers r whatever the compaction's outcome: the focus, and
// no request left.
func takeRequest(r state.Request) (focus string, left state.Request) {
	if r.Pending {
		focus = r.Focus
	}
	return focus, state.Request{}
}
