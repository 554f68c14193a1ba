package core

import (
	"encoding/json"
	"log/slog"
	"math"
)

// Session state: the keys the guard keeps per agent, and their reading and
// writing (ARCHITECTURE.md, Session state).

// Session-state keys. The first five are the earlier guard's names, so its
// sessions carry over; the agent name is appended to each.
const (
	stateKeyPrefix       = "__context_guard_"
	keySummary           = stateKeyPrefix + "summary_"
	keyWatermark         = stateKeyPrefix + "contents_at_compaction_"
	keySummarizedAt      = stateKeyPrefix + "summarized_at_"
	keyRealTokens        = stateKeyPrefix + "real_tokens_"
	keyLastEstimate      = stateKeyPrefix + "last_heuristic_"
	keyFingerprint       = stateKeyPrefix + "fingerprint_"
	keyUserRequest       = stateKeyPrefix + "user_request_"
	keyCompactions       = stateKeyPrefix + "compactions_"
	keyIrreducibleFloor  = stateKeyPrefix + "irreducible_floor_"
	keyProviderRatio     = stateKeyPrefix + "provider_ratio_"
	keySuspectRatio      = stateKeyPrefix + "suspect_ratio_"
	keyWindow            = stateKeyPrefix + "window_"
	keyCompactNext       = stateKeyPrefix + "compact_next_"
	keyMaxOutput         = stateKeyPrefix + "max_output_"
	keyAnchor            = stateKeyPrefix + "anchor_"
	todosKey             = "todos"
	maxPlausibleTokenNum = 1 << 40 // anything above is treated as corrupt
)

// Session-state keys of Usage (usage.go), compaction on request
// (compaction_request.go) and pruning, per agent like the keys above.
const (
	keyLastTokens     = stateKeyPrefix + "last_tokens_"
	keyThreshold      = stateKeyPrefix + "threshold_"
	keyCompactedAt    = stateKeyPrefix + "last_compaction_at_"
	keyCompactReason  = stateKeyPrefix + "last_compaction_reason_"
	keyCompactRequest = stateKeyPrefix + "compact_request_"
	keyPrefixKept     = stateKeyPrefix + "prefix_kept_"
	keyInvalidated    = stateKeyPrefix + "invalidated_"
	keyCachedTokens   = stateKeyPrefix + "cached_tokens_"
	// keyPruneFrontier is kept because the frontier advances only when a
	// pass frees enough (pruning.go), in this process or another.
	keyPruneFrontier = stateKeyPrefix + "prune_frontier_"
)

// TodoItem is one entry of the agent's todo list (session key "todos"),
// carried into every summary so the agent can restore it after compaction.
type TodoItem struct {
	Content    string `json:"content"`
	Status     string `json:"status"`
	ActiveForm string `json:"active_form"`
}

// guardState is the per-agent state the guard keeps in the ADK session.
type guardState struct {
	summary     string
	userRequest string
	watermark   int
	fingerprint string
	// anchor is the host's log position of the last covered content
	// (Coverage.Anchor; ARCHITECTURE.md, Summary injection), or "".
	anchor       string
	summarizedAt int
	realTokens   int
	lastEstimate int
	compactions  int
	floor        int
	// providerRatio is the ratio of the provider's believed counts to the
	// guard's estimates, per mille (calibration.go); it survives compaction.
	providerRatio int
	// suspectRatio is a report's ratio that jumped from providerRatio and
	// waits for the next report to confirm it, per mille.
	suspectRatio int
	// window is the context window the last request was judged against.
	window int
	// compactNext is 1 when the next call compacts first, whatever its
	// count: a response near the window stopped at the output limit.
	compactNext int
	// maxOutput is the MaxOutputTokens of the request last let through (0:
	// none), for afterModel, which does not see the request (output_limit.go).
	maxOutput int
	// tokens is the calibrated count of the request last let through, and
	// threshold the trigger it was judged against (usage.go).
	tokens    int
	threshold int
	// compactedAt (RFC 3339) and compactReason describe the last applied
	// compaction (usage.go); the hot path does not read them (loadAll).
	compactedAt   string
	compactReason string
	// request is a compaction asked for with RequestCompaction, answered by
	// the next call (compaction_request.go).
	request compactionRequest
	// pruneFrontier is the tool step the request last let through was
	// pruned to (pruning.go), 0 for none.
	pruneFrontier int
	// prefixKept and invalidated are the calibrated tokens of the request
	// before the last one that the last one kept as its prefix and did not.
	prefixKept   int
	invalidated  int
	cachedTokens int // the provider's last cached-token count
}

