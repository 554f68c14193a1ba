// Command gen writes the generated part of the token corpus
// (internal/tokenfit/accuracy/testdata/corpus/*.gen.txt): JSON, YAML, tables, logs,
// tool schemas and base64. Its output is deterministic: a fixed seed drives a
// PCG generator, so re-running it reproduces the committed files byte for byte.
//
//	go run ./internal/tokenfit/gen [-out internal/tokenfit/accuracy/testdata/corpus]
package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

var words = strings.Fields(`the of and to in is that for it as with was on be by this are from at
or an have not which but all they their can has more one will about been would other were when
there what into some time only could these them than first may new also any after most where
user order account service request response error timeout retry cache server client session
payment invoice customer product price quantity shipping address status pending active failed
deleted created updated region cluster node pod container image volume network policy secret
config deployment replica backup snapshot queue message event stream topic partition offset
window context token model prompt summary history tool function argument result value field
schema table column index query filter limit page cursor total count average minimum maximum
latency throughput memory storage bucket object file directory path permission role group team
project release version build test coverage benchmark report metric alert dashboard trace span
quick brown lazy small large green blue red yellow purple orange silver golden ancient modern
river mountain forest ocean desert valley island harbor bridge castle garden market village
morning evening winter summer autumn spring weather journey letter story music painting`)

var names = strings.Fields(`alice bob carol dave erin frank grace heidi ivan judy mallory niaj olivia
peggy rupert sybil trent victor walter yara zoe maria jose chen wei yuki kenji priya arjun fatima omar`)

var cities = []string{"Berlin", "Madrid", "Tokyo", "São Paulo", "New York", "Nairobi", "Sydney",
	"Toronto", "Mumbai", "Paris", "Zürich", "Seoul", "Cairo", "Lima", "Oslo", "Kraków"}

type gen struct{ r *rand.Rand }

func (g *gen) word() string            { return words[g.r.IntN(len(words))] }
func (g *gen) name() string            { return names[g.r.IntN(len(names))] }
func (g *gen) pick(s ...string) string { return s[g.r.IntN(len(s))] }

func (g *gen) sentence(n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = g.word()
	}
	s := strings.Join(w, " ")
	return strings.ToUpper(s[:1]) + s[1:] + "."
}

func (g *gen) camel() string {
	n := 1 + g.r.IntN(3)
	var b strings.Builder
	for i := 0; i < n; i++ {
		w := g.word()
		if i > 0 {
			w = strings.ToUpper(w[:1]) + w[1:]
		}
		b.WriteString(w)
	}
	return b.String()
}

func (g *gen) snake() string {
	n := 1 + g.r.IntN(3)
	w := make([]string, n)
	for i := range w {
		w[i] = g.word()
	}
	return strings.Join(w, "_")
}

