package core

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"google.golang.org/genai"
)

func TestFingerprint_StableAcrossRebuildsAndNumberTypes(t *testing.T) {
	a := callMsg("get", map[string]any{"n": 5, "b": map[string]any{"x": []any{1, "y"}}, "a": true})
	b := callMsg("get", map[string]any{"a": true, "b": map[string]any{"x": []any{float64(1), "y"}}, "n": float64(5)})
	assert.Equal(t, fingerprint(a), fingerprint(b))
	assert.NotEqual(t, fingerprint(a), fingerprint(callMsg("get", map[string]any{"n": 6})))
	assert.NotEqual(t, fingerprint(userMsg("x")), fingerprint(modelMsg("x")))
	assert.NotPanics(t, func() { fingerprint(nil); fingerprint(&genai.Content{Parts: []*genai.Part{nil}}) })
}
