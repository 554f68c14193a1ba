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

	"github.com/adk-contextguard/contextguard/core/internal/countcache"
	"github.com/adk-contextguard/contextguard/core/internal/sat"
)

// sessionTable holds what the guard keeps in memory per session, and the
// ownership that serialises its work on a session while other sessions
// proceed (ARCHITECTURE.md, Concurrency). A call owns a session from
// acquire to release; the entry's mutex is held while the guard itself
// works, never while user code runs:
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
	// kept holds evicted entries' keptMemory until the session's next call.
	kept      map[string]*list.Element
	keptOrder *list.List // of *keptMemory, front: most recently evicted
}

type sessionEntry struct {
	key       string
	log       *slog.Logger // the guard's, given to every agent's memory
	mu        sync.Mutex
	users     int // owners and waiters; an entry in use is never evicted
	accounted int // the entry's share of the table's bytes; under the table's mutex

	// Guarded by mu.
	busy    *busyMark // set while the owner runs user code (park) until release
	cache   *countcache.Cache
	summary summaryMemo
	agents  []*agentMemory
	last    lastCall // for a compaction when the run ends (between_turns.go)

	// prepared is the session's one background summary. Written by the
	// owner or taken by eviction (takePrepared); read without the mutex by
	// Guard.Preparing.
	prepared atomic.Pointer[preparedSummary]
}

func newSessionEntry(key string, log *slog.Logger) *sessionEntry {
	return &sessionEntry{key: key, log: log, cache: countcache.New()}
}

// lastCall is the session's last guarded model call, kept from its
// BeforeModel to the run's end, which compacts from it.
type lastCall struct {
	cfg   *Agent
	req   Request // as ADK built it, without its Origin
	bytes int     // what req's contents retain, about
}

type busyMark struct {
	done chan struct{} // closed when the owner releases the session
}

// summaryMemo reuses the summary message while the stored summary is
// unchanged, so it is neither rebuilt nor recounted.
type summaryMemo struct {
	summary, request string
	recall           bool // the message says the recall tool is there
	msg              *genai.Content
}

func newSessionTable(b sessionBounds, log *slog.Logger) *sessionTable {
	return &sessionTable{log: log, max: b, byKey: make(map[string]*list.Element), order: list.New(),
		kept: make(map[string]*list.Element), keptOrder: list.New()}
}

// acquire makes the caller the owner of the entry, its mutex held, until
// release. While another owner runs user code it waits; it returns ctx's
// error if ctx is done first, and ErrReentrant at once if ctx descends from
// that owner's summarizer context.
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

// release ends the caller's ownership of e: it wakes the waiters, accounts
// what e retains and evicts past the bounds. It accounts while e is
// locked, so a next owner accounts after this one; the table's mutex is
// never held while an entry's is taken, so the nesting cannot deadlock.
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

// leave drops a user of e.
func (s *sessionTable) leave(e *sessionEntry) {
	s.mu.Lock()
	e.users--
	evicted := s.evictLocked()
	s.mu.Unlock()
	dropEvicted(evicted)
}

// evictLocked removes the least recently used idle entries past the
// bounds. It returns their prepared summaries, for the caller to drop once
// the table's mutex is released.
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

// dropEvicted drops evicted entries' summaries, else written for nobody.
func dropEvicted(prepared []*preparedSummary) {
	for _, p := range prepared {
		p.drop(context.Background(), "its session was evicted from the guard's memory")
	}
}

// takePrepared takes the prepared summary, nil for none; the taker settles it.
func (e *sessionEntry) takePrepared() *preparedSummary {
	return e.prepared.Swap(nil)
}

// peek is the entry of key, nil for none; it neither creates nor takes it.
func (s *sessionTable) peek(key string) *sessionEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	if el, ok := s.byKey[key]; ok {
		return el.Value.(*sessionEntry)
	}
	return nil
}

// park releases the owned entry's mutex so user code can run, marking it
// busy until release, and returns ctx marked as this owner's user code's.
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

// wait waits until the owner that set b releases the session; it returns
// ErrReentrant for a call from that owner's own user code, and ctx's error.
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

// reentryKey is the context key of the busy marks whose user code a context
// comes from: a chain, since a summarizer's context may descend from
// another session's summarizer.
type reentryKey struct{}

type reentry struct {
	mark   *busyMark
	parent *reentry
}

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

// sessionError names the session and agent of a call acquire refused.
func sessionError(c Call, agentName string, err error) error {
	if errors.Is(err, ErrReentrant) {
		return fmt.Errorf("%w: session %q, agent %q: the call comes from the summarizer compacting this session; answer without calling the guard for it",
			err, c.SessionID(), agentName)
	}
	return fmt.Errorf("contextguard: session %q, agent %q: waiting for the session's compaction: %w", c.SessionID(), agentName, err)
}

// estimator is a turn's estimator, counting through the session's cache on
// a new pass. The caller owns the entry.
func (e *sessionEntry) estimator(cfg *Agent, modelName string) countcache.Counter {
	e.cache.Begin()
	est, salt := cfg.estimator(modelName)
	return countcache.Counter{Base: est, Cache: e.cache, Salt: salt}
}

func sessionKey(c Call) string {
	return sessionKeyOf(c.AppName(), c.UserID(), c.SessionID())
}

func sessionKeyOf(appName, userID, sessionID string) string {
	return appName + "\x00" + userID + "\x00" + sessionID
}

// The session table's bounds (WithMaxSessions, WithMaxSessionBytes). An
// evicted session's next call counts only what is new, from its prefix
// record, after hashing its history once, so eviction costs little.

// Defaults of the session table's bounds.
const (
	// DefaultMaxSessions is how many sessions the guard keeps in memory by
	// default (WithMaxSessions).
	DefaultMaxSessions = 10_000
	// DefaultMaxSessionBytes is how many bytes the sessions kept in memory
	// may retain by default (WithMaxSessionBytes): 256 MiB holds 10,000 idle
	// sessions of about 25 KB each, or about 150 of 200k tokens whose whole
	// history is cached.
	DefaultMaxSessionBytes = 256 << 20
)

// Approximations of what retained values cost beyond their strings' bytes.
const (
	// sessionOverhead is what an idle session's entry costs without any
	// cached content, measured with BenchmarkSessionMemory.
	sessionOverhead = 1_600
	// retainedBytesPerToken converts the estimate of a retained request
	// into bytes: about 4 bytes of text per token.
	retainedBytesPerToken = 4
)

// sessionBounds are the session table's bounds.
type sessionBounds struct {
	sessions int
	bytes    int
}

// withDefaults fills the bounds not set.
func (b sessionBounds) withDefaults() sessionBounds {
	if b.sessions <= 0 {
		b.sessions = DefaultMaxSessions
	}
	if b.bytes <= 0 {
		b.bytes = DefaultMaxSessionBytes
	}
	return b
}

// retainedBytes is what the idle entry retains, as the table accounts it.
// The caller holds e.mu.
func (e *sessionEntry) retainedBytes() int {
	n := sat.Add(sessionOverhead, e.cache.Bytes())
	n = sat.Add(n, len(e.summary.summary)+len(e.summary.request))
	n = sat.Add(n, e.last.bytes)
	if e.summary.msg != nil {
		n = sat.Add(n, len(e.summary.msg.Parts[0].Text))
	}
	for _, m := range e.agents {
		n = sat.Add(n, m.sentBytes)
		n = sat.Add(n, m.prefix.Bytes())
	}
	return sat.Add(n, e.recallRetained())
}