// stateIO reads and writes one agent's keys of a session state.
type stateIO struct {
	agent   string
	missing func(error) bool // Host.MissingKey; nil: no error says a key is missing
	log     *slog.Logger
	keys    map[string]string // stateKeysFor; nil to build them on each use
}

// key is the full name of the agent's key k.
func (s stateIO) key(k string) string {
	if full, ok := s.keys[k]; ok {
		return full
	}
	return k + s.agent
}

// load decodes the agent's state. Wrong types and impossible values are
// logged and treated as absent; they never fail the call.
func (s stateIO) load(st StateReader) guardState {
	var g guardState
	if st == nil {
		return g
	}
	g.summary = s.str(st, keySummary)
	g.userRequest = s.str(st, keyUserRequest)
	g.fingerprint = s.str(st, keyFingerprint)
	g.watermark = s.num(st, keyWatermark)
	g.anchor = s.str(st, keyAnchor)
	g.summarizedAt = s.num(st, keySummarizedAt)
	g.realTokens = s.num(st, keyRealTokens)
	g.lastEstimate = s.num(st, keyLastEstimate)
	g.compactions = s.num(st, keyCompactions)
	g.floor = s.num(st, keyIrreducibleFloor)
	g.providerRatio = s.num(st, keyProviderRatio)
	g.suspectRatio = s.num(st, keySuspectRatio)
	g.window = s.num(st, keyWindow)
	g.compactNext = s.num(st, keyCompactNext)
	g.maxOutput = s.num(st, keyMaxOutput)
	g.threshold = s.num(st, keyThreshold)
	g.pruneFrontier = s.num(st, keyPruneFrontier)
	g.prefixKept = s.num(st, keyPrefixKept)
	g.invalidated = s.num(st, keyInvalidated)
	return g
}

// loadAll is load plus the keys the hot path does not read (it reads a
// requested compaction from its precomputed key, agentMemory).
func (s stateIO) loadAll(st StateReader) guardState {
	g := s.load(st)
	if st == nil {
		return g
	}
	g.tokens = s.num(st, keyLastTokens)
	g.compactedAt = s.str(st, keyCompactedAt)
	g.compactReason = s.str(st, keyCompactReason)
	g.request = s.requestAt(st, s.key(keyCompactRequest))
	g.cachedTokens = s.num(st, keyCachedTokens)
	return g
}

// missingKey reports whether err, from a state read, says the key does
// not exist (Host.MissingKey).
func (s stateIO) missingKey(err error) bool {
	return s.missing != nil && s.missing(err)
}

func (s stateIO) get(st StateReader, key string) (any, bool) {
	v, err := st.Get(s.key(key))
	if err != nil {
		if !s.missingKey(err) {
			s.log.Warn("contextguard: reading session state failed; treating key as absent",
				"agent", s.agent, "key", s.key(key), "error", err)
		}
		return nil, false
	}
	return v, v != nil
}

func (s stateIO) str(st StateReader, key string) string {
	v, ok := s.get(st, key)
	if !ok {
		return ""
	}
	str, isStr := v.(string)
	if !isStr {
		s.log.Warn("contextguard: session state has the wrong type; ignoring it",
			"agent", s.agent, "key", s.key(key), "type", typeName(v))
		return ""
	}
	return str
}

func (s stateIO) num(st StateReader, key string) int {
	v, ok := s.get(st, key)
	if !ok {
		return 0
	}
	n, ok := decodeInt(v)
	if !ok {
		s.log.Warn("contextguard: session state is not a valid count; ignoring it",
			"agent", s.agent, "key", s.key(key), "type", typeName(v), "value", v)
		return 0
	}
	return n
}

