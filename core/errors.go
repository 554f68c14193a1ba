package core

import (
	"errors"
	"fmt"
)

// The errors the guard returns to the agent's caller.

// ErrIrreducible is returned (wrapped) by the plugin when the part of a
// request the guard cannot shrink (system instruction, tool declarations and
// the user's current request) does not fit the context window by itself.
var ErrIrreducible = errors.New("contextguard: the system instruction, tools and current request alone exceed the context window")

// ErrReentrant is returned (wrapped, with the session and agent) by the
// plugin's BeforeModelCallback and OnModelErrorCallback when the call comes
// from the summarizer of a compaction of the same session, that is when its
// context descends from the context the guard gave Summarize. Such a call
// would need the history that is being summarized, and the compaction waits
// for the summarizer, so it cannot be served; the summarizer should answer
// without it. Calls for other sessions, AfterModelCallback, and calls from
// the OnCompaction hook or a recovery model are served as usual.
var ErrReentrant = errors.New("contextguard: re-entrant call from the summarizer of the session's own compaction")

// errorf builds an error wrapping ErrIrreducible with details.
func irreducibleError(need, window int) error {
	return fmt.Errorf("%w: about %d tokens are needed, the window is %d", ErrIrreducible, need, window)
}
