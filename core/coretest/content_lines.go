package coretest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
)

// Line generators: the lines of real tool output (kubectl, logs, Go,
// Prometheus, SQL, grep, go test), prose and JSON documents.

func kubectlLine(r *rand.Rand, _ int, b *strings.Builder) {
	restarts := "0"
	if r.IntN(4) == 0 {
		restarts = fmt.Sprintf("%d (%s ago)", 1+r.IntN(40), age(r))
	}
	ready := "1/1"
	if r.IntN(5) == 0 {
		ready = "0/1"
	}
	fmt.Fprintf(b, "%-43s %-7s %-18s %-15s %-7s %-13s %-33s <none>           <none>\n",
		podName(r), ready, pick(r, statuses), restarts, age(r), ip(r), pick(r, nodes))
}

func describeLine(r *rand.Rand, i int, b *strings.Builder) {
	name := podName(r)
	fmt.Fprintf(b, "Name:             %s\nNamespace:        %s\nPriority:         0\nService Account:  %s\nNode:             %s/%s\n",
		name, pick(r, namespaces), pick(r, services), pick(r, nodes), ip(r))
	fmt.Fprintf(b, "Start Time:       Sat, 01 Jun 2024 %02d:%02d:%02d +0000\nLabels:           app=%s\n                  pod-template-hash=%s\nStatus:           %s\nIP:               %s\n",
		r.IntN(24), r.IntN(60), r.IntN(60), pick(r, services), hexID(r, 9), pick(r, statuses), ip(r))
	fmt.Fprintf(b, "Containers:\n  app:\n    Container ID:   containerd://%s\n    Image:          gcr.io/prod/%s:v%d.%d.%d\n    Port:           %d/TCP\n    State:          Running\n      Started:      Sat, 01 Jun 2024 %02d:%02d:%02d +0000\n    Restart Count:  %d\n    Limits:\n      cpu:     %dm\n      memory:  %dMi\n    Requests:\n      cpu:        %dm\n      memory:     %dMi\n",
		hexID(r, 64), pick(r, services), r.IntN(3), r.IntN(20), r.IntN(10), 8000+r.IntN(100), r.IntN(24), r.IntN(60), r.IntN(60), r.IntN(30), 250*(1+r.IntN(8)), 128*(1+r.IntN(16)), 100*(1+r.IntN(5)), 64*(1+r.IntN(8)))
	b.WriteString("Conditions:\n  Type              Status\n  Initialized       True\n  Ready             True\n  ContainersReady   True\n  PodScheduled      True\nEvents:\n  Type     Reason     Age                  From               Message\n  ----     ------     ----                 ----               -------\n")
	for j := 0; j < 2+r.IntN(4); j++ {
		reason := pick(r, []string{"Scheduled", "Pulled", "Created", "Started", "BackOff", "Unhealthy", "Killing"})
		typ := "Normal"
		if reason == "BackOff" || reason == "Unhealthy" {
			typ = "Warning"
		}
		fmt.Fprintf(b, "  %-8s %-10s %-20s %-18s %s\n", typ, reason, age(r)+" (x"+fmt.Sprint(1+r.IntN(9))+" over "+age(r)+")", "kubelet", pick(r, logMsgs))
	}
	b.WriteString("\n\n")
}

func yamlLine(r *rand.Rand, _ int, b *strings.Builder) {
	svc := pick(r, services)
	fmt.Fprintf(b, "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: %s\n  namespace: %s\n  labels:\n    app: %s\n    team: %s\nspec:\n  replicas: %d\n  selector:\n    matchLabels:\n      app: %s\n  template:\n    spec:\n      containers:\n        - name: %s\n          image: gcr.io/prod/%s:v%d.%d.%d\n          ports:\n            - containerPort: %d\n          env:\n            - name: LOG_LEVEL\n              value: %q\n            - name: DB_POOL_SIZE\n              value: \"%d\"\n          resources:\n            limits:\n              cpu: %dm\n              memory: %dMi\n",
		svc, pick(r, namespaces), svc, strings.TrimPrefix(pick(r, owners), "@"), 1+r.IntN(12), svc, svc, svc, r.IntN(3), r.IntN(20), r.IntN(10), 8000+r.IntN(100), strings.ToLower(pick(r, levels)), 5+r.IntN(50), 250*(1+r.IntN(8)), 128*(1+r.IntN(16)))
}

func mdLine(r *rand.Rand, _ int, b *strings.Builder) {
	fmt.Fprintf(b, "| %s | %s | %s | %d | %d | %.2f%% | %s |\n", pick(r, services), pick(r, regions), pick(r, statuses), 5+r.IntN(120), 100+r.IntN(4000), r.Float64()*5, pick(r, owners))
}

