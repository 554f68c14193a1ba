package core

import "github.com/adk-contextguard/contextguard/core/internal/sat"

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
