package main

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode"
)

// The size limits of a release (RELEASING.md). A megabyte is 10^6 bytes
// here, as in the sizes the README and the issue tracker quote.
const (
	// maxCoreZipBytes is the largest zip of core a release may ship: every
	// user of either plugin downloads it, so it holds the engine and its
	// fast tests, while the estimator's fit corpus, golden files and fit
	// program live in a module that is never released
	// (core/internal/tokenfit).
	maxCoreZipBytes = 1_000_000
	// maxZipBytes is the largest zip of a plugin a release may ship: a user
	// downloads one of them, and today's are a fraction of this, so
	// crossing it means something large slipped in.
	maxZipBytes = 5_000_000
	// maxConsumerCacheBytes is the most that installing a plugin and its
	// test kit (go get, go mod tidy) may add to the module cache of a fresh
	// consumer, after its ADK app filled an empty one: the plugin, core
	// and every dependency ADK does not already bring, downloaded and
	// extracted. ADK's own dependencies (hundreds of megabytes) are the
	// user's already and not contextguard's to shrink.
	maxConsumerCacheBytes = 15_000_000
	// maxTrackedBytes is the largest file the repository may track without
	// a line in largeFilesList saying why: a larger one is most likely a
	// build output or a data set that belongs elsewhere.
	maxTrackedBytes = 1_000_000
)

// largeFilesList is the checked-in list, at the repository's root, of the
// tracked files allowed over maxTrackedBytes: one per line, its path (from
// the repository's root, with slashes, without white space) and, after
// white space, the reason.
// Blank lines and lines starting with '#' are ignored. The file may be
// missing, which lists nothing.
const largeFilesList = ".large-files"

// parseLargeFiles reads a largeFilesList and returns each listed path's
// reason. A line without a reason, or a path listed twice, is an error.
func parseLargeFiles(r io.Reader) (map[string]string, error) {
	listed := make(map[string]string)
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		path, reason := line, ""
		if i := strings.IndexFunc(line, unicode.IsSpace); i >= 0 {
			path, reason = line[:i], strings.TrimSpace(line[i:])
		}
		if reason == "" {
			return nil, fmt.Errorf("%s:%d: %q has no reason (want: path, white space, reason)", largeFilesList, n, path)
		}
		if _, dup := listed[path]; dup {
			return nil, fmt.Errorf("%s:%d: %q is listed twice", largeFilesList, n, path)
		}
		listed[path] = reason
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", largeFilesList, err)
	}
	return listed, nil
}

// checkTrackedFiles returns a problem for each tracked file (path to size)
// over limit bytes that listed does not name, and for each listed path that
// is no tracked file over the limit (an entry left behind), sorted.
func checkTrackedFiles(sizes map[string]int64, listed map[string]string, limit int64) []string {
	var problems []string
	for path, size := range sizes {
		if size > limit {
			if _, ok := listed[path]; !ok {
				problems = append(problems, fmt.Sprintf("%s is %d bytes, over %d, and %s does not list it with a reason", path, size, limit, largeFilesList))
			}
		}
	}
	for path := range listed {
		size, tracked := sizes[path]
		switch {
		case !tracked:
			problems = append(problems, fmt.Sprintf("%s lists %s, which is not tracked: remove the line", largeFilesList, path))
		case size <= limit:
			problems = append(problems, fmt.Sprintf("%s lists %s, which is %d bytes, not over %d: remove the line", largeFilesList, path, size, limit))
		}
	}
	sort.Strings(problems)
	return problems
}

// checkZipSize returns a problem when a module zip is over limit bytes, or "".
func checkZipSize(mod string, zipBytes, limit int64) string {
	if zipBytes <= limit {
		return ""
	}
	return fmt.Sprintf("the module zip of %s is %d bytes, over %d: is a build output or a data set tracked in it?", mod, zipBytes, limit)
}

// checkCacheGrowth returns a problem when a consumer of line added more
// than limit bytes to an empty module cache, or "".
func checkCacheGrowth(line string, added, limit int64) string {
	if added <= limit {
		return ""
	}
	return fmt.Sprintf("a fresh consumer of %s added %d bytes to an empty module cache, over %d: which dependency grew?", line, added, limit)
}
