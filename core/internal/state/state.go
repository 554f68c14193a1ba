// Package state is the schema and codec of what the guard keeps per agent in
// a session's state (ARCHITECTURE.md, Session state): the keys, their
// encoding, and the tolerant reading that never fails a model call.
package state

import (
	"encoding/json"
	"log/slog"
	"math"
	"strconv"

	"github.com/adk-contextguard/contextguard/core/internal/textcut"
)

// Reader reads a session's state; core's StateReader satisfies it.
type Reader interface {
	Get(key string) (any, error)
}

// Writer reads and writes a session's state; core's State satisfies it.
type Writer interface {
	Reader
	Set(key string, value any) error
}

// Keys, each followed by the agent's name. The first five are the earlier
// guard's names, so its sessions carry over.
const (
	KeyPrefix           = "__context_guard_"
	KeySummary          = KeyPrefix + "summary_"
	KeyWatermark        = KeyPrefix + "contents_at_compaction_"
	KeySummarizedAt     = KeyPrefix + "summarized_at_"
	KeyRealTokens       = KeyPrefix + "real_tokens_"
	KeyLastEstimate     = KeyPrefix + "last_heuristic_"
	KeyFingerprint      = KeyPrefix + "fingerprint_"
	KeyUserRequest      = KeyPrefix + "user_request_"
	KeyCompactions      = KeyPrefix + "compactions_"
	KeyIrreducibleFloor = KeyPrefix + "irreducible_floor_"
	KeyProviderRatio    = KeyPrefix + "provider_ratio_"
	KeySuspectRatio     = KeyPrefix + "suspect_ratio_"
	KeyWindow           = KeyPrefix + "window_"
	KeyCompactNext      = KeyPrefix + "compact_next_"
	KeyMaxOutput        = KeyPrefix + "max_output_"
	KeyAnchor           = KeyPrefix + "anchor_"
	KeyLastTokens       = KeyPrefix + "last_tokens_"
	KeyThreshold        = KeyPrefix + "threshold_"
	KeyCompactedAt      = KeyPrefix + "last_compaction_at_"
	KeyCompactReason    = KeyPrefix + "last_compaction_reason_"
	KeyCompactRequest   = KeyPrefix + "compact_request_"
	KeyPrefixKept       = KeyPrefix + "prefix_kept_"
	KeyInvalidated      = KeyPrefix + "invalidated_"
	KeyCachedTokens     = KeyPrefix + "cached_tokens_"
	// KeyPruneFrontier is kept because the frontier advances only when a
	// pass frees enough, in this process or another.
	KeyPruneFrontier = KeyPrefix + "prune_frontier_"
)

// MaxPlausible is the largest count read as valid; anything above is corrupt.
const MaxPlausible = 1 << 40

// MaxFocusBytes bounds a requested compaction's focus: it is appended to the
// summary prompt of one compaction.
const MaxFocusBytes = 2_000

// Agent is what the guard keeps for one agent of a session.
type Agent struct {
	Summary     string
	UserRequest string
	Watermark   int
	Fingerprint string
	// Anchor is the host's log position of the last covered content, or "".
	Anchor       string
	SummarizedAt int
	RealTokens   int
	LastEstimate int
	Compactions  int
	Floor        int
	// ProviderRatio is the provider's believed counts over the guard's
	// estimates, per mille; it survives compaction.
	ProviderRatio int
	// SuspectRatio is a report's ratio that jumped from ProviderRatio and
	// waits for the next report to confirm it, per mille.
	SuspectRatio int
	// Window is the context window the last request was judged against.
	Window int
	// CompactNext is 1 when the next call compacts first, whatever its
	// count: a response near the window stopped at the output limit.
	CompactNext int
	// MaxOutput is the output limit of the request last let through (0:
	// none), for the response, whose hook does not see the request.
	MaxOutput int
	// Tokens is the calibrated count of the request last let through, and
	// Threshold the trigger it was judged against.
	Tokens    int
	Threshold int
	// CompactedAt (RFC 3339) and CompactReason describe the last applied
	// compaction; the hot path does not read them (LoadAll).
	CompactedAt   string
	CompactReason string
	Request       Request
	// PruneFrontier is the tool step the request last let through was
	// pruned to, 0 for none.
	PruneFrontier int
	// PrefixKept and Invalidated are the calibrated tokens of the request
	// before the last one that the last one kept as its prefix and did not.
	PrefixKept   int
	Invalidated  int
	CachedTokens int // the provider's last cached-token count
}

