package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseLsTree(t *testing.T) {
	tests := []struct {
		name    string
		out     string
		want    map[string]int64
		wantErr string
	}{
		{
			name: "blobs with their padded sizes",
			out: "100644 blob 1111111111111111111111111111111111111111     120\tgo.mod\x00" +
				"100755 blob 2222222222222222222222222222222222222222 31561782\tcore/internal/tokenfit/tokenfit\x00",
			want: map[string]int64{"go.mod": 120, "core/internal/tokenfit/tokenfit": 31561782},
		},
		{
			name: "paths with spaces and tabs are kept whole",
			out:  "100644 blob 1111111111111111111111111111111111111111 7\tdocs/a b\tc.md\x00",
			want: map[string]int64{"docs/a b\tc.md": 7},
		},
		{
			name: "submodules are skipped",
			out: "160000 commit 3333333333333333333333333333333333333333       -\tvendor/sub\x00" +
				"120000 blob 4444444444444444444444444444444444444444      22\tlink\x00",
			want: map[string]int64{"link": 22},
		},
		{name: "no entry is an error", out: "", wantErr: "no tracked file"},
		{name: "an entry without a path is an error", out: "100644 blob 1111 7\x00", wantErr: "unexpected entry"},
		{name: "a size that is no number is an error", out: "100644 blob 1111 seven\ta\x00", wantErr: "size of a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseLsTree([]byte(tt.out))
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}