func logLine(r *rand.Rand, i int, b *strings.Builder) {
	fmt.Fprintf(b, "%s %-5s [%s] %s method=%s path=%s/%d status=%d duration_ms=%d trace_id=%s pod=%s\n",
		timestamp(r, i), pick(r, levels), pick(r, services), pick(r, logMsgs), pick(r, methods), pick(r, httpPaths), r.IntN(100000),
		pick(r, []int{200, 200, 200, 201, 204, 400, 404, 500, 503}), r.IntN(2500), hexID(r, 32), podName(r))
}

func goLine(r *rand.Rand, i int, b *strings.Builder) {
	noun, verb := pick(r, goNouns), pick(r, goVerbs)
	fn := verb + noun + fmt.Sprint(i)
	fmt.Fprintf(b, "// %s %ss the %s identified by req.ID and records the outcome.\nfunc (s *Server) %s(ctx context.Context, req *%sRequest) (*%sResponse, error) {\n", fn, strings.ToLower(verb), strings.ToLower(noun), fn, noun, noun)
	fmt.Fprintf(b, "\tif req == nil || req.ID == \"\" {\n\t\treturn nil, fmt.Errorf(\"%s: missing id\")\n\t}\n", strings.ToLower(fn))
	fmt.Fprintf(b, "\tctx, cancel := context.WithTimeout(ctx, %d*time.Millisecond)\n\tdefer cancel()\n", 100*(1+r.IntN(50)))
	fmt.Fprintf(b, "\titems, err := s.store.%s%ss(ctx, req.ID, %d)\n\tif err != nil {\n\t\treturn nil, fmt.Errorf(\"%s %s: %%w\", err)\n\t}\n", verb, noun, 10+r.IntN(500), strings.ToLower(verb), strings.ToLower(noun))
	fmt.Fprintf(b, "\tout := &%sResponse{Items: make([]*%s, 0, len(items))}\n\tfor _, it := range items {\n\t\tif it.Deleted || it.UpdatedAt.Before(req.Since) {\n\t\t\tcontinue\n\t\t}\n\t\tout.Items = append(out.Items, it)\n\t}\n\ts.metrics.Observe(%q, float64(len(out.Items)))\n\treturn out, nil\n}\n\n", noun, noun, strings.ToLower(fn))
}

func promLine(r *rand.Rand, i int, b *strings.Builder) {
	metric := pick(r, []string{"http_requests_total", "http_request_duration_seconds_bucket", "container_memory_working_set_bytes", "container_cpu_usage_seconds_total", "kube_pod_container_status_restarts_total", "pg_stat_activity_count"})
	if i%20 == 0 {
		fmt.Fprintf(b, "# HELP %s Auto-generated series.\n# TYPE %s counter\n", metric, metric)
	}
	fmt.Fprintf(b, "%s{namespace=%q,pod=%q,method=%q,code=\"%d\",le=\"%.3f\"} %.4g %d\n", metric, pick(r, namespaces), podName(r), pick(r, methods), pick(r, []int{200, 404, 500}), math.Pow(2, float64(r.IntN(12)))/1000, r.Float64()*1e6, 1717243200000+int64(i)*15000)
}

func sqlLine(r *rand.Rand, i int, b *strings.Builder) {
	fmt.Fprintf(b, " %5d | %-26s | 2024-%02d-%02d %02d:%02d:%02d | %-9s | %12d | %s\n", 10000+i, fmt.Sprintf("%s.%s@example.com", pick(r, wordsEN), alnumID(r, 4)), 1+r.IntN(12), 1+r.IntN(28), r.IntN(24), r.IntN(60), r.IntN(60), pick(r, []string{"paid", "pending", "refunded", "failed"}), r.IntN(500000), pick(r, regions))
}

func grepLine(r *rand.Rand, _ int, b *strings.Builder) {
	noun := pick(r, goNouns)
	fmt.Fprintf(b, "%s:%d:\t%s\n", pick(r, files), 1+r.IntN(900), pick(r, []string{
		fmt.Sprintf("if err := s.validate%s(ctx, req); err != nil {", noun),
		fmt.Sprintf("return nil, fmt.Errorf(\"load %s: %%w\", err)", strings.ToLower(noun)),
		fmt.Sprintf("// TODO(%s): handle %s timeouts", strings.TrimPrefix(pick(r, owners), "@"), strings.ToLower(noun)),
		fmt.Sprintf("%sTimeout = %d * time.Second", strings.ToLower(noun), 1+r.IntN(60)),
		fmt.Sprintf("func (s *Server) %s%s(ctx context.Context) error {", pick(r, goVerbs), noun),
	}))
}

