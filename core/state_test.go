package core

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
