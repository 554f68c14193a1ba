package coretest

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"unicode/utf8"
)

// Generated content: text of each kind (prose, code, JSON, logs, tables, CJK,
// IDs ...) of a given size, deterministic per seed, for tool results and
// messages.

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

const mdHeader = "| service | region | status | p50_ms | p99_ms | error_rate | owner |\n|---|---|---|---:|---:|---:|---|\n"

const sqlHeader = "  id   |           email            |     created_at      |  status   | amount_cents | region\n-------+----------------------------+---------------------+-----------+--------------+-----------\n"

// pngKey -> []byte
