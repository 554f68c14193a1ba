package main

// Generators for more varied structured text: identifiers and numbers in
// many formats, logs of several formats, metrics, SQL result tables, kubectl
// describe output and developer tool output. They exist so that the fit does
// not learn the quirks of one generator (how its ids, numbers and timestamps
// happen to look).

import (
	"bytes"
	"fmt"
	"strings"
)

var hosts = []string{"web-01", "web-02", "db-primary", "db-replica-3", "cache7", "edge-fra-2", "worker-a1b2",
	"ip-172-31-20-5", "node17.dc2.internal", "lb-east", "ci-runner-42", "mq-node-0"}

var apps = []string{"sshd", "kernel", "systemd", "cron", "nginx", "postfix/smtpd", "dockerd", "containerd",
	"kubelet", "haproxy", "redis-server", "postgres", "api", "billing-worker", "scheduler"}

var msgs = []string{"accepted publickey for deploy from", "connection reset by peer", "started session",
	"out of memory: killed process", "upstream timed out while reading response header",
	"checkpoint complete", "slow log entry", "lease renewed", "failed password for invalid user",
	"synchronized to time server", "pulling image", "liveness probe failed", "job finished",
	"rotating log file", "listening on port", "certificate expires soon", "evicting pod",
	"replication lag above threshold", "garbage collection took", "retrying in"}

var months = []string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}
var days = []string{"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"}

// ident returns an identifier in one of many shapes.
func (g *gen) ident() string {
	const lowerAlnum = "abcdefghijklmnopqrstuvwxyz0123456789"
	const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
	const mixed = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	rnd := func(alpha string, n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alpha[g.r.IntN(len(alpha))]
		}
		return string(b)
	}
	switch g.r.IntN(16) {
	case 0:
		return g.uuid()
	case 1:
		return strings.ToUpper(g.uuid())
	case 2:
		return g.hex(2 * (2 + g.r.IntN(20))) // 4–42 hex digits
	case 3:
		return g.hex(8)[:7] // short git hash
	case 4:
		return rnd(crockford, 26) // ULID
	case 5:
		return fmt.Sprint(g.r.Int64N(1 << (10 + g.r.IntN(50))))
	case 6:
		return g.pick("ord", "usr", "cus", "inv", "txn", "req", "evt", "sess", "sku", "job") + "_" + rnd(mixed, 8+g.r.IntN(16))
	case 7:
		return rnd(lowerAlnum, 3+g.r.IntN(10))
	case 8:
		return fmt.Sprintf("%s-%d", strings.ToUpper(g.pick("ABC", "OPS", "PAY", "INC", "JIRA", "SRE")), 1+g.r.IntN(9999))
	case 9:
		return fmt.Sprintf("%02x:%02x:%02x:%02x:%02x:%02x", g.r.IntN(256), g.r.IntN(256), g.r.IntN(256), g.r.IntN(256), g.r.IntN(256), g.r.IntN(256))
	case 10:
		return fmt.Sprintf("v%d.%d.%d", g.r.IntN(4), g.r.IntN(30), g.r.IntN(200))
	case 11:
		return "sha256:" + g.hex(64)
	case 12:
		return fmt.Sprintf("%d.%d.%d.%d", 1+g.r.IntN(254), g.r.IntN(256), g.r.IntN(256), 1+g.r.IntN(254))
	case 13:
		return fmt.Sprintf("%x", g.r.Uint32N(1<<(4+g.r.IntN(28))))
	case 14:
		return fmt.Sprintf("%s%d", g.pick("id", "n", "x", "node", "shard", "p"), g.r.IntN(100000))
	default:
		return rnd(mixed, 6+g.r.IntN(30))
	}
}

// number returns a number in one of many formats.
func (g *gen) number() string {
	switch g.r.IntN(10) {
	case 0:
		return fmt.Sprint(g.r.IntN(10))
	case 1:
		return fmt.Sprint(g.r.IntN(1000))
	case 2:
		return fmt.Sprint(g.r.Int64N(1 << (g.r.IntN(62) + 1)))
	case 3:
		return fmt.Sprintf("%.*f", g.r.IntN(6), g.r.Float64()*float64(int(1)<<g.r.IntN(20)))
	case 4:
		return fmt.Sprintf("%g", g.r.NormFloat64()*1e3)
	case 5:
		return fmt.Sprintf("%.3e", g.r.ExpFloat64()*1e-3)
	case 6:
		return fmt.Sprintf("-%d", g.r.IntN(100000))
	case 7:
		return fmt.Sprintf("%d%%", g.r.IntN(101))
	case 8:
		return fmt.Sprintf("%d%s", g.r.IntN(4096), g.pick("ms", "s", "Mi", "Gi", "KB", "MB", "m", "ns", "µs", "B"))
	default:
		n := g.r.Int64N(100000000)
		s := fmt.Sprint(n)
		var b strings.Builder
		for i, c := range s {
			if i > 0 && (len(s)-i)%3 == 0 {
				b.WriteByte(',')
			}
			b.WriteRune(c)
		}
		return b.String()
	}
}

