package main

import (
	"bytes"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Real tool output: the output of commands run at fit time (go, git, grep,
// the file system) stored as corpus files.

// realBase is the commit of this repository whose history, patches and
// blame the real-output corpus shows, so that re-running -real reproduces
// the git parts byte for byte.
const realBase = "0e51280"

// realSource is the placeholder written for the repository's directory, and
// realTmp for the scratch module's: the corpus must not hold machine paths.
const (
	realSource = "/src/contextguard"
	realTmp    = "/tmp/tokenfit"
)

// brokenModule is a small Go module with a compile error, vet findings, a
// failing test and a panicking one, for real toolchain output.
var brokenModule = map[string]string{
	"go.mod": "module example.com/broken\n\ngo 1.22\n",
	"store/store.go": `package store

import (
	"fmt"
)

// Store keeps items.
type Store struct{ items map[string]int }

func (s *Store) Add(name string, n int) error {
	fmt.Printf("adding %d\n", name)
	s.items[name] += n
	return nil
}

func (s *Store) Total() int {
	t := 0
	for _, v := range s.items {
		t += v
	}
	return t
}
`,
	"store/store_test.go": `package store

import "testing"

func TestTotal(t *testing.T) {
	s := &Store{items: map[string]int{"a": 1, "b": 2}}
	if got := s.Total(); got != 4 {
		t.Errorf("Total() = %d, want %d", got, 4)
	}
}

func TestAddNil(t *testing.T) {
	var s Store
	s.Add("x", 1)
}

func TestTable(t *testing.T) {
	for _, tc := range []struct{ name string; n, want int }{{"one", 1, 1}, {"two", 2, 3}, {"three", 3, 3}} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Store{items: map[string]int{}}
			s.Add(tc.name, tc.n)
			if s.Total() != tc.want {
				t.Fatalf("Total after Add(%q, %d) = %d, want %d", tc.name, tc.n, s.Total(), tc.want)
			}
		})
	}
}
`,
	"cmd/tool/main.go": `package main

import (
	"strings"
	"example.com/broken/store"
)

func main() {
	var s store.Store
	n := s.Count()
	var unused int
	fmt.Println(strings.Repeat("x", n))
}
`,
}

// writeRealCorpus runs real tools on real trees (this repository at
// realBase, a scratch module, the scratch directory itself) and writes their
// output as corpus files real_*.out.txt in data/corpus; dir is
// internal/tokens, two levels under core/.
func writeRealCorpus(dir, data string) {
	root, err := filepath.Abs(filepath.Join(dir, "..", ".."))
	if err != nil {
		log.Fatal(err)
	}
	tmp, err := os.MkdirTemp("", "tokenfit-real")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	mod := filepath.Join(tmp, "broken")
	for name, body := range brokenModule {
		p := filepath.Join(mod, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			log.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	// Fixed modification times, so that ls -la is stable.
	stamp := time.Date(2025, 3, 14, 9, 26, 53, 0, time.UTC)
	filepath.Walk(mod, func(p string, _ os.FileInfo, _ error) error { return os.Chtimes(p, stamp, stamp) })

	home, _ := os.UserHomeDir()
	goroot := strings.TrimSpace(run(root, "go", "env", "GOROOT"))
	gomodcache := strings.TrimSpace(run(root, "go", "env", "GOMODCACHE"))
	gocache := strings.TrimSpace(run(root, "go", "env", "GOCACHE"))
	clean := strings.NewReplacer(mod, realTmp+"/broken", tmp, realTmp, root, realSource,
		gomodcache, "/home/user/go/pkg/mod", gocache, "/home/user/.cache/go-build", goroot, "/usr/local/go", home, "/home/user")
	files := map[string][][]string{
		"real_go": {
			{mod, "go", "build", "./..."},
			{mod, "go", "vet", "./store"},
			{mod, "go", "test", "-count=1", "-vet=off", "./store"},
			{mod, "go", "test", "-count=1", "-vet=off", "-v", "-run", "TestTable", "./store"},
			{mod, "go", "build", "-gcflags=-m -m", "./store"},
			{root, "go", "doc", "-all", "./internal/tokens"},
			{root, "go", "mod", "graph"},
		},
		"real_git": {
			{root, "git", "log", "--stat", "-n", "40", realBase},
			{root, "git", "log", "-p", "-n", "6", realBase, "--", "internal/tokens", "README.md"},
			{root, "git", "blame", realBase, "--", "internal/tokens/estimator.go"},
			{root, "git", "diff", realBase + "~8", realBase, "--", "contextguard.go"},
			{root, "git", "log", "--oneline", "--graph", "--decorate=no", "-n", "80", realBase},
		},
		"real_fs": {
			{mod, "ls", "-la", ".", "store", "cmd/tool"},
			{root, "git", "ls-tree", "-r", "-l", realBase},
			{root, "find", ".", "-path", "./.git", "-prune", "-o", "-type", "f", "-print"},
			{root, "ls", "-la", "internal/tokens", "internal/tokenfit"},
			{root, "tree", "-a", "-I", ".git", "internal"},
		},
		"real_grep": {
			{root, "git", "grep", "-n", "func ", realBase, "--", "*.go"},
			{root, "grep", "-rn", "--include=*.go", "return nil", "."},
			{root, "grep", "-rn", "-i", "token", "README.md"},
		},
		"real_sys": {
			// Only processes started here: a shell with a few children.
			{tmp, "sh", "-c", "sleep 30 & a=$!; sleep 31 & b=$!; sleep 32 & c=$!; sleep 0.2; ps -o pid,ppid,user,stat,%cpu,%mem,rss,vsz,etime,args --forest --ppid $$ -p $$; ps -o pid,tty,time,cmd --ppid $$; kill $a $b $c"},
			{root, "df", "-h", "--output=fstype,size,used,avail,pcent"},
			{root, "df", "--output=fstype,itotal,iused,iavail,ipcent"},
			{root, "go", "version"},
		},
		"real_json": {
			{root, "go", "list", "-json", "./..."},
			{root, "go", "list", "-m", "-json", "all"},
			{mod, "go", "vet", "-json", "./store"},
			{mod, "go", "test", "-json", "-vet=off", "-count=1", "./store"},
		},
	}
	for kind, cmds := range files {
		var b bytes.Buffer
		for _, c := range cmds {
			fmt.Fprintf(&b, "$ %s\n", strings.Join(c[1:], " "))
			b.WriteString(clean.Replace(run(c[0], c[1], c[2:]...)))
			b.WriteString("\n")
		}
		if err := os.WriteFile(filepath.Join(data, "corpus", kind+".out.txt"), b.Bytes(), 0o644); err != nil {
			log.Fatal(err)
		}
	}
}

// run returns the combined output of a command; failures are output too.
func run(dir, name string, args ...string) string {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GIT_PAGER=cat", "LC_ALL=C", "TZ=UTC", "GOTOOLCHAIN=local")
	out, err := cmd.CombinedOutput()
	if err != nil && len(out) == 0 {
		return fmt.Sprintf("%s: %v\n", name, err)
	}
	return string(out)
}