func (g *gen) uuid() string {
	b := make([]byte, 16)
	for i := range b {
		b[i] = byte(g.r.UintN(256))
	}
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

func (g *gen) hex(n int) string {
	b := make([]byte, n/2)
	for i := range b {
		b[i] = byte(g.r.UintN(256))
	}
	return fmt.Sprintf("%x", b)
}

func (g *gen) timestamp() string {
	return fmt.Sprintf("2025-%02d-%02dT%02d:%02d:%02d.%03dZ", 1+g.r.IntN(12), 1+g.r.IntN(28),
		g.r.IntN(24), g.r.IntN(60), g.r.IntN(60), g.r.IntN(1000))
}

func (g *gen) email() string {
	return g.name() + "." + g.word() + "@" + g.pick("example.com", "example.org", "mail.test", "corp.example")
}

func (g *gen) ip() string {
	return fmt.Sprintf("10.%d.%d.%d", g.r.IntN(256), g.r.IntN(256), g.r.IntN(256))
}

// record builds a nested value resembling an API payload or tool result.
func (g *gen) record(depth int) map[string]any {
	m := map[string]any{}
	n := 3 + g.r.IntN(6)
	for i := 0; i < n; i++ {
		var k string
		if g.r.IntN(2) == 0 {
			k = g.camel()
		} else {
			k = g.snake()
		}
		switch x := g.r.IntN(12); {
		case x < 2:
			m[k] = g.sentence(3 + g.r.IntN(12))
		case x < 3:
			m[k] = g.r.IntN(100000)
		case x < 4:
			m[k] = float64(g.r.IntN(1000000)) / 100
		case x < 5:
			m[k] = g.r.IntN(2) == 0
		case x < 6:
			m[k] = g.uuid()
		case x < 7:
			m[k] = g.timestamp()
		case x < 8:
			m[k] = g.email()
		case x < 9 && depth < 3:
			m[k] = g.record(depth + 1)
		case x < 10 && depth < 3:
			a := make([]any, 1+g.r.IntN(4))
			for j := range a {
				if g.r.IntN(2) == 0 {
					a[j] = g.record(depth + 1)
				} else {
					a[j] = g.word()
				}
			}
			m[k] = a
		case x < 11:
			m[k] = nil
		default:
			m[k] = g.pick(cities...)
		}
	}
	return m
}

func (g *gen) jsonPretty(w *bytes.Buffer, size int) {
	for w.Len() < size {
		b, _ := json.MarshalIndent(g.record(0), "", g.pick("  ", "  ", "    ", "\t"))
		w.Write(b)
		w.WriteString("\n\n")
	}
}

func (g *gen) jsonCompact(w *bytes.Buffer, size int) {
	for w.Len() < size {
		b, _ := json.Marshal(g.record(0))
		w.Write(b)
		w.WriteString("\n")
	}
}

func (g *gen) yaml(w *bytes.Buffer, size int) {
	for w.Len() < size {
		app := g.word() + "-" + g.word()
		switch g.r.IntN(2) {
		case 0:
			fmt.Fprintf(w, "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: %s\n  namespace: %s\n  labels:\n    app: %s\n    tier: %s\nspec:\n  replicas: %d\n  selector:\n    matchLabels:\n      app: %s\n  template:\n    metadata:\n      labels:\n        app: %s\n    spec:\n      containers:\n        - name: %s\n          image: registry.example.com/%s:%d.%d.%d\n          ports:\n            - containerPort: %d\n          resources:\n            limits:\n              cpu: %dm\n              memory: %dMi\n          env:\n",
				app, g.word(), app, g.pick("frontend", "backend", "cache"), 1+g.r.IntN(5), app, app, app, app,
				g.r.IntN(3), g.r.IntN(20), g.r.IntN(30), 8000+g.r.IntN(1000), 100*(1+g.r.IntN(20)), 64*(1+g.r.IntN(32)))
			for i := 0; i < 1+g.r.IntN(5); i++ {
				fmt.Fprintf(w, "            - name: %s\n              value: \"%s\"\n", strings.ToUpper(g.snake()), g.word())
			}
		default:
			fmt.Fprintf(w, "name: %s\non:\n  push:\n    branches: [main, release/*]\njobs:\n  %s:\n    runs-on: ubuntu-latest\n    steps:\n", g.sentence(2), g.word())
			for i := 0; i < 2+g.r.IntN(5); i++ {
				fmt.Fprintf(w, "      - name: %s\n        run: %s %s --%s=%d\n", g.sentence(3), g.pick("go test", "make", "npm run", "./scripts/ci.sh"), g.word(), g.word(), g.r.IntN(100))
			}
			fmt.Fprintf(w, "    timeout-minutes: %d\n    # %s\n", 10+g.r.IntN(50), g.sentence(6))
		}
		w.WriteString("---\n")
	}
}

func (g *gen) logs(w *bytes.Buffer, size int) {
	for w.Len() < size {
		ts := g.timestamp()
		switch g.r.IntN(5) {
		case 0:
			fmt.Fprintf(w, "time=%s level=%s msg=%q service=%s request_id=%s duration=%dms status=%s\n", ts,
				g.pick("INFO", "INFO", "WARN", "ERROR", "DEBUG"), g.sentence(3+g.r.IntN(6)), g.word(), g.uuid(), g.r.IntN(5000), g.pick("200", "201", "404", "500", "503"))
		case 1:
			fmt.Fprintf(w, "%s - - [%02d/Oct/2025:%02d:%02d:%02d +0000] \"%s /api/v%d/%s/%d?%s=%s HTTP/1.1\" %d %d \"-\" \"Mozilla/5.0 (X11; Linux x86_64) %s/%d.0\"\n",
				g.ip(), 1+g.r.IntN(28), g.r.IntN(24), g.r.IntN(60), g.r.IntN(60), g.pick("GET", "POST", "PUT", "DELETE"), 1+g.r.IntN(3), g.word(), g.r.IntN(100000),
				g.word(), g.word(), []int{200, 204, 301, 404, 500}[g.r.IntN(5)], g.r.IntN(50000), g.pick("Chrome", "Firefox"), 100+g.r.IntN(40))
		case 2:
			fmt.Fprintf(w, "%s %s[%d]: %s: %s (errno=%d)\n", ts[:19], g.word(), g.r.IntN(65535), g.pick("error", "warning", "notice"), g.sentence(4+g.r.IntN(8)), g.r.IntN(130))
		case 3:
			fmt.Fprintf(w, "%s ERROR %s failed: %s\npanic: runtime error: index out of range [%d] with length %d\n\ngoroutine %d [running]:\n", ts, g.camel(), g.sentence(5), g.r.IntN(10), g.r.IntN(10), g.r.IntN(500))
			for i := 0; i < 2+g.r.IntN(5); i++ {
				fmt.Fprintf(w, "example.com/%s/%s.(*%s).%s(0x%s, 0x%s)\n\t/home/build/src/%s/%s.go:%d +0x%x\n", g.word(), g.word(),
					upperFirst(g.camel()), upperFirst(g.camel()), g.hex(10), g.hex(4), g.word(), g.snake(), 10+g.r.IntN(900), g.r.IntN(4096))
			}
		default:
			fmt.Fprintf(w, "[%s] [%s] %s: %s user=%s ip=%s latency=%.3fs bytes=%d\n", ts, g.pick("worker-1", "worker-2", "scheduler"), g.pick("INFO", "WARN"),
				g.sentence(4+g.r.IntN(6)), g.email(), g.ip(), g.r.Float64()*3, g.r.IntN(1<<20))
		}
	}
}

func (g *gen) base64(w *bytes.Buffer, size int) {
	for w.Len() < size {
		raw := make([]byte, 100+g.r.IntN(3000))
		for i := range raw {
			raw[i] = byte(g.r.UintN(256))
		}
		enc := base64.StdEncoding.EncodeToString(raw)
		switch g.r.IntN(3) {
		case 0: // MIME-style wrapping at 76 columns
			for len(enc) > 76 {
				w.WriteString(enc[:76])
				w.WriteString("\n")
				enc = enc[76:]
			}
			w.WriteString(enc)
			w.WriteString("\n\n")
		case 1:
			fmt.Fprintf(w, "{\"mime_type\":\"application/octet-stream\",\"data\":\"%s\"}\n", enc)
		default:
			w.WriteString(enc)
			w.WriteString("\n")
		}
	}
}

func main() {
	out := flag.String("out", "internal/tokenfit/accuracy/testdata/corpus", "corpus directory")
	flag.Parse()
	type job struct {
		file string
		size int
		fn   func(*gen, *bytes.Buffer, int)
	}
	jobs := []job{
		{"json_pretty.gen.txt", 120_000, (*gen).jsonPretty},
		{"json_compact.gen.txt", 120_000, (*gen).jsonCompact},
		{"yaml.gen.txt", 120_000, (*gen).yaml},
		{"md_table.gen.txt", 120_000, (*gen).mdTable},
		{"text_table.gen.txt", 120_000, (*gen).textTable},
		{"logs.gen.txt", 120_000, (*gen).logs},
		{"tool_schema.gen.txt", 120_000, (*gen).schemas},
		{"base64.gen.txt", 100_000, (*gen).base64},
		{"ids.gen.txt", 90_000, (*gen).ids},
		{"logs.formats.gen.txt", 90_000, (*gen).logFormats},
		{"metrics.gen.txt", 90_000, (*gen).metrics},
		{"text_table.sql.gen.txt", 90_000, (*gen).sqlTables},
		{"text_table.describe.gen.txt", 70_000, (*gen).describe},
		{"dev_output.gen.txt", 90_000, (*gen).devOutput},
		{"cjk_data.gen.txt", 60_000, (*gen).cjkData},
		{"unusual.gen.txt", 80_000, (*gen).unusual},
		{"noise.gen.txt", 40_000, (*gen).noise},
	}
	for i, j := range jobs {
		g := &gen{r: rand.New(rand.NewPCG(20250101, uint64(i)))}
		var b bytes.Buffer
		j.fn(g, &b, j.size)
		if err := os.WriteFile(filepath.Join(*out, j.file), b.Bytes(), 0o644); err != nil {
			log.Fatal(err)
		}
	}
}

func upperFirst(s string) string { return strings.ToUpper(s[:1]) + s[1:] }
