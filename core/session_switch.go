package core

import (
	"log/slog"
)

// The session switch: a session-state key that passes every request untouched
// (DisableSession).

// StateKeyDisabled is the session-state key that switches the guard off for
// one session: while it holds true, the guard stops compacting the session,
// for every agent: no new compaction (by tokens, turns, request or the
// output limit), no summarizer call, no recovery from overflow errors, no
// rewrite of a response cut at the output limit. What earlier compactions
// decided stays applied: the stored summary still replaces the history it
// covers, and old tool results stay pruned, so a conversation already
// compacted stays compacted and the request sent is never the whole raw
// history. The guard still counts each request and records the provider's
// counts, so Usage reports the request actually sent. Any other value, or
// none, leaves the guard on; a value that is not a bool is logged and
// ignored. DisableSession and EnableSession set it from outside the agent,
// DisableInState and EnableInState from inside; an application may also set
// it itself, for example in the session's initial state. Turned back on,
// the guard resumes from the state it had: a conversation that grew past
// the trigger meanwhile, or a compaction requested meanwhile, is compacted
// by its next model call.
const StateKeyDisabled = stateKeyPrefix + "disabled"

// callMode is what one guarded model call may do to its request.
type callMode uint8

const (
	// modeCompact counts the request and compacts it when due: a session
	// the guard is on for.
	modeCompact callMode = iota
	// modeApplyOnly applies what earlier compactions stored (the summary in
	// place of the history it covers, pruning) and counts the request, but
	// starts no compaction: a session switched off.
	modeApplyOnly
)

// modeFor is the mode of a call of the session whose state is st.
func modeFor(st StateReader, log *slog.Logger) callMode {
	if sessionDisabled(st, log) {
		return modeApplyOnly
	}
	return modeCompact
}

// sessionDisabled reads StateKeyDisabled; a value that is not a bool is
// logged and treated as absent.
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
			"key", StateKeyDisabled, "type", typeName(v))
	}
	return off
}
