package main

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// gitTimeout bounds one git command: they read one commit of a repository
// of a few megabytes, which takes well under a second.
const gitTimeout = 2 * time.Minute

// git runs git with args in repo and returns its standard output.
func git(ctx context.Context, repo string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir, cmd.WaitDelay = repo, waitDelay
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// commit is the revision a rehearsal releases.
type commit struct {
	hash string
	time time.Time
}

// resolveCommit returns rev's commit hash and committer time.
func resolveCommit(ctx context.Context, repo, rev string) (commit, error) {
	out, err := git(ctx, repo, "show", "-s", "--format=%H %cI", rev+"^{commit}")
	if err != nil {
		return commit{}, err
	}
	hash, when, ok := strings.Cut(strings.TrimSpace(string(out)), " ")
	if !ok {
		return commit{}, fmt.Errorf("git show %s: unexpected output %q", rev, out)
	}
	t, err := time.Parse(time.RFC3339, when)
	if err != nil {
		return commit{}, fmt.Errorf("git show %s: commit time: %w", rev, err)
	}
	return commit{hash: hash, time: t.UTC()}, nil
}

// archive returns rev's tree as git archive writes it: what a module proxy
// zips for a tag, without untracked or ignored files of the working tree.
func archive(ctx context.Context, repo, rev string) (*zip.Reader, error) {
	out, err := git(ctx, repo, "-c", "core.autocrlf=input", "-c", "core.eol=lf", "archive", "--format=zip", rev)
	if err != nil {
		return nil, err
	}
	z, err := zip.NewReader(bytes.NewReader(out), int64(len(out)))
	if err != nil {
		return nil, fmt.Errorf("reading git archive of %s: %w", rev, err)
	}
	return z, nil
}

// trackedSizes returns the size of every file rev tracks, by path.
func trackedSizes(ctx context.Context, repo, rev string) (map[string]int64, error) {
	out, err := git(ctx, repo, "ls-tree", "-r", "-l", "-z", rev)
	if err != nil {
		return nil, err
	}
	return parseLsTree(out)
}

// parseLsTree parses `git ls-tree -r -l -z`: NUL-terminated entries of
// "<mode> <type> <object> <size>\t<path>". Entries other than blobs
// (submodules) are skipped.
func parseLsTree(out []byte) (map[string]int64, error) {
	sizes := make(map[string]int64)
	for _, entry := range strings.Split(string(out), "\x00") {
		if entry == "" {
			continue
		}
		meta, path, ok := strings.Cut(entry, "\t")
		fields := strings.Fields(meta)
		if !ok || len(fields) != 4 {
			return nil, fmt.Errorf("git ls-tree: unexpected entry %q", entry)
		}
		if fields[1] != "blob" {
			continue
		}
		size, err := strconv.ParseInt(fields[3], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("git ls-tree: size of %s: %w", path, err)
		}
		sizes[path] = size
	}
	if len(sizes) == 0 {
		return nil, errors.New("git ls-tree: no tracked file")
	}
	return sizes, nil
}
