package core

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"google.golang.org/genai"
)

// The session table: the per-session entries the guard keeps in memory, and
// the ownership that serialises its work on one session (ARCHITECTURE.md,
// Concurrency).

// sessionTable holds what the guard keeps in memory per session, and the
// ownership that serialises the guard's work on a session while other
// sessions proceed. A call owns a session from acquire to release; the
// entry's mutex is held while the guard itself works, never while user
// code runs:
//
//   - a Summarizer runs with the mutex released and the session marked busy
//     (park, unpark): a concurrent call for it waits in acquire, without a
//     mutex, until the owner releases it or its own context is done;
//   - a call whose context descends from the summarizer's would wait for
//     itself: acquire recognises the summarizer's mark (withReentry) and
//     returns ErrReentrant at once;
//   - the OnCompaction hook and a recovery model run after release.
//
// A summarizer that calls back on another context waits until the summary
// timeout ends the owner's wait (CallBounded). The TokenCounter and the
// ModelRegistry run with the mutex held and must not call the guard.
type sessionTable struct {
	log   *slog.Logger // the guard's, given to every entry
	mu    sync.Mutex
	max   sessionBounds // past either, the least recently used idle entries are dropped
	bytes int           // what the entries retain (retainedBytes), as last accounted
	byKey map[string]*list.Element
	order *list.List // front: most recently used
	// kept holds what evicted entries had learned and the session state
	// cannot yet show (keptMemory), until the session's next call;
	// keptOrder bounds it (session_memory.go, keep).
	kept      map[string]*list.Element
	keptOrder *list.List // of *keptMemory, front: most recently evicted
}

type sessionEntry struct {
	key   string
	log   *slog.Logger // the guard's, given to every agent's memory
	mu    sync.Mutex
	users int // owners and waiters; an entry in use is never evicted
	// accounted is the entry's share of the table's bytes; guarded by the
	// table's mutex.
	accounted int

	// Guarded by mu.
	//
	// busy is set while the owner runs user code with mu released (park),
	// and cleared, its done channel closed, when the owner releases the
	// session.
	busy    *busyMark
	cache   *countCache
	summary summaryMemo
	// agents is the in-memory record of each agent of the session that
	// survives a failed model call (recovery.go).
	agents []*agentMemory
	// last is the session's last guarded model call, for a compaction
	// when its run ends (between_turns.go).
	last lastCall

	// prepared is the summary prepared in the background for the next
	// compaction of one of the session's agents (prepared_summary.go), at
	// most one. Written by the session's owner, or taken by the table
	// evicting the entry, which then has none (takePrepared); read without
	// the mutex by Usage (Guard.Preparing).
	prepared atomic.Pointer[preparedSummary]
}

// newSessionEntry is an empty entry for the session of key, logging to log.
func newSessionEntry(key string, log *slog.Logger) *sessionEntry {
	return &sessionEntry{key: key, log: log, cache: newCountCache()}
}

// lastCall is the session's last guarded model call, kept from its
// BeforeModel to the run's end (AfterRun), which compacts from it.
type lastCall struct {
	cfg *Agent
	// req is the request as ADK built it, without its Origin.
	req Request
	// bytes is what req's contents retain, about (retainedBytesPerToken).
	bytes int
}

// busyMark marks a session whose owner runs user code with the entry's
// mutex released.
type busyMark struct {
	done chan struct{} // closed when the owner releases the session
}

// summaryMemo reuses the summary message across calls while the stored
// summary is unchanged, so its text is neither rebuilt nor recounted.
type summaryMemo struct {
	summary, request string
	recall           bool // the message says the recall tool is there
	msg              *genai.Content
}

func newSessionTable(b sessionBounds, log *slog.Logger) *sessionTable {
	return &sessionTable{log: log, max: b, byKey: make(map[string]*list.Element), order: list.New(),
		kept: make(map[string]*list.Element), keptOrder: list.New()}
}

// acquire makes the caller the owner of the session's entry, with its mutex
// held, until release. While another owner runs user code it waits; it
// returns ctx's error if ctx is done first, and ErrReentrant (unwrapped) at
// once if ctx descends from that owner's summarizer context.
func (s *sessionTable) acquire(ctx context.Context, key string) (*sessionEntry, error) {
	s.mu.Lock()
	el, ok := s.byKey[key]
	if !ok {
		e := newSessionEntry(key, s.log)
		s.restoreLocked(e)
		el = s.order.PushFront(e)
		s.byKey[key] = el
	} else {
		s.order.MoveToFront(el)
	}
	e := el.Value.(*sessionEntry)
	e.users++
	evicted := s.evictLocked()
	s.mu.Unlock()
	dropEvicted(evicted)

	for {
		e.mu.Lock()
		b := e.busy
		if b == nil {
			return e, nil
		}
		e.mu.Unlock()
		if err := b.wait(ctx); err != nil {
			s.leave(e)
			return nil, err
		}
	}
}

