//go:build fitcorpus

package tokens

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// The fit corpus lives in the fit module (core/internal/tokenfit), which is
// never released, so this test needs a checkout of the repository and runs
// with -tags fitcorpus (make core-test passes it); a copy of core from the
// module cache builds without it.

// fitCorpus is the corpus directory, from this package's directory.
const fitCorpus = "../tokenfit/accuracy/testdata/corpus"

func TestFeaturesMatchReferenceCorpus(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(fitCorpus, "*.txt"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "the corpus in %s", fitCorpus)
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		text, name := string(data), filepath.Base(f)
		requireSameFeatures(t, text, name)
		// Cuts at arbitrary byte offsets split runs and UTF-8 sequences.
		for _, cut := range []int{1, 2, 3, 7, 64, 1000} {
			if cut < len(text) {
				requireSameFeatures(t, text[cut:], name, "from", cut)
				requireSameFeatures(t, text[:len(text)-cut], name, "minus", cut)
			}
		}
	}
}