// when returns a timestamp in one of many formats.
func (g *gen) when() string {
	y, mo, d := 2019+g.r.IntN(7), 1+g.r.IntN(12), 1+g.r.IntN(28)
	h, mi, s := g.r.IntN(24), g.r.IntN(60), g.r.IntN(60)
	switch g.r.IntN(10) {
	case 0:
		return fmt.Sprintf("%d-%02d-%02dT%02d:%02d:%02dZ", y, mo, d, h, mi, s)
	case 1:
		return fmt.Sprintf("%d-%02d-%02dT%02d:%02d:%02d.%06d+02:00", y, mo, d, h, mi, s, g.r.IntN(1000000))
	case 2:
		return fmt.Sprintf("%d-%02d-%02d %02d:%02d:%02d", y, mo, d, h, mi, s)
	case 3:
		return fmt.Sprint(1500000000 + g.r.IntN(300000000))
	case 4:
		return fmt.Sprint(1500000000000 + g.r.Int64N(300000000000))
	case 5:
		return fmt.Sprintf("%s %2d %02d:%02d:%02d", months[mo-1], d, h, mi, s)
	case 6:
		return fmt.Sprintf("%02d/%s/%d:%02d:%02d:%02d +0000", d, months[mo-1], y, h, mi, s)
	case 7:
		return fmt.Sprintf("%s, %02d %s %d %02d:%02d:%02d GMT", days[g.r.IntN(7)], d, months[mo-1], y, h, mi, s)
	case 8:
		return fmt.Sprintf("%d/%02d/%02d %02d:%02d", y, mo, d, h, mi)
	default:
		return fmt.Sprintf("%02d%02d %02d:%02d:%02d.%06d", mo, d, h, mi, s, g.r.IntN(1000000))
	}
}

// ids writes key=value and key: value lines of identifiers, numbers and
// timestamps, in several layouts.
func (g *gen) ids(w *bytes.Buffer, size int) {
	for w.Len() < size {
		n := 3 + g.r.IntN(8)
		switch g.r.IntN(4) {
		case 0: // logfmt-ish
			for i := 0; i < n; i++ {
				if i > 0 {
					w.WriteByte(' ')
				}
				fmt.Fprintf(w, "%s=%s", g.snake(), g.pick(g.ident(), g.number(), g.when(), g.word()))
			}
		case 1: // space-separated values
			for i := 0; i < n; i++ {
				if i > 0 {
					w.WriteString(g.pick(" ", "  ", "\t", ", "))
				}
				w.WriteString(g.pick(g.ident(), g.number(), g.ident()))
			}
		case 2: // key: value block
			for i := 0; i < n; i++ {
				fmt.Fprintf(w, "%s: %s\n", g.pick(g.camel(), upperFirst(g.word())+" "+upperFirst(g.word()), g.snake()), g.pick(g.ident(), g.number(), g.when()))
			}
		default: // CSV
			for i := 0; i < n; i++ {
				if i > 0 {
					w.WriteByte(',')
				}
				w.WriteString(g.pick(g.ident(), g.number(), g.when(), `"`+g.word()+" "+g.word()+`"`))
			}
		}
		w.WriteByte('\n')
	}
}

func (g *gen) level() string {
	return g.pick("INFO", "INFO", "info", "WARN", "warning", "ERROR", "error", "DEBUG", "debug", "notice", "crit")
}

