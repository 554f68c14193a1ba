package coretest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"unicode/utf8"
)

// Kind is the kind of text [Generate] produces. Its value is a short
// snake_case name, so it can travel in tool-call arguments.
type Kind string

// Content kinds. Each has its own token density, which is why a guard that
// estimates tokens from bytes is wrong by a different factor for each.
const (
	KindPrettyJSON      Kind = "pretty_json"      // indented JSON array of API objects
	KindCompactJSON     Kind = "compact_json"     // the same objects, compact
	KindYAML            Kind = "yaml"             // Kubernetes-style manifests
	KindKubectlTable    Kind = "kubectl_table"    // kubectl get pods -o wide
	KindKubectlDescribe Kind = "kubectl_describe" // kubectl describe pod
	KindMarkdownTable   Kind = "markdown_table"   // a GitHub-flavoured table
	KindLogLines        Kind = "log_lines"        // structured service logs
	KindGoCode          Kind = "go_code"          // Go source
	KindBase64          Kind = "base64"           // base64 of random bytes
	KindProseEnglish    Kind = "prose_en"         // English prose
	KindProseSpanish    Kind = "prose_es"         // Spanish prose
	KindProseChinese    Kind = "prose_zh"         // Chinese prose
	KindPrometheus      Kind = "prometheus"       // Prometheus exposition format
	KindSQLRows         Kind = "sql_rows"         // psql result table
	KindGrep            Kind = "grep"             // grep -n output over a repo
	KindTestOutput      Kind = "test_output"      // go test -v output
)

// Kinds lists every [Kind] Generate knows.
func Kinds() []Kind {
	return []Kind{
		KindPrettyJSON, KindCompactJSON, KindYAML, KindKubectlTable, KindKubectlDescribe,
		KindMarkdownTable, KindLogLines, KindGoCode, KindBase64, KindProseEnglish,
		KindProseSpanish, KindProseChinese, KindPrometheus, KindSQLRows, KindGrep, KindTestOutput,
	}
}

type genKey struct {
	kind Kind
	size int
	seed int64
}

// genCacheLimit bounds the bytes the generator cache holds.
const genCacheLimit = 512 << 20

var genCache = struct {
	sync.Mutex
	m     map[genKey]string
	bytes int
}{m: map[genKey]string{}}

// Generate returns deterministic, realistic text of the given kind and about
// size bytes (exactly size for most kinds; within a few bytes for Chinese,
// which is cut on a rune boundary; tiny sizes of JSON kinds return the
// smallest valid document). The same (kind, size, seed) always returns the
// same text, and results are cached. An unknown kind generates English prose;
// size <= 0 returns "".
func Generate(kind Kind, size int, seed int64) string {
	if size <= 0 {
		return ""
	}
	key := genKey{kind, size, seed}
	genCache.Lock()
	s, ok := genCache.m[key]
	genCache.Unlock()
	if ok {
		return s
	}
	s = generate(kind, size, seed)
	genCache.Lock()
	if genCache.bytes+len(s) > genCacheLimit {
		genCache.m = map[genKey]string{}
		genCache.bytes = 0
	}
	genCache.m[key] = s
	genCache.bytes += len(s)
	genCache.Unlock()
	return s
}

func newRand(seed int64, salt uint64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), salt^0x9e3779b97f4a7c15))
}

func generate(kind Kind, size int, seed int64) string {
	r := newRand(seed, uint64(len(kind))*7919+uint64(size))
	switch kind {
	case KindPrettyJSON:
		return jsonDoc(r, size, true)
	case KindCompactJSON:
		return jsonDoc(r, size, false)
	case KindYAML:
		return fillLines(r, size, "", yamlLine)
	case KindKubectlTable:
		return fillLines(r, size, kubectlHeader, kubectlLine)
	case KindKubectlDescribe:
		return fillLines(r, size, "", describeLine)
	case KindMarkdownTable:
		return fillLines(r, size, mdHeader, mdLine)
	case KindLogLines:
		return fillLines(r, size, "", logLine)
	case KindGoCode:
		return fillLines(r, size, "package server\n\nimport (\n\t\"context\"\n\t\"fmt\"\n\t\"time\"\n)\n\n", goLine)
	case KindBase64:
		raw := make([]byte, base64.StdEncoding.DecodedLen(size)+3)
		fillRandom(r, raw)
		return base64.StdEncoding.EncodeToString(raw)[:size]
	case KindProseSpanish:
		return prose(r, size, wordsES)
	case KindProseChinese:
		return proseZH(r, size)
	case KindPrometheus:
		return fillLines(r, size, "", promLine)
	case KindSQLRows:
		return fillLines(r, size, sqlHeader, sqlLine)
	case KindGrep:
		return fillLines(r, size, "", grepLine)
	case KindTestOutput:
		return fillLines(r, size, "", testLine)
	default:
		return prose(r, size, wordsEN)
	}
}

