package core

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCompactionRequest_StateValues: what a request looks like in session
// state, read back, including values an application may write itself.
func TestCompactionRequest_StateValues(t *testing.T) {
	tests := []struct {
		name  string
		value any
		want  compactionRequest
		// cut marks a value that is not written back as it was read.
		cut bool
	}{
		{"true: requested without a focus", true, compactionRequest{pending: true}, false},
		{"text: requested with that focus", "keep the ticket numbers", compactionRequest{pending: true, focus: "keep the ticket numbers"}, false},
		{"false: answered", false, compactionRequest{}, false},
		{"empty text: none", "", compactionRequest{}, false},
		{"nil: none", nil, compactionRequest{}, false},
		{"a number: wrong type, none", 1, compactionRequest{}, false},
		{"text too long: its beginning, the cut marked", strings.Repeat("é", MaxFocusBytes),
			compactionRequest{pending: true, focus: strings.Repeat("é", 978) + " [... 2044 more bytes of the focus omitted]"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := newMapState()
			require.NoError(t, st.Set(keyCompactRequest+"a", tt.value))
			got := stateIO{agent: "a", log: quietLog}.requestAt(st, keyCompactRequest+"a")
			assert.Equal(t, tt.want, got)
			if tt.want.pending && !tt.cut {
				assert.Equal(t, tt.value, got.value(), "written back as it was read")
			}
		})
	}
	var _ State = newMapState()
}
