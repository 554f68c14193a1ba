package core

import (
	"log/slog"

	"github.com/adk-contextguard/contextguard/core/internal/state"
)

// StateKeyDisabled is the session-state key that switches the guard off for
// one session, for every agent, while it holds true: no new compaction (by
// tokens, turns, request or the output limit), no summarizer call, no
// recovery from overflow errors, no rewrite of a response cut at the output
// limit. What earlier compactions stored stays applied (the summary, pruned
// results), so the request sent is never the whole raw history, and the
// guard still counts requests, so Usage reports what is sent. Any other
// value leaves the guard on; a non-bool is logged and ignored.
// DisableSession and EnableSession set it from outside the agent,
// DisableInState and EnableInState from inside; an application may set it
// too, for example in the initial state. Turned back on, the guard resumes
// from its state: a conversation past the trigger, or a compaction
// requested meanwhile, is compacted by the next model call.
const StateKeyDisabled = state.KeyPrefix + "disabled"

// callMode is what one guarded model call may do to its request.
type callMode uint8

const (
	modeCompact   callMode = iota // compacts when due
	modeApplyOnly                 // switched off: applies what is stored, starts nothing
)

func modeFor(st StateReader, log *slog.Logger) callMode {
	if sessionDisabled(st, log) {
		return modeApplyOnly
	}
	return modeCompact
}

// sessionDisabled reads StateKeyDisabled; a non-bool is logged and ignored.
func sessionDisabled(st StateReader, log *slog.Logger) bool {
	if st == nil {
		return false
	}
	v, err := st.Get(StateKeyDisabled)
	if err != nil || v == nil {
		return false
	}
	off, ok := v.(bool)
	if !ok {
		log.Warn("contextguard: session state has the wrong type; ignoring it",
			"key", StateKeyDisabled, "type", state.TypeName(v))
	}
	return off
}