func fillRandom(r *rand.Rand, b []byte) {
	for i := 0; i < len(b); i += 8 {
		v := r.Uint64()
		for j := 0; j < 8 && i+j < len(b); j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
}

// cut truncates s to at most n bytes on a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func fillLines(r *rand.Rand, size int, header string, line func(r *rand.Rand, i int, b *strings.Builder)) string {
	var b strings.Builder
	b.Grow(size + 512)
	b.WriteString(header)
	for i := 0; b.Len() < size; i++ {
		line(r, i, &b)
	}
	return cut(b.String(), size)
}

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

func hexID(r *rand.Rand, n int) string {
	const digits = "0123456789abcdef"
	b := make([]byte, n)
	for i := range b {
		b[i] = digits[r.IntN(16)]
	}
	return string(b)
}

func alnumID(r *rand.Rand, n int) string {
	const digits = "bcdfghjklmnpqrstvwxz2456789"
	b := make([]byte, n)
	for i := range b {
		b[i] = digits[r.IntN(len(digits))]
	}
	return string(b)
}

var (
	services   = []string{"api-gateway", "payment-svc", "checkout", "inventory", "auth-service", "user-profile", "notification-worker", "search-indexer", "billing", "order-processor", "redis-cache", "postgres-primary", "kafka-broker", "frontend", "recommendation"}
	namespaces = []string{"default", "production", "staging", "kube-system", "monitoring", "payments", "data"}
	statuses   = []string{"Running", "Running", "Running", "Running", "CrashLoopBackOff", "Pending", "Completed", "Error", "OOMKilled", "ContainerCreating"}
	nodes      = []string{"gke-prod-pool-1-a8f3e2c1-x7k2", "gke-prod-pool-1-a8f3e2c1-m4n9", "gke-prod-pool-2-b71d09e4-q2w8", "ip-10-0-3-117.ec2.internal", "ip-10-0-5-42.ec2.internal"}
	levels     = []string{"INFO", "INFO", "INFO", "DEBUG", "WARN", "ERROR"}
	httpPaths  = []string{"/api/v1/orders", "/api/v1/users", "/api/v2/payments/charge", "/healthz", "/api/v1/inventory/items", "/metrics", "/api/v1/cart/checkout", "/graphql"}
	methods    = []string{"GET", "GET", "GET", "POST", "PUT", "DELETE", "PATCH"}
	logMsgs    = []string{"request completed", "cache miss, falling back to database", "retrying upstream call", "connection pool exhausted", "slow query detected", "token refreshed", "payment authorized", "failed to decode response body", "circuit breaker opened", "message acknowledged", "context deadline exceeded", "rate limit applied"}
	goNouns    = []string{"Order", "User", "Payment", "Invoice", "Session", "Item", "Cart", "Account", "Token", "Event", "Shipment", "Report"}
	goVerbs    = []string{"List", "Get", "Create", "Update", "Delete", "Validate", "Sync", "Resolve", "Refresh", "Archive"}
	files      = []string{"internal/server/handler.go", "internal/store/postgres.go", "pkg/api/client.go", "cmd/worker/main.go", "internal/billing/invoice.go", "pkg/auth/jwt.go", "internal/queue/consumer.go", "web/src/components/Cart.tsx", "deploy/helm/values.yaml"}
	wordsEN    = strings.Fields("the a of to and in that is for it with as was on be by this are from at or an have not but which they their has been its more one all were can would there when will also into if may other what some than about only out time these two so first after new over most such any how where between under during through should because before system service request data user server error value cluster latency database memory deployment release change failure migration schedule customer report query result process window team")
	wordsES    = strings.Fields("el la de que y en los se del las un por con no una su para es al lo como más pero sus le ya o este sí porque esta entre cuando muy sin sobre también me hasta hay donde quien desde todo nos durante todos uno les ni contra otros ese eso ante ellos servicio sistema datos usuario servidor error valor clúster latencia base memoria despliegue cambio fallo migración cliente informe consulta resultado proceso ventana equipo petición configuración")
	hanChars   = []rune("的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处队南给色光门即保治北造百规热领七海口东导器压志世金增争济阶油思术极交受联什认六共权收证改清己美再采转更单风切打白教速花带安场身车例真务具万每目至达走积示议声报斗完类八离华名确才科张信马节话米整空元况今集温传土许步群广石记需段研界拉林律叫且究观越织装影算低持音众书布复容儿须际商非验连断深难近矿千周委素技备半办青省列习响约支般史感劳便团往酸历市克何除消构府称太准精值号率族维划选标写存候毛亲快效斯院查江型眼王按格养易置派层片始却专状育厂京识适属圆包火住调满县局照参红细引听该铁价严")
	hanPunct   = []rune("，，，、；")
	regions    = []string{"us-east-1", "us-west-2", "eu-west-1", "eu-central-1", "ap-south-1", "sa-east-1"}
	owners     = []string{"@platform", "@payments", "@sre-oncall", "@search", "@growth", "@data-eng"}
)

