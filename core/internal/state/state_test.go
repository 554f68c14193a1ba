package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// mapState is a session state in memory; a key it does not hold reads as nil,
// as ADK's in-memory state reads it through its Missing error.
type mapState map[string]any

func (m mapState) Get(key string) (any, error) { return m[key], nil }

func (m mapState) Set(key string, value any) error {
	m[key] = value
	return nil
}

var errBroken = errors.New("broken store")

// brokenState fails every read and write.
type brokenState struct{}

func (brokenState) Get(string) (any, error) { return nil, errBroken }
func (brokenState) Set(string, any) error   { return errBroken }

func logTo(buf *bytes.Buffer) *slog.Logger { return slog.New(slog.NewTextHandler(buf, nil)) }

func TestDecodeInt(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want int
		ok   bool
	}{
		{"int", 42, 42, true},
		{"int64", int64(42), 42, true},
		{"float64 from a database", float64(42), 42, true},
		{"json.Number", json.Number("42"), 42, true},
		{"json.Number float form", json.Number("42.0"), 42, true},
		{"zero", 0, 0, true},
		{"negative", -1, 0, false},
		{"fraction", 1.5, 0, false},
		{"NaN", math.NaN(), 0, false},
		{"infinite", math.Inf(1), 0, false},
		{"huge", float64(1 << 50), 0, false},
		{"string", "42", 0, false},
		{"bad json.Number", json.Number("x"), 0, false},
		{"bool", true, 0, false},
		{"nil", nil, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := DecodeInt(tt.in)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestLoad_WrongTypesAreLoggedAndIgnored(t *testing.T) {
	var logs bytes.Buffer
	st := mapState{
		KeySummary + "a":      12,
		KeyWatermark + "a":    "seven",
		KeyRealTokens + "a":   -5,
		KeyLastEstimate + "a": float64(1000),
		KeyFingerprint + "a":  "abc",
	}
	g := IO{Agent: "a", Log: logTo(&logs)}.Load(st)
	assert.Empty(t, g.Summary)
	assert.Zero(t, g.Watermark)
	assert.Zero(t, g.RealTokens)
	assert.Equal(t, 1000, g.LastEstimate, "float64 from a JSON-backed service decodes")
	assert.Equal(t, "abc", g.Fingerprint)
	assert.Contains(t, logs.String(), "__context_guard_summary_a")
	assert.Contains(t, logs.String(), "__context_guard_contents_at_compaction_a")
	assert.Contains(t, logs.String(), "__context_guard_real_tokens_a")
}

// TestSave_LoadAllReadsBackWhatChanged: a saved state loads back field for
// field under the agent's keys, and a save that changes nothing writes nothing.
func TestSave_LoadAllReadsBackWhatChanged(t *testing.T) {
	next := Agent{Summary: "s", UserRequest: "u", Watermark: 1, Fingerprint: "f", Anchor: "an",
		SummarizedAt: 2, RealTokens: 3, LastEstimate: 4, Compactions: 5, Floor: 6, ProviderRatio: 7,
		SuspectRatio: 8, Window: 9, CompactNext: 1, MaxOutput: 10, Tokens: 11, Threshold: 12,
		CompactedAt: "2026-01-02T03:04:05Z", CompactReason: "tokens", Request: Request{Pending: true, Focus: "x"},
		PruneFrontier: 13, PrefixKept: 14, Invalidated: 15}
	tests := []struct {
		name       string
		prev, next Agent
		keys       int
	}{
		{"every field changed", Agent{}, next, 23},
		{"nothing changed", next, next, 0},
		{"one field changed", next, func() Agent { g := next; g.Compactions++; return g }(), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := mapState{}
			io := IO{Agent: "a", Log: slog.New(slog.DiscardHandler)}
			io.Save(st, tt.prev, tt.next)
			assert.Len(t, st, tt.keys)
			if tt.keys == 23 {
				assert.Equal(t, tt.next, io.LoadAll(st))
			}
			for k := range st {
				assert.True(t, strings.HasPrefix(k, KeyPrefix) && strings.HasSuffix(k, "_a"), k)
			}
		})
	}
}

func TestIO_BrokenStoreIsLoggedNotFailed(t *testing.T) {
	var logs bytes.Buffer
	io := IO{Agent: "a", Log: logTo(&logs)}
	assert.Equal(t, Agent{}, io.LoadAll(brokenState{}))
	io.Save(brokenState{}, Agent{}, Agent{Compactions: 1})
	assert.Contains(t, logs.String(), "reading session state failed")
	assert.Contains(t, logs.String(), "writing session state failed")

	logs.Reset()
	io.Missing = func(err error) bool { return errors.Is(err, errBroken) }
	io.Load(brokenState{})
	assert.Empty(t, logs.String(), "a missing key is not worth a warning")
}

// TestRequestAt_StateValues: what a request looks like in session state,
// read back, including values an application may write itself.
func TestRequestAt_StateValues(t *testing.T) {
	tests := []struct {
		name  string
		value any
		want  Request
		// cut marks a value that is not written back as it was read.
		cut bool
	}{
		{"true: requested without a focus", true, Request{Pending: true}, false},
		{"text: requested with that focus", "keep the ticket numbers", Request{Pending: true, Focus: "keep the ticket numbers"}, false},
		{"false: answered", false, Request{}, false},
		{"empty text: none", "", Request{}, false},
		{"nil: none", nil, Request{}, false},
		{"a number: wrong type, none", 1, Request{}, false},
		{"text too long: its beginning, the cut marked", strings.Repeat("é", MaxFocusBytes),
			Request{Pending: true, Focus: strings.Repeat("é", 978) + " [... 2044 more bytes of the focus omitted]"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := mapState{KeyCompactRequest + "a": tt.value}
			got := IO{Agent: "a", Log: slog.New(slog.DiscardHandler)}.RequestAt(st, KeyCompactRequest+"a")
			assert.Equal(t, tt.want, got)
			if tt.want.Pending && !tt.cut {
				assert.Equal(t, tt.value, got.Value(), "written back as it was read")
			}
		})
	}
	assert.Equal(t, Request{}, IO{}.RequestAt(nil, KeyCompactRequest), "a nil state holds no request")
}