// Request is a compaction asked for and not yet answered. Stored, it is true
// (no focus) or the focus text; false, "" or no value mean none.
type Request struct {
	Pending bool
	Focus   string
}

// Value is the request as stored.
func (r Request) Value() any {
	switch {
	case !r.Pending:
		return false
	case r.Focus != "":
		return r.Focus
	}
	return true
}

// IO reads and writes one agent's keys of a session state.
type IO struct {
	Agent   string
	Missing func(error) bool // says an error reports a missing key; nil: none does
	Log     *slog.Logger
	Keys    map[string]string // full key names by key; nil to build them on each use
}

// Key is the full name of the agent's key k.
func (s IO) Key(k string) string {
	if full, ok := s.Keys[k]; ok {
		return full
	}
	return k + s.Agent
}

// Load decodes the agent's state. Wrong types and impossible values are
// logged and treated as absent; they never fail the call.
func (s IO) Load(st Reader) Agent {
	var g Agent
	if st == nil {
		return g
	}
	g.Summary = s.Str(st, KeySummary)
	g.UserRequest = s.Str(st, KeyUserRequest)
	g.Fingerprint = s.Str(st, KeyFingerprint)
	g.Watermark = s.Num(st, KeyWatermark)
	g.Anchor = s.Str(st, KeyAnchor)
	g.SummarizedAt = s.Num(st, KeySummarizedAt)
	g.RealTokens = s.Num(st, KeyRealTokens)
	g.LastEstimate = s.Num(st, KeyLastEstimate)
	g.Compactions = s.Num(st, KeyCompactions)
	g.Floor = s.Num(st, KeyIrreducibleFloor)
	g.ProviderRatio = s.Num(st, KeyProviderRatio)
	g.SuspectRatio = s.Num(st, KeySuspectRatio)
	g.Window = s.Num(st, KeyWindow)
	g.CompactNext = s.Num(st, KeyCompactNext)
	g.MaxOutput = s.Num(st, KeyMaxOutput)
	g.Threshold = s.Num(st, KeyThreshold)
	g.PruneFrontier = s.Num(st, KeyPruneFrontier)
	g.PrefixKept = s.Num(st, KeyPrefixKept)
	g.Invalidated = s.Num(st, KeyInvalidated)
	return g
}

// LoadAll is Load plus the keys the hot path does not read (it reads a
// requested compaction from a key it keeps at hand).
func (s IO) LoadAll(st Reader) Agent {
	g := s.Load(st)
	if st == nil {
		return g
	}
	g.Tokens = s.Num(st, KeyLastTokens)
	g.CompactedAt = s.Str(st, KeyCompactedAt)
	g.CompactReason = s.Str(st, KeyCompactReason)
	g.Request = s.RequestAt(st, s.Key(KeyCompactRequest))
	g.CachedTokens = s.Num(st, KeyCachedTokens)
	return g
}

// getFull reads fullKey; a failed read is logged unless it says the key is
// missing, and reads as absent.
func (s IO) getFull(st Reader, fullKey string) (any, bool) {
	v, err := st.Get(fullKey)
	if err != nil {
		if s.Missing == nil || !s.Missing(err) {
			s.Log.Warn("contextguard: reading session state failed; treating key as absent",
				"agent", s.Agent, "key", fullKey, "error", err)
		}
		return nil, false
	}
	return v, v != nil
}

// Str reads the agent's key as a string; another type reads as "".
func (s IO) Str(st Reader, key string) string {
	v, ok := s.getFull(st, s.Key(key))
	if !ok {
		return ""
	}
	str, isStr := v.(string)
	if !isStr {
		s.wrongType(s.Key(key), v)
		return ""
	}
	return str
}

// Num reads the agent's key as a count (DecodeInt); anything else reads as 0.
func (s IO) Num(st Reader, key string) int {
	v, ok := s.getFull(st, s.Key(key))
	if !ok {
		return 0
	}
	n, ok := DecodeInt(v)
	if !ok {
		s.Log.Warn("contextguard: session state is not a valid count; ignoring it",
			"agent", s.Agent, "key", s.Key(key), "type", TypeName(v), "value", v)
		return 0
	}
	return n
}

// RequestAt reads the request stored under fullKey. A focus over
// MaxFocusBytes, written by an application itself, is cut, not refused.
func (s IO) RequestAt(st Reader, fullKey string) Request {
	if st == nil {
		return Request{}
	}
	v, _ := s.getFull(st, fullKey)
	switch r := v.(type) {
	case nil:
		return Request{}
	case bool:
		return Request{Pending: r}
	case string:
		if len(r) > MaxFocusBytes {
			s.Log.Warn("contextguard: the requested compaction's focus is too long; using its beginning",
				"agent", s.Agent, "key", fullKey, "bytes", len(r), "max_bytes", MaxFocusBytes)
			r = FocusHead(r)
		}
		return Request{Pending: r != "", Focus: r}
	}
	s.wrongType(fullKey, v)
	return Request{}
}

