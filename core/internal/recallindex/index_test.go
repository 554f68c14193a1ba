package recallindex

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPassageEnd(t *testing.T) {
	line := strings.Repeat("x", 29) + "\n" // 30 bytes
	whole := (PassageBytes + len(line) - 1) / len(line) * len(line)
	for _, tc := range []struct {
		name string
		in   string
		want int
	}{
		{"short text: whole", "one line", 8},
		{"whole lines until PassageBytes", strings.Repeat(line, 10), whole},
		{"a blank line ends a paragraph", line + "\nnext", 30},
		{"a line past the bound is cut at a space", strings.Repeat("word ", 400), MaxPassageBytes},
		{"a long line after short ones starts the next passage", line + strings.Repeat("y", 2000), 30},
	} {
		assert.Equal(t, tc.want, PassageEnd(tc.in), tc.name)
	}
}

func TestCutEnd_KeepsWordsAndRunes(t *testing.T) {
	s := strings.Repeat("wörd ", 600)
	for len(s) > 0 {
		n := CutEnd(s, MaxPassageBytes)
		require.Positive(t, n)
		require.LessOrEqual(t, n, MaxPassageBytes)
		assert.True(t, n == len(s) || utf8.RuneStart(s[n]))
		s = s[n:]
	}
	assert.Equal(t, 5, CutEnd("abcdefgh", 5), "no space: cut at the limit")
}

func TestSearch_RanksThePassageHoldingTheWordsTogether(t *testing.T) {
	x := New()
	// A long text that mentions the words far apart, and a short one
	// holding them in one line.
	scattered := "connection pool opened\n" + strings.Repeat("request served in 3 ms\n", 60) + "database migrated\n" + strings.Repeat("request served in 4 ms\n", 60) + "refused nothing\n"
	x.Add(scattered)
	x.Add("startup\nconnection refused by the database\nretrying")
	hits, total := x.Search(terms("connection refused database"), 5)
	require.Equal(t, 2, total)
	assert.Equal(t, 1, hits[0].Text, "the passage holding the words together ranks first")
}

func TestSearch_RanksThePassageHoldingEveryWordFirst(t *testing.T) {
	x := New()
	// Short texts holding all the query's words but one, and a longer line
	// holding every one of them.
	for _, region := range []string{"north", "south", "central"} {
		x.Add("deploy staging cluster " + region)
	}
	for i := range 3 {
		x.Add(fmt.Sprintf("eu west metrics %d ok", i))
	}
	x.Add("deploy payments to the staging cluster eu west after the canary")
	hits, _ := x.Search(terms("deploy staging cluster west"), 5)
	require.NotEmpty(t, hits)
	assert.Equal(t, x.Len()-1, hits[0].Text, "the passage holding every word ranks first")
}

func TestSearch_OneHitPerText(t *testing.T) {
	x := New()
	x.Add(strings.Repeat("the cache missed again\n", 100)) // many passages
	x.Add("the cache was warm")
	hits, total := x.Search(terms("cache"), 10)
	assert.Equal(t, 2, total)
	require.Len(t, hits, 2)
	assert.NotEqual(t, hits[0].Text, hits[1].Text)
	for _, h := range hits {
		if h.Text == 0 {
			assert.Positive(t, h.Second, "the text's next best passage")
			assert.NotEqual(t, h.Passage, h.Second)
		} else {
			assert.Equal(t, -1, h.Second, "a text of one passage has no next best")
		}
	}
	_, total = x.Search(terms("kubernetes"), 5)
	assert.Zero(t, total, "a word no passage holds matches nothing")
}

func TestSearch_ScratchIsClearedBetweenSearches(t *testing.T) {
	x := New()
	x.Add("alpha beta")
	x.Add("gamma")
	first, _ := x.Search(terms("alpha"), 5)
	again, _ := x.Search(terms("alpha"), 5)
	assert.Equal(t, first, again, "a search leaves no score behind")
	hits, _ := x.Search(terms("gamma"), 5)
	require.Len(t, hits, 1)
	assert.Equal(t, 1, hits[0].Text)
}

func TestTopHits_KeepsTheBestKInOrder(t *testing.T) {
	scores := []float64{0.5, 3, 1, 3, 0.1, 2}
	hit := func(i int) Hit { return Hit{Passage: i, Second: -1, Text: i, Score: scores[i]} }
	top := topHits([]int{0, 1, 2, 3, 4, 5}, hit, 3)
	assert.Equal(t, []Hit{{1, -1, 1, 3}, {3, -1, 3, 3}, {5, -1, 5, 2}}, top, "ties keep the earlier passage first")
	assert.Len(t, topHits([]int{0, 1, 2, 3, 4, 5}, hit, 10), 6)
}
