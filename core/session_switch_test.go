package core

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSessionSwitch_StateValues: only true switches the guard off; other
// values leave it on, and one of the wrong type is logged.
func TestSessionSwitch_StateValues(t *testing.T) {
	tests := []struct {
		name   string
		value  any
		off    bool
		logged bool
	}{
		{"true", true, true, false},
		{"false", false, false, false},
		{"nil", nil, false, false},
		{"text", "true", false, true},
		{"number", 1, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs := &logBuffer{}
			st := newMapState()
			require.NoError(t, st.Set(StateKeyDisabled, tt.value))
			assert.Equal(t, tt.off, sessionDisabled(st, logs.logger()))
			assert.Equal(t, tt.logged, strings.Contains(logs.String(), StateKeyDisabled))
		})
	}
	assert.False(t, sessionDisabled(nil, quietLog), "no state: on")
}