func podName(r *rand.Rand) string {
	return pick(r, services) + "-" + hexID(r, 9) + "-" + alnumID(r, 5)
}

func age(r *rand.Rand) string {
	switch r.IntN(4) {
	case 0:
		return fmt.Sprintf("%dm", 1+r.IntN(59))
	case 1:
		return fmt.Sprintf("%dh%dm", 1+r.IntN(23), r.IntN(60))
	default:
		return fmt.Sprintf("%dd", 1+r.IntN(90))
	}
}

func ip(r *rand.Rand) string {
	return fmt.Sprintf("10.%d.%d.%d", r.IntN(8), r.IntN(256), 1+r.IntN(254))
}

func timestamp(r *rand.Rand, i int) string {
	sec := 1717243200 + i*3 + r.IntN(3)
	return fmt.Sprintf("2024-06-01T%02d:%02d:%02d.%03dZ", (sec/3600)%24, (sec/60)%60, sec%60, r.IntN(1000))
}

const kubectlHeader = "NAME                                        READY   STATUS             RESTARTS        AGE     IP            NODE                              NOMINATED NODE   READINESS GATES\n"

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

const mdHeader = "| service | region | status | p50_ms | p99_ms | error_rate | owner |\n|---|---|---|---:|---:|---:|---|\n"

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

const sqlHeader = "  id   |           email            |     created_at      |  status   | amount_cents | region\n-------+----------------------------+---------------------+-----------+--------------+-----------\n"

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

// ---------------------------------------------------------------------------
// Binary payloads.

// PNG returns a deterministic PNG image of the given dimensions, a smooth
// gradient overlaid with noise so that it compresses poorly and is large
// (roughly 2 bytes per pixel). Non-positive dimensions are treated as 1.
func PNG(width, height int, seed int64) []byte {
	width, height = max(width, 1), max(height, 1)
	r := newRand(seed, uint64(width)<<20|uint64(height))
	img := image.NewNRGBA(image.Rect(0, 0, width, height))
	for y := 0; y < height; y++ {
		for x := 0; x < width; x++ {
			n := r.Uint32()
			img.SetNRGBA(x, y, color.NRGBA{
				R: uint8(x*255/width) ^ uint8(n&0x3f),
				G: uint8(y*255/height) ^ uint8((n>>8)&0x3f),
				B: uint8((x+y)*127/(width+height)) ^ uint8((n>>16)&0x3f),
				A: 255,
			})
		}
	}
	var buf bytes.Buffer
	_ = png.Encode(&buf, img) // encoding to memory cannot fail
	return buf.Bytes()
}

type pngKey struct {
	size int
	seed int64
}

var pngCache sync.Map // pngKey -> []byte

// PNGOfSize returns a deterministic PNG of about size bytes (within about
// 10%), with a 4:3 aspect ratio. Results are cached; callers must not modify
// the returned slice.
func PNGOfSize(size int, seed int64) []byte {
	size = max(size, 100)
	if v, ok := pngCache.Load(pngKey{size, seed}); ok {
		return v.([]byte)
	}
	// First guess at ~2.2 bytes per pixel, then correct once or twice.
	px := float64(size) / 2.2
	var out []byte
	for range 3 {
		w := max(int(math.Sqrt(px*4/3)), 1)
		h := max(w*3/4, 1)
		out = PNG(w, h, seed)
		ratio := float64(size) / float64(len(out))
		if math.Abs(ratio-1) < 0.05 {
			break
		}
		px = float64(w*h) * ratio
	}
	pngCache.Store(pngKey{size, seed}, out)
	return out
}

// PDF returns deterministic bytes of exactly size bytes (at least a minimal
// header) shaped like a PDF document with one compressed-looking stream.
func PDF(size int, seed int64) []byte {
	head := "%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n2 0 obj\n<< /Type /Pages /Kids [3 0 R] /Count 1 >>\nendobj\n3 0 obj\n<< /Length 0 /Filter /FlateDecode >>\nstream\n"
	tail := "\nendstream\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n"
	body := max(size-len(head)-len(tail), 0)
	out := make([]byte, 0, len(head)+body+len(tail))
	out = append(out, head...)
	raw := make([]byte, body)
	fillRandom(newRand(seed, 0x5044), raw)
	out = append(out, raw...)
	return append(out, tail...)
}