// decodeInt accepts the number types session services return (int and int64
// in memory, float64 from JSON-backed databases, json.Number) and rejects
// negative, fractional, non-finite and absurdly large values.
func decodeInt(v any) (int, bool) {
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
		// Float64 is exact up to 2^53, far above maxPlausibleTokenNum.
		var err error
		if f, err = n.Float64(); err != nil {
			return 0, false
		}
	default:
		return 0, false
	}
	if math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || f > maxPlausibleTokenNum || f != math.Trunc(f) {
		return 0, false
	}
	return int(f), true
}

func typeName(v any) string {
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

// set writes one key when its value changed, so a call that changes nothing
// adds nothing to the event's state delta.
func (s stateIO) set(st State, key string, old, val any) {
	if old == val {
		return
	}
	if err := st.Set(s.key(key), val); err != nil {
		s.log.Warn("contextguard: writing session state failed", "agent", s.agent, "key", s.key(key), "error", err)
	}
}

// save writes every field of next that differs from prev.
func (s stateIO) save(st State, prev, next guardState) {
	if st == nil {
		return
	}
	s.set(st, keySummary, prev.summary, next.summary)
	s.set(st, keyUserRequest, prev.userRequest, next.userRequest)
	s.set(st, keyFingerprint, prev.fingerprint, next.fingerprint)
	s.set(st, keyWatermark, prev.watermark, next.watermark)
	s.set(st, keyAnchor, prev.anchor, next.anchor)
	s.set(st, keySummarizedAt, prev.summarizedAt, next.summarizedAt)
	s.set(st, keyRealTokens, prev.realTokens, next.realTokens)
	s.set(st, keyLastEstimate, prev.lastEstimate, next.lastEstimate)
	s.set(st, keyCompactions, prev.compactions, next.compactions)
	s.set(st, keyIrreducibleFloor, prev.floor, next.floor)
	s.set(st, keyProviderRatio, prev.providerRatio, next.providerRatio)
	s.set(st, keySuspectRatio, prev.suspectRatio, next.suspectRatio)
	s.set(st, keyWindow, prev.window, next.window)
	s.set(st, keyCompactNext, prev.compactNext, next.compactNext)
	s.set(st, keyMaxOutput, prev.maxOutput, next.maxOutput)
	s.set(st, keyLastTokens, prev.tokens, next.tokens)
	s.set(st, keyThreshold, prev.threshold, next.threshold)
	s.set(st, keyCompactedAt, prev.compactedAt, next.compactedAt)
	s.set(st, keyCompactReason, prev.compactReason, next.compactReason)
	s.set(st, keyCompactRequest, prev.request.value(), next.request.value())
	s.set(st, keyPruneFrontier, prev.pruneFrontier, next.pruneFrontier)
	s.set(st, keyPrefixKept, prev.prefixKept, next.prefixKept)
	s.set(st, keyInvalidated, prev.invalidated, next.invalidated)
}

// loadTodos reads the todo list, accepting []TodoItem and the []any of maps a
// JSON-backed session service returns. Malformed entries are skipped.
func loadTodos(st StateReader) []TodoItem {
	if st == nil {
		return nil
	}
	v, err := st.Get(todosKey)
	if err != nil || v == nil {
		return nil
	}
	switch t := v.(type) {
	case []TodoItem:
		return t
	case []*TodoItem:
		out := make([]TodoItem, 0, len(t))
		for _, it := range t {
			if it != nil {
				out = append(out, *it)
			}
		}
		return out
	case []any:
		out := make([]TodoItem, 0, len(t))
		for _, it := range t {
			switch m := it.(type) {
			case map[string]any:
				item := TodoItem{}
				item.Content, _ = m["content"].(string)
				item.Status, _ = m["status"].(string)
				item.ActiveForm, _ = m["active_form"].(string)
				if item.Content != "" {
					out = append(out, item)
				}
			case TodoItem:
				out = append(out, m)
			}
		}
		return out
	}
	return nil
}
