package core

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
			got, ok := decodeInt(tt.in)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestStateLoad_WrongTypesAreLoggedAndIgnored(t *testing.T) {
	logs := &logBuffer{}
	ctx := newFakeCtx("a")
	ctx.set(keySummary, 12)
	ctx.set(keyWatermark, "seven")
	ctx.set(keyRealTokens, -5)
	ctx.set(keyLastEstimate, float64(1000))
	ctx.set(keyFingerprint, "abc")

	st := stateIO{agent: "a", log: logs.logger()}.load(ctx.State())
	assert.Empty(t, st.summary)
	assert.Zero(t, st.watermark)
	assert.Zero(t, st.realTokens)
	assert.Equal(t, 1000, st.lastEstimate, "float64 from a JSON-backed service decodes")
	assert.Equal(t, "abc", st.fingerprint)
	out := logs.String()
	assert.Contains(t, out, "__context_guard_summary_a")
	assert.Contains(t, out, "__context_guard_contents_at_compaction_a")
	assert.Contains(t, out, "__context_guard_real_tokens_a")
}

func TestLoadTodos(t *testing.T) {
	typed := []TodoItem{{Content: "a", Status: "pending", ActiveForm: "doing a"}}
	var decoded []any
	require.NoError(t, json.Unmarshal([]byte(`[{"content":"a","status":"pending","active_form":"doing a"},{"status":"x"},7]`), &decoded))
	tests := []struct {
		name string
		val  any
		want []TodoItem
	}{
		{"absent", nil, nil},
		{"typed", typed, typed},
		{"decoded JSON", decoded, typed},
		{"wrong type", "todo", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newMapState()
			if tt.val != nil {
				_ = st.Set(todosKey, tt.val)
			}
			assert.Equal(t, tt.want, loadTodos(st))
		})
	}
}
