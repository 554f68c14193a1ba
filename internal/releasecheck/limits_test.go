package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseLargeFiles(t *testing.T) {
	tests := []struct {
		name    string
		list    string
		want    map[string]string
		wantErr string
	}{
		{name: "an empty list lists nothing", list: "", want: map[string]string{}},
		{
			name: "comments and blank lines are skipped",
			list: "# path reason\n\n   \n# another\n",
			want: map[string]string{},
		},
		{
			name: "a path and its reason, after spaces or a tab",
			list: "testdata/big.bin   the fuzzer's seed corpus, read by FuzzX\ncore/model.json\tthe tokenizer's vocabulary\n",
			want: map[string]string{
				"testdata/big.bin": "the fuzzer's seed corpus, read by FuzzX",
				"core/model.json":  "the tokenizer's vocabulary",
			},
		},
		{
			name: "leading and trailing white space is trimmed",
			list: "  a.bin  why  \n",
			want: map[string]string{"a.bin": "why"},
		},
		{name: "a path without a reason is an error", list: "# ok\na.bin\n", wantErr: ".large-files:2: \"a.bin\" has no reason"},
		{name: "a path with only white space after it is an error", list: "a.bin \t \n", wantErr: "has no reason"},
		{name: "a path listed twice is an error", list: "a.bin one\na.bin two\n", wantErr: ".large-files:2: \"a.bin\" is listed twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseLargeFiles(strings.NewReader(tt.list))
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

func TestCheckTrackedFiles(t *testing.T) {
	const limit = 100
	tests := []struct {
		name   string
		sizes  map[string]int64
		listed map[string]string
		want   []string // a substring of each problem, in order
	}{
		{
			name:  "files up to the limit pass unlisted",
			sizes: map[string]int64{"a.go": 10, "b.txt": limit},
		},
		{
			name:  "a file over the limit and not listed fails",
			sizes: map[string]int64{"a.go": 10, "core/tool": limit + 1},
			want:  []string{"core/tool is 101 bytes, over 100, and .large-files does not list it"},
		},
		{
			name:   "a listed file over the limit passes",
			sizes:  map[string]int64{"data.bin": 5 * limit},
			listed: map[string]string{"data.bin": "the corpus"},
		},
		{
			name:   "an entry naming no tracked file fails",
			sizes:  map[string]int64{"a.go": 10},
			listed: map[string]string{"gone.bin": "was big"},
			want:   []string{".large-files lists gone.bin, which is not tracked"},
		},
		{
			name:   "an entry naming a file no longer over the limit fails",
			sizes:  map[string]int64{"small.bin": limit},
			listed: map[string]string{"small.bin": "was big"},
			want:   []string{".large-files lists small.bin, which is 100 bytes, not over 100"},
		},
		{
			name:  "every problem is reported, sorted",
			sizes: map[string]int64{"z.bin": 2 * limit, "a.bin": 3 * limit},
			want:  []string{"a.bin is 300 bytes", "z.bin is 200 bytes"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := checkTrackedFiles(tt.sizes, tt.listed, limit)
			require.Len(t, got, len(tt.want), "problems: %q", got)
			for i, w := range tt.want {
				assert.Contains(t, got[i], w)
			}
		})
	}
}

func TestCheckZipSize(t *testing.T) {
	tests := []struct {
		name     string
		zipBytes int64
		wantFail bool
	}{
		{name: "a small zip passes", zipBytes: 1_600_000},
		{name: "a zip at the limit passes", zipBytes: maxZipBytes},
		{name: "a zip one byte over the limit fails", zipBytes: maxZipBytes + 1, wantFail: true},
		{name: "core's zip with the tokenfit binary fails", zipBytes: 14_937_118, wantFail: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := checkZipSize("m@v1.0.0", tt.zipBytes, maxZipBytes)
			if !tt.wantFail {
				assert.Empty(t, got)
				return
			}
			assert.Contains(t, got, "the module zip of m@v1.0.0 is")
			assert.Contains(t, got, "over 5000000")
		})
	}
}

func TestCheckCacheGrowth(t *testing.T) {
	tests := []struct {
		name     string
		added    int64
		wantFail bool
	}{
		{name: "growth under the limit passes", added: 9_000_000},
		{name: "growth at the limit passes", added: maxConsumerCacheBytes},
		{name: "growth one byte over the limit fails", added: maxConsumerCacheBytes + 1, wantFail: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := checkCacheGrowth("ADK v1", tt.added, maxConsumerCacheBytes)
			if !tt.wantFail {
				assert.Empty(t, got)
				return
			}
			assert.Contains(t, got, "ADK v1")
			assert.Contains(t, got, "15000000")
		})
	}
}