// logFormats writes log lines in JSON, syslog (RFC 3164 and 5424), klog,
// nginx/Apache access-log, Python, Java and logfmt formats.
func (g *gen) logFormats(w *bytes.Buffer, size int) {
	for w.Len() < size {
		msg := g.pick(msgs...)
		switch g.r.IntN(8) {
		case 0:
			fmt.Fprintf(w, `{"ts":%q,"level":%q,"logger":"%s.%s","msg":%q,"request_id":%q,"latency_ms":%s,"user_id":%d}`+"\n",
				g.when(), strings.ToLower(g.level()), g.word(), g.word(), msg, g.ident(), g.number(), g.r.IntN(1000000))
		case 1:
			fmt.Fprintf(w, "%s %s %s[%d]: %s %s port %d\n", g.when(), g.pick(hosts...), g.pick(apps...), 100+g.r.IntN(60000), msg, g.ip(), 1024+g.r.IntN(64000))
		case 2:
			fmt.Fprintf(w, "<%d>1 %s %s %s %d %s - %s\n", g.r.IntN(192), g.when(), g.pick(hosts...), g.pick(apps...), g.r.IntN(99999), strings.ToUpper(g.word()), msg)
		case 3:
			fmt.Fprintf(w, "%c%s %7d %s.go:%d] %s %q %s=%s\n", "IWEF"[g.r.IntN(4)], g.when(), 1+g.r.IntN(99999), g.word(), 1+g.r.IntN(2000), upperFirst(msg), g.pick(hosts...)+"/"+g.ident(), g.word(), g.number())
		case 4:
			fmt.Fprintf(w, "%s - %s [%s] \"%s /%s/%s?%s=%s HTTP/%s\" %d %d \"%s\" \"%s\"\n", g.ip(), g.pick("-", g.name()), g.when(),
				g.pick("GET", "POST", "PUT", "DELETE", "HEAD"), g.word(), g.ident(), g.word(), g.number(), g.pick("1.1", "2.0"),
				[]int{200, 200, 301, 304, 404, 500, 502}[g.r.IntN(7)], g.r.IntN(200000), g.pick("-", "https://example.com/"+g.word()),
				g.pick("Mozilla/5.0 (X11; Linux x86_64)", "curl/8.5.0", "Go-http-client/2.0", "kube-probe/1.29"))
		case 5:
			fmt.Fprintf(w, "%s,%03d %s [%s] %s.%s: %s (%s)\n", g.when(), g.r.IntN(1000), g.level(), g.pick("MainThread", "worker-3", "asyncio"), g.word(), g.word(), upperFirst(msg), g.ident())
		case 6:
			fmt.Fprintf(w, "%s %s [%s-%d] c.e.%s.%sService - %s after %s ms\n", g.when(), g.level(), g.pick("http-nio", "pool", "main"), g.r.IntN(64), g.word(), upperFirst(g.word()), upperFirst(msg), g.number())
			if g.r.IntN(6) == 0 {
				fmt.Fprintf(w, "java.lang.IllegalStateException: %s\n", msg)
				for k := 0; k < 2+g.r.IntN(5); k++ {
					fmt.Fprintf(w, "\tat com.example.%s.%s.%s(%s.java:%d)\n", g.word(), upperFirst(g.camel()), g.camel(), upperFirst(g.word()), 10+g.r.IntN(900))
				}
			}
		default:
			fmt.Fprintf(w, "time=%s level=%s component=%s msg=%q duration=%s id=%s\n", g.when(), strings.ToLower(g.level()), g.pick(apps...), msg, g.number(), g.ident())
		}
	}
}

// metrics writes Prometheus exposition text.
func (g *gen) metrics(w *bytes.Buffer, size int) {
	for w.Len() < size {
		name := g.pick("node", "process", "go", "http", "grpc", "app", "db", "queue") + "_" + g.snake() + g.pick("_total", "_seconds", "_bytes", "", "_count", "_sum", "_bucket", "_ratio")
		typ := g.pick("counter", "gauge", "histogram", "summary")
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n", name, g.sentence(3+g.r.IntN(8)), name, typ)
		for k := 0; k < 1+g.r.IntN(8); k++ {
			w.WriteString(name)
			if g.r.IntN(5) > 0 {
				w.WriteByte('{')
				for l := 0; l < 1+g.r.IntN(4); l++ {
					if l > 0 {
						w.WriteByte(',')
					}
					fmt.Fprintf(w, "%s=%q", g.pick("instance", "job", "le", "quantile", "method", "code", "pod", "device", "cpu", "mode"),
						g.pick(g.ident(), g.word(), g.number(), g.pick(hosts...)+":9100"))
				}
				w.WriteByte('}')
			}
			fmt.Fprintf(w, " %s", g.pick(g.number(), fmt.Sprintf("%.6g", g.r.ExpFloat64()*1e4), "+Inf", fmt.Sprint(g.r.IntN(10))))
			if g.r.IntN(3) == 0 {
				fmt.Fprintf(w, " %d", 1600000000000+g.r.Int64N(200000000000))
			}
			w.WriteByte('\n')
		}
	}
}