// release ends the caller's ownership of e: it wakes the calls waiting for
// the session, accounts what e retains, evicts idle entries past the
// table's bounds and unlocks e. The account is made while e is locked, so
// a next owner accounts after this one (the table's mutex is never held
// while an entry's is taken: the nesting cannot deadlock).
func (s *sessionTable) release(e *sessionEntry) {
	if b := e.busy; b != nil {
		e.busy = nil
		close(b.done)
	}
	size := e.retainedBytes()
	s.mu.Lock()
	s.bytes += size - e.accounted
	e.accounted = size
	e.users--
	evicted := s.evictLocked()
	s.mu.Unlock()
	e.mu.Unlock()
	dropEvicted(evicted)
}

// leave drops a user of e, evicting idle entries past the table's bounds.
func (s *sessionTable) leave(e *sessionEntry) {
	s.mu.Lock()
	e.users--
	evicted := s.evictLocked()
	s.mu.Unlock()
	dropEvicted(evicted)
}

// evictLocked removes the least recently used idle entries past the
// table's bounds. It returns their prepared summaries, which the caller
// drops once the table's mutex is released (dropEvicted).
func (s *sessionTable) evictLocked() (prepared []*preparedSummary) {
	for el := s.order.Back(); el != nil && (s.order.Len() > s.max.sessions || s.bytes > s.max.bytes); {
		prev := el.Prev()
		if e := el.Value.(*sessionEntry); e.users == 0 {
			s.order.Remove(el)
			delete(s.byKey, e.key)
			s.bytes -= e.accounted
			s.keepLocked(e)
			if p := e.takePrepared(); p != nil {
				prepared = append(prepared, p)
			}
		}
		el = prev
	}
	return prepared
}

// dropEvicted drops the prepared summaries of evicted entries, which would
// otherwise be written for nobody.
func dropEvicted(prepared []*preparedSummary) {
	for _, p := range prepared {
		p.drop(context.Background(), "its session was evicted from the guard's memory")
	}
}

// takePrepared takes the session's prepared summary out of the entry, nil
// for none; the taker (its owner, or the table evicting it) settles it.
func (e *sessionEntry) takePrepared() *preparedSummary {
	return e.prepared.Swap(nil)
}

// peek is the entry of key, nil when the table holds none; it neither
// creates nor takes it.
func (s *sessionTable) peek(key string) *sessionEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	if el, ok := s.byKey[key]; ok {
		return el.Value.(*sessionEntry)
	}
	return nil
}

// park releases the mutex of an entry the caller owns so that user code can
// run, marking it busy until release: other calls wait in acquire. It
// returns ctx marked as this owner's user code's (withReentry).
func (e *sessionEntry) park(ctx context.Context) context.Context {
	if e.busy == nil {
		e.busy = &busyMark{done: make(chan struct{})}
	}
	b := e.busy
	e.mu.Unlock()
	return withReentry(ctx, b)
}

// unpark takes back the mutex park released.
func (e *sessionEntry) unpark() { e.mu.Lock() }

// wait waits until the owner that set b releases the session. A call from
// that owner's own user code cannot be served (ErrReentrant); a call whose
// ctx is done gives up with ctx's error.
func (b *busyMark) wait(ctx context.Context) error {
	if isReentrant(ctx, b) {
		return ErrReentrant
	}
	select {
	case <-b.done:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// reentryKey is the context key of the busy marks of the sessions whose
// user code a context comes from.
type reentryKey struct{}

// reentry is one mark in a context's chain: a summarizer's context may
// itself descend from another session's summarizer.
type reentry struct {
	mark   *busyMark
	parent *reentry
}

// withReentry returns ctx marked as coming from the user code run under b.
func withReentry(ctx context.Context, b *busyMark) context.Context {
	parent, _ := ctx.Value(reentryKey{}).(*reentry)
	return context.WithValue(ctx, reentryKey{}, &reentry{mark: b, parent: parent})
}

// isReentrant reports whether ctx comes from the user code run under b.
func isReentrant(ctx context.Context, b *busyMark) bool {
	r, _ := ctx.Value(reentryKey{}).(*reentry)
	for ; r != nil; r = r.parent {
		if r.mark == b {
			return true
		}
	}
	return false
}

// sessionError says which session and agent a call that acquire refused was
// for.
func sessionError(c Call, agentName string, err error) error {
	if errors.Is(err, ErrReentrant) {
		return fmt.Errorf("%w: session %q, agent %q: the call comes from the summarizer compacting this session; answer without calling the guard for it",
			err, c.SessionID(), agentName)
	}
	return fmt.Errorf("contextguard: session %q, agent %q: waiting for the session's compaction: %w", c.SessionID(), agentName, err)
}

// estimator is a turn's estimator: the agent's, counting through the
// session's cache, on a new pass over it. The caller owns the entry.
func (e *sessionEntry) estimator(cfg *Agent, modelName string) cachedEstimator {
	e.cache.begin()
	est, salt := cfg.estimator(modelName)
	return cachedEstimator{tokenEstimator: est, cache: e.cache, salt: salt}
}

func sessionKey(c Call) string {
	return sessionKeyOf(c.AppName(), c.UserID(), c.SessionID())
}

// sessionKeyOf is the table's key of a session, by its IDs.
func sessionKeyOf(appName, userID, sessionID string) string {
	return appName + "\x00" + userID + "\x00" + sessionID
}
