package core

import (
	"errors"
	"fmt"
)

// ErrIrreducible is returned (wrapped) by the plugin when the part of a
// request the guard cannot shrink (system instruction, tool declarations and
// the user's current request) does not fit the context window by itself.
var ErrIrreducible = errors.New("contextguard: the system instruction, tools and current request alone exceed the context window")

// ErrReentrant is returned (wrapped, with the session and agent) by the
// plugin's BeforeModelCallback and OnModelErrorCallback for a call whose
// context descends from the one the guard gave Summarize for the same
// session: the compaction waits for the summarizer, so it cannot be served,
// and the summarizer should answer without it. Other sessions,
// AfterModelCallback, the OnCompaction hook and a recovery model are served
// as usual.
var ErrReentrant = errors.New("contextguard: re-entrant call from the summarizer of the session's own compaction")

func irreducibleError(need, window int) error {
	return fmt.Errorf("%w: about %d tokens are needed, the window is %d", ErrIrreducible, need, window)
}