// describe writes kubectl-describe-like aligned key/value blocks.
func (g *gen) describe(w *bytes.Buffer, size int) {
	for w.Len() < size {
		fmt.Fprintf(w, "Name:         %s-%s\nNamespace:    %s\n", g.word(), g.ident(), g.word())
		for k := 0; k < 3+g.r.IntN(8); k++ {
			key := upperFirst(g.word()) + ":"
			fmt.Fprintf(w, "%-14s%s\n", key, g.pick(g.ident(), g.number(), g.when(), g.word()+"="+g.ident(), "<none>"))
		}
		fmt.Fprintf(w, "Conditions:\n  Type%sStatus  LastTransitionTime\n", strings.Repeat(" ", 14))
		for k := 0; k < 2+g.r.IntN(3); k++ {
			fmt.Fprintf(w, "  %-17s %-7s %s\n", upperFirst(g.camel()), g.pick("True", "False", "Unknown"), g.when())
		}
		w.WriteString("Events:\n  Type     Reason   Age   From     Message\n  ----     ------   ----  ----     -------\n")
		for k := 0; k < 1+g.r.IntN(5); k++ {
			fmt.Fprintf(w, "  %-8s %-8s %-5s %-8s %s %s\n", g.pick("Normal", "Warning"), upperFirst(g.word()), fmt.Sprintf("%d%s", 1+g.r.IntN(59), g.pick("s", "m", "h", "d")),
				g.pick("kubelet", "default-scheduler", "controller"), upperFirst(g.pick(msgs...)), g.ident())
		}
		w.WriteByte('\n')
	}
}

// devOutput writes grep, go test, pytest, compiler, git log and diff output.
func (g *gen) devOutput(w *bytes.Buffer, size int) {
	path := func() string {
		return g.pick("src", "internal", "pkg", "cmd", "lib", "app", "tests") + "/" + g.word() + "/" + g.snake() + g.pick(".go", ".py", ".ts", ".rs", "_test.go", ".java", ".c")
	}
	for w.Len() < size {
		switch g.r.IntN(6) {
		case 0:
			for k := 0; k < 3+g.r.IntN(10); k++ {
				fmt.Fprintf(w, "%s:%d:%s%s\n", path(), 1+g.r.IntN(3000), g.pick("", "\t", "    ", "\t\t"), g.pick(
					"if err != nil { return "+g.camel()+"(err) }",
					g.camel()+" := "+g.camel()+"("+g.snake()+", "+g.number()+")",
					"// "+g.sentence(4+g.r.IntN(8)),
					"def "+g.snake()+"(self, "+g.snake()+"="+g.number()+"):",
					"const "+strings.ToUpper(g.snake())+" = "+g.number()+";"))
			}
		case 1:
			for k := 0; k < 3+g.r.IntN(10); k++ {
				name := "Test" + upperFirst(g.camel())
				fmt.Fprintf(w, "=== RUN   %s\n", name)
				if g.r.IntN(5) == 0 {
					fmt.Fprintf(w, "    %s:%d: expected %s, got %s\n--- FAIL: %s (%.2fs)\n", path(), g.r.IntN(500), g.number(), g.number(), name, g.r.Float64()*3)
				} else {
					fmt.Fprintf(w, "--- PASS: %s (%.2fs)\n", name, g.r.Float64()/2)
				}
			}
			fmt.Fprintf(w, "ok  \tgithub.com/%s/%s\t%.3fs\n", g.name(), g.word(), g.r.Float64()*20)
		case 2:
			for k := 0; k < 3+g.r.IntN(10); k++ {
				fmt.Fprintf(w, "%s::%s::test_%s %s [%3d%%]\n", path(), upperFirst(g.camel()), g.snake(), g.pick("PASSED", "PASSED", "FAILED", "SKIPPED"), g.r.IntN(101))
			}
			fmt.Fprintf(w, "========== %d passed, %d failed in %.2fs ==========\n", g.r.IntN(300), g.r.IntN(5), g.r.Float64()*60)
		case 3:
			for k := 0; k < 1+g.r.IntN(5); k++ {
				fmt.Fprintf(w, "%s:%d:%d: %s: %s '%s'\n", path(), 1+g.r.IntN(2000), 1+g.r.IntN(80), g.pick("error", "warning", "note"), g.sentence(3+g.r.IntN(5)), g.camel())
			}
		case 4:
			for k := 0; k < 1+g.r.IntN(4); k++ {
				fmt.Fprintf(w, "commit %s\nAuthor: %s <%s>\nDate:   %s\n\n    %s\n\n", g.hex(40), upperFirst(g.name()), g.email(), g.when(), g.sentence(4+g.r.IntN(8)))
			}
		default:
			fmt.Fprintf(w, "diff --git a/%[1]s b/%[1]s\nindex %[2]s..%[3]s 100644\n--- a/%[1]s\n+++ b/%[1]s\n@@ -%[4]d,%[5]d +%[6]d,%[7]d @@\n", path(), g.hex(8)[:7], g.hex(8)[:7], g.r.IntN(500), 3+g.r.IntN(9), g.r.IntN(500), 3+g.r.IntN(9))
			for k := 0; k < 3+g.r.IntN(8); k++ {
				fmt.Fprintf(w, "%s\t%s := %s(%s)\n", g.pick(" ", "+", "-"), g.camel(), g.camel(), g.number())
			}
		}
		w.WriteByte('\n')
	}
}
