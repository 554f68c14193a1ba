// Package state is what the guard keeps per agent in a session's state: the
// keys, their encoding, and a reading that never fails a model call.
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

// Agent is what the guard keeps for one agent of a session. Anchor is the
// host's log position of the last covered content, or "". ProviderRatio is
// the provider's believed counts over the guard's estimates, per mille, and
// survives compaction; SuspectRatio is a jump from it awaiting the next
// report. Window, Tokens (calibrated), Threshold and MaxOutput (0: none) are
// the window, count, trigger and output limit of the request last let
// through, kept for hooks that do not see it. CompactNext is 1 when the next
// call compacts first whatever its count: a response near the window stopped
// at the output limit. CompactedAt (RFC 3339) and CompactReason describe the
// last compaction. PruneFrontier is the tool step the last request was pruned
// to (0: none). PrefixKept and Invalidated are the calibrated tokens of the
// request before the last that the last kept as its prefix and did not;
// CachedTokens is the provider's last cached-token count.
type Agent struct {
	Summary, UserRequest, Fingerprint, Anchor            string
	Watermark, SummarizedAt, RealTokens, LastEstimate    int
	Compactions, Floor, ProviderRatio, SuspectRatio      int
	Window, CompactNext, MaxOutput, Tokens, Threshold    int
	CompactedAt, CompactReason                           string
	Request                                              Request
	PruneFrontier, PrefixKept, Invalidated, CachedTokens int
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

// field is one count or string of Agent under its key; cold marks one that
// only LoadAll reads, as the hot path does not need it.
type field struct {
	key  string
	num  *int
	str  *string
	cold bool
}

// fields lists g's counts and strings in the order Save writes them.
func (g *Agent) fields() [22]field {
	return [...]field{{key: KeySummary, str: &g.Summary}, {key: KeyUserRequest, str: &g.UserRequest},
		{key: KeyFingerprint, str: &g.Fingerprint}, {key: KeyWatermark, num: &g.Watermark},
		{key: KeyAnchor, str: &g.Anchor}, {key: KeySummarizedAt, num: &g.SummarizedAt},
		{key: KeyRealTokens, num: &g.RealTokens}, {key: KeyLastEstimate, num: &g.LastEstimate},
		{key: KeyCompactions, num: &g.Compactions}, {key: KeyIrreducibleFloor, num: &g.Floor},
		{key: KeyProviderRatio, num: &g.ProviderRatio}, {key: KeySuspectRatio, num: &g.SuspectRatio},
		{key: KeyWindow, num: &g.Window}, {key: KeyCompactNext, num: &g.CompactNext},
		{key: KeyMaxOutput, num: &g.MaxOutput}, {key: KeyLastTokens, num: &g.Tokens, cold: true},
		{key: KeyThreshold, num: &g.Threshold}, {key: KeyCompactedAt, str: &g.CompactedAt, cold: true},
		{key: KeyCompactReason, str: &g.CompactReason, cold: true}, {key: KeyPruneFrontier, num: &g.PruneFrontier},
		{key: KeyPrefixKept, num: &g.PrefixKept}, {key: KeyInvalidated, num: &g.Invalidated}}
}

// Load decodes the agent's state. Wrong types and impossible values are
// logged and treated as absent; they never fail the call.
func (s IO) Load(st Reader) Agent { return s.load(st, false) }

// LoadAll is Load plus the fields the hot path does not read (it reads a
// requested compaction from a key it keeps at hand).
func (s IO) LoadAll(st Reader) Agent { return s.load(st, true) }

func (s IO) load(st Reader, all bool) Agent {
	var g Agent
	if st == nil {
		return g
	}
	for _, f := range g.fields() {
		switch {
		case f.cold && !all:
		case f.str != nil:
			*f.str = s.Str(st, f.key)
		default:
			*f.num = s.Num(st, f.key)
		}
	}
	if all {
		g.Request = s.RequestAt(st, s.Key(KeyCompactRequest))
		g.CachedTokens = s.Num(st, KeyCachedTokens)
	}
	return g
}

// get reads fullKey; a failed read is logged unless it says the key is
// missing, and reads as absent (nil).
func (s IO) get(st Reader, fullKey string) any {
	v, err := st.Get(fullKey)
	if err == nil {
		return v
	}
	if s.Missing == nil || !s.Missing(err) {
		s.Log.Warn("contextguard: reading session state failed; treating key as absent",
			"agent", s.Agent, "key", fullKey, "error", err)
	}
	return nil
}

// Str reads the agent's key as a string; another type reads as "".
func (s IO) Str(st Reader, key string) string {
	v := s.get(st, s.Key(key))
	str, ok := v.(string)
	if !ok && v != nil {
		s.wrongType(s.Key(key), v)
	}
	return str
}

// Num reads the agent's key as a count (DecodeInt); anything else reads as 0.
func (s IO) Num(st Reader, key string) int {
	v := s.get(st, s.Key(key))
	n, ok := DecodeInt(v)
	if !ok && v != nil {
		s.Log.Warn("contextguard: session state is not a valid count; ignoring it",
			"agent", s.Agent, "key", s.Key(key), "type", TypeName(v), "value", v)
	}
	return n
}

// RequestAt reads the request stored under fullKey. A focus over
// MaxFocusBytes, written by an application itself, is cut, not refused.
func (s IO) RequestAt(st Reader, fullKey string) Request {
	if st == nil {
		return Request{}
	}
	v := s.get(st, fullKey)
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
	switch v.(type) {
	case nil:
		return "nil"
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
	old := prev.fields()
	for i, f := range next.fields() {
		if f.str != nil {
			s.Set(st, f.key, *old[i].str, *f.str)
		} else {
			s.Set(st, f.key, *old[i].num, *f.num)
		}
	}
	s.Set(st, KeyCompactRequest, prev.Request.Value(), next.Request.Value())
}