func testLine(r *rand.Rand, i int, b *strings.Builder) {
	name := fmt.Sprintf("Test%s%s_%d", pick(r, goVerbs), pick(r, goNouns), i)
	fmt.Fprintf(b, "=== RUN   %s\n", name)
	if r.IntN(8) == 0 {
		fmt.Fprintf(b, "    %s_test.go:%d: got %d items, want %d\n--- FAIL: %s (%.2fs)\n", strings.ToLower(pick(r, goNouns)), 10+r.IntN(300), r.IntN(50), r.IntN(50), name, r.Float64())
		return
	}
	fmt.Fprintf(b, "--- PASS: %s (%.2fs)\n", name, r.Float64()/4)
}

func sentence(r *rand.Rand, words []string, b *strings.Builder) {
	n := 8 + r.IntN(14)
	for j := 0; j < n; j++ {
		w := pick(r, words)
		if j == 0 {
			w = strings.ToUpper(w[:1]) + w[1:]
		} else {
			b.WriteByte(' ')
		}
		b.WriteString(w)
		if j > 2 && j < n-2 && r.IntN(9) == 0 {
			b.WriteByte(',')
		}
	}
	b.WriteString(". ")
}

func prose(r *rand.Rand, size int, words []string) string {
	var b strings.Builder
	b.Grow(size + 256)
	for i := 1; b.Len() < size; i++ {
		sentence(r, words, &b)
		if i%(4+r.IntN(3)) == 0 {
			b.WriteString("\n\n")
		}
	}
	return cut(b.String(), size)
}

func proseZH(r *rand.Rand, size int) string {
	var b strings.Builder
	b.Grow(size + 64)
	for i := 1; b.Len() < size; i++ {
		n := 8 + r.IntN(24)
		for j := 0; j < n; j++ {
			b.WriteRune(pick(r, hanChars))
			if j > 3 && j < n-3 && r.IntN(8) == 0 {
				b.WriteRune(pick(r, hanPunct))
			}
		}
		b.WriteString("。")
		if i%5 == 0 {
			b.WriteString("\n\n")
		}
	}
	return cut(b.String(), size)
}

func jsonItem(r *rand.Rand, i int) map[string]any {
	svc := pick(r, services)
	return map[string]any{
		"id":        fmt.Sprintf("%s-%s", svc, hexID(r, 8)),
		"index":     i,
		"name":      podName(r),
		"namespace": pick(r, namespaces),
		"status":    map[string]any{"phase": pick(r, statuses), "ready": r.IntN(3) > 0, "restarts": r.IntN(20), "podIP": ip(r)},
		"labels":    map[string]any{"app": svc, "team": strings.TrimPrefix(pick(r, owners), "@"), "version": fmt.Sprintf("v%d.%d.%d", r.IntN(3), r.IntN(20), r.IntN(10))},
		"metrics":   []any{r.IntN(1000), math.Round(r.Float64()*10000) / 100, r.IntN(100000)},
		"createdAt": timestamp(r, i),
		"message":   pick(r, logMsgs),
	}
}

func marshalNoEscape(v any, indent bool) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if indent {
		enc.SetIndent("  ", "  ")
	}
	_ = enc.Encode(v) // maps of strings and numbers always encode
	return strings.TrimSuffix(buf.String(), "\n")
}

// jsonDoc builds a JSON array of API objects of exactly size bytes when size
// allows it, padding with a final {"note": ...} object.
func jsonDoc(r *rand.Rand, size int, pretty bool) string {
	open, sep, end := "[", ",", "]"
	padOpen, padClose := `{"note":"`, `"}`
	if pretty {
		open, sep, end = "[\n  ", ",\n  ", "\n]"
		padOpen, padClose = "{\n    \"note\": \"", "\"\n  }"
	}
	var b strings.Builder
	b.Grow(size + 1024)
	b.WriteString(open)
	items := 0
	for i := 0; ; i++ {
		item := marshalNoEscape(jsonItem(r, i), pretty)
		extra := len(item)
		if items > 0 {
			extra += len(sep)
		}
		// Keep room for the closing bracket and a padding object.
		if b.Len()+extra+len(end)+len(sep)+len(padOpen)+len(padClose) > size {
			break
		}
		if items > 0 {
			b.WriteString(sep)
		}
		b.WriteString(item)
		items++
	}
	fill := size - b.Len() - len(end) - len(padOpen) - len(padClose)
	if items > 0 {
		fill -= len(sep)
	}
	if fill < 0 {
		if items == 0 {
			return "[]"
		}
		b.WriteString(end)
		return b.String()
	}
	if items > 0 {
		b.WriteString(sep)
	}
	b.WriteString(padOpen)
	b.WriteString(strings.ReplaceAll(prose(r, fill, wordsEN), "\n", " "))
	for n := b.Len() + len(padClose) + len(end); n < size; n++ { // prose may cut short of fill
		b.WriteByte('.')
	}
	b.WriteString(padClose)
	b.WriteString(end)
	return b.String()
}