func (s IO) wrongType(fullKey string, v any) {
	s.Log.Warn("contextguard: session state has the wrong type; ignoring it",
		"agent", s.Agent, "key", fullKey, "type", TypeName(v))
}

// FocusHead cuts a focus to MaxFocusBytes with a marker the summarizer sees.
func FocusHead(s string) string {
	marker := func(n int) string { return " [... " + strconv.Itoa(n) + " more bytes of the focus omitted]" }
	head := textcut.Prefix(s, MaxFocusBytes-len(marker(len(s))))
	return head + marker(len(s)-len(head))
}

// DecodeInt accepts the number types session services return (int and int64
// in memory, float64 from JSON-backed databases, json.Number) and rejects
// negative, fractional, non-finite and absurdly large values.
func DecodeInt(v any) (int, bool) {
	var f float64
	switch n := v.(type) {
	case int:
		f = float64(n)
	case int32:
		f = float64(n)
	case int64:
		f = float64(n)
	case float32:
		f = float64(n)
	case float64:
		f = n
	case json.Number:
		// Float64 is exact up to 2^53, far above MaxPlausible.
		var err error
		if f, err = n.Float64(); err != nil {
			return 0, false
		}
	default:
		return 0, false
	}
	if math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || f > MaxPlausible || f != math.Trunc(f) {
		return 0, false
	}
	return int(f), true
}

// TypeName names v's type for a log line without printing the value.
func TypeName(v any) string {
	if v == nil {
		return "nil"
	}
	switch v.(type) {
	case string:
		return "string"
	case float64:
		return "float64"
	case int:
		return "int"
	case bool:
		return "bool"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	}
	return "other"
}

// Set writes the agent's key when its value changed, so a call that changes
// nothing adds nothing to the event's state delta.
func (s IO) Set(st Writer, key string, old, val any) {
	if old == val {
		return
	}
	if err := st.Set(s.Key(key), val); err != nil {
		s.Log.Warn("contextguard: writing session state failed", "agent", s.Agent, "key", s.Key(key), "error", err)
	}
}

// Save writes every field of next that differs from prev.
func (s IO) Save(st Writer, prev, next Agent) {
	if st == nil {
		return
	}
	s.Set(st, KeySummary, prev.Summary, next.Summary)
	s.Set(st, KeyUserRequest, prev.UserRequest, next.UserRequest)
	s.Set(st, KeyFingerprint, prev.Fingerprint, next.Fingerprint)
	s.Set(st, KeyWatermark, prev.Watermark, next.Watermark)
	s.Set(st, KeyAnchor, prev.Anchor, next.Anchor)
	s.Set(st, KeySummarizedAt, prev.SummarizedAt, next.SummarizedAt)
	s.Set(st, KeyRealTokens, prev.RealTokens, next.RealTokens)
	s.Set(st, KeyLastEstimate, prev.LastEstimate, next.LastEstimate)
	s.Set(st, KeyCompactions, prev.Compactions, next.Compactions)
	s.Set(st, KeyIrreducibleFloor, prev.Floor, next.Floor)
	s.Set(st, KeyProviderRatio, prev.ProviderRatio, next.ProviderRatio)
	s.Set(st, KeySuspectRatio, prev.SuspectRatio, next.SuspectRatio)
	s.Set(st, KeyWindow, prev.Window, next.Window)
	s.Set(st, KeyCompactNext, prev.CompactNext, next.CompactNext)
	s.Set(st, KeyMaxOutput, prev.MaxOutput, next.MaxOutput)
	s.Set(st, KeyLastTokens, prev.Tokens, next.Tokens)
	s.Set(st, KeyThreshold, prev.Threshold, next.Threshold)
	s.Set(st, KeyCompactedAt, prev.CompactedAt, next.CompactedAt)
	s.Set(st, KeyCompactReason, prev.CompactReason, next.CompactReason)
	s.Set(st, KeyCompactRequest, prev.Request.Value(), next.Request.Value())
	s.Set(st, KeyPruneFrontier, prev.PruneFrontier, next.PruneFrontier)
	s.Set(st, KeyPrefixKept, prev.PrefixKept, next.PrefixKept)
	s.Set(st, KeyInvalidated, prev.Invalidated, next.Invalidated)
}
