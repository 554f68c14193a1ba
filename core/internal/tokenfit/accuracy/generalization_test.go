package accuracy_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tiktoken-go/tokenizer"

	"github.com/adk-contextguard/contextguard/core/coretest"
	"github.com/adk-contextguard/contextguard/core/coretest/o200k"
	"github.com/adk-contextguard/contextguard/core/internal/tokens"
)

// probe is a small generator, independent of the corpus generator in
// internal/tokenfit/gen (other vocabularies, layouts and number formats), of
// the content kinds a context guard meets in tool results. The fit never saw
// its output.
type probe struct{ r *rand.Rand }

func (p *probe) pick(s ...string) string { return s[p.r.IntN(len(s))] }

func (p *probe) hexs(n int) string {
	const d = "0123456789abcdef"
	b := make([]byte, n)
	for i := range b {
		b[i] = d[p.r.IntN(16)]
	}
	return string(b)
}

var (
	probeEN = strings.Fields("we measured how the new scheduler behaves under sustained load and found that queue depth grows " +
		"slowly until the workers saturate then latency climbs sharply because retries pile onto the same " +
		"partitions this note explains what changed why it matters and which knobs operators should tune first " +
		"before paging anyone about an incident that may simply be a noisy neighbour on shared hardware")
	probeES = strings.Fields("medimos cómo se comporta el nuevo planificador bajo carga sostenida y vimos que la cola crece " +
		"despacio hasta que los trabajadores se saturan entonces la latencia sube porque los reintentos caen sobre " +
		"las mismas particiones esta nota explica qué cambió por qué importa y qué parámetros conviene ajustar primero")
	probeZH = strings.Fields("我们 测量 了 新 调度器 在 持续 负载 下 的 表现 发现 队列 深度 缓慢 增长 直到 工作 线程 饱和 " +
		"然后 延迟 急剧 上升 因为 重试 集中 在 相同 的 分区 上 本文 说明 变化 原因 以及 运维 人员 应该 首先 调整 哪些 参数 " +
		"系统 服务 数据 用户 请求 错误 配置 网络 存储 内存 版本 发布 监控 告警")
	probeSvc = []string{"ledger", "geo-router", "mailer", "thumbnailer", "session-store", "quota-keeper", "feed-ranker"}
)

func (p *probe) words(list []string, n int, sep string) string {
	w := make([]string, n)
	for i := range w {
		w[i] = list[p.r.IntN(len(list))]
	}
	return strings.Join(w, sep)
}

func (p *probe) fill(size int, line func(i int, b *strings.Builder)) string {
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		line(i, &b)
	}
	return b.String()
}

func (p *probe) object(i int) map[string]any {
	return map[string]any{
		"uid": fmt.Sprintf("%s-%s", p.hexs(8), p.hexs(4)), "seq": i * 37, "service": p.pick(probeSvc...),
		"weight": math.Round(p.r.Float64()*1e4) / 100, "enabled": p.r.IntN(2) == 0,
		"owner":  map[string]any{"team": p.pick("infra", "growth", "core"), "pager": fmt.Sprintf("+1-555-%04d", p.r.IntN(10000))},
		"labels": []any{p.pick(probeEN...), p.pick(probeEN...)}, "note": p.words(probeEN, 4+p.r.IntN(8), " "),
	}
}

func (p *probe) gen(kind string, size int) string {
	switch kind {
	case "pretty_json", "compact_json":
		var objs []any
		for i := 0; ; i++ {
			objs = append(objs, p.object(i))
			b, _ := json.Marshal(objs)
			if len(b) >= size {
				if kind == "compact_json" {
					return string(b)
				}
				b, _ = json.MarshalIndent(objs, "", "    ")
				return string(b)
			}
		}
	case "yaml":
		return p.fill(size, func(i int, b *strings.Builder) {
			fmt.Fprintf(b, "- name: %s-%d\n  schedule: \"*/%d * * * *\"\n  timeout: %ds\n  args:\n    - --shard=%d\n    - --bucket=%s\n  enabled: %v\n",
				p.pick(probeSvc...), i, 1+p.r.IntN(30), 5+p.r.IntN(300), p.r.IntN(64), p.hexs(6), p.r.IntN(2) == 0)
		})
	case "kubectl_table":
		return p.fill(size, func(i int, b *strings.Builder) {
			fmt.Fprintf(b, "%-32s %-10s %-8d %-6s %s\n", p.pick(probeSvc...)+"-"+p.hexs(10)+"-"+p.hexs(5), p.pick("Running", "Pending", "Evicted"), p.r.IntN(9), fmt.Sprintf("%dh", 1+p.r.IntN(99)), fmt.Sprintf("172.16.%d.%d", p.r.IntN(256), p.r.IntN(256)))
		})
	case "kubectl_describe":
		return p.fill(size, func(i int, b *strings.Builder) {
			fmt.Fprintf(b, "Name:           %s-%s\nReplicas:       %d desired | %d updated | %d available\nStrategyType:   RollingUpdate\nSelector:       app=%s,tier=%s\nEvents:\n  Normal  ScalingReplicaSet  %dm  deployment-controller  Scaled up replica set %s-%s to %d\n\n",
				p.pick(probeSvc...), p.hexs(6), p.r.IntN(9), p.r.IntN(9), p.r.IntN(9), p.pick(probeSvc...), p.pick("web", "db"), p.r.IntN(90), p.pick(probeSvc...), p.hexs(10), p.r.IntN(9))
		})
	case "markdown_table":
		return "| host | cpu % | mem MiB | disk | uptime |\n| :--- | ---: | ---: | :---: | --- |\n" + p.fill(size, func(i int, b *strings.Builder) {
			fmt.Fprintf(b, "| node-%02d | %.1f | %d | %s | %dd %dh |\n", i, p.r.Float64()*100, p.r.IntN(65536), p.pick("ok", "degraded", "full"), p.r.IntN(400), p.r.IntN(24))
		})
	case "log_lines":
		return p.fill(size, func(i int, b *strings.Builder) {
			fmt.Fprintf(b, "[%d-%02d-%02d %02d:%02d:%02d,%03d] %s %s: %s (elapsed=%.3fs, req=%s)\n", 2023, 1+p.r.IntN(12), 1+p.r.IntN(28), p.r.IntN(24), p.r.IntN(60), p.r.IntN(60), p.r.IntN(1000),
				p.pick("INFO", "WARNING", "ERROR"), p.pick(probeSvc...), p.words(probeEN, 3+p.r.IntN(6), " "), p.r.Float64()*9, p.hexs(16))
		})
	case "go_code":
		return p.fill(size, func(i int, b *strings.Builder) {
			fmt.Fprintf(b, "// handle%d drains the %s queue.\nfunc (q *Queue) handle%d(ctx context.Context, max int) (int, error) {\n\tn := 0\n\tfor n < max {\n\t\tmsg, ok := q.next(ctx)\n\t\tif !ok {\n\t\t\tbreak\n\t\t}\n\t\tif err := q.ack(msg.ID); err != nil {\n\t\t\treturn n, fmt.Errorf(\"ack %%s: %%w\", msg.ID, err)\n\t\t}\n\t\tn++\n\t}\n\treturn n, nil\n}\n\n",
				i, p.pick(probeSvc...), i)
		})
	case "base64":
		raw := make([]byte, size*3/4)
		for i := range raw {
			raw[i] = byte(p.r.UintN(256))
		}
		return base64.StdEncoding.EncodeToString(raw)
	case "prose_en":
		return p.fill(size, func(i int, b *strings.Builder) {
			s := p.words(probeEN, 6+p.r.IntN(14), " ")
			b.WriteString(strings.ToUpper(s[:1]) + s[1:] + p.pick(". ", ", and ", "; ", ".\n\n"))
		})
	case "prose_es":
		return p.fill(size, func(i int, b *strings.Builder) {
			s := p.words(probeES, 6+p.r.IntN(14), " ")
			b.WriteString(strings.ToUpper(s[:1]) + s[1:] + p.pick(". ", "; ", ".\n\n"))
		})
	case "prose_zh":
		return p.fill(size, func(i int, b *strings.Builder) {
			b.WriteString(p.words(probeZH, 5+p.r.IntN(12), "") + p.pick("，", "。", "；", "。\n"))
		})
	case "prometheus":
		return p.fill(size, func(i int, b *strings.Builder) {
			fmt.Fprintf(b, "queue_depth{service=%q,shard=\"%d\",zone=%q} %d\n", p.pick(probeSvc...), p.r.IntN(64), p.pick("a", "b", "c"), p.r.IntN(100000))
			if i%4 == 0 {
				fmt.Fprintf(b, "request_seconds_sum{service=%q} %.6f\n", p.pick(probeSvc...), p.r.ExpFloat64()*100)
			}
		})
	case "sql_rows":
		return " sku      | qty | unit_price | updated\n----------+-----+------------+---------------------\n" + p.fill(size, func(i int, b *strings.Builder) {
			fmt.Fprintf(b, " %s | %3d | %10.2f | 2023-%02d-%02d %02d:%02d:%02d\n", strings.ToUpper(p.hexs(8)), p.r.IntN(999), p.r.Float64()*1000, 1+p.r.IntN(12), 1+p.r.IntN(28), p.r.IntN(24), p.r.IntN(60), p.r.IntN(60))
		})
	case "grep":
		return p.fill(size, func(i int, b *strings.Builder) {
			fmt.Fprintf(b, "lib/%s/%s.py:%d:    %s = self.%s(%d)\n", p.pick(probeSvc...), p.pick("core", "util", "models"), 1+p.r.IntN(999), p.pick("result", "rows", "cfg"), p.pick("load", "fetch", "parse"), p.r.IntN(100))
		})
	case "test_output":
		return p.fill(size, func(i int, b *strings.Builder) {
			fmt.Fprintf(b, "tests/test_%s.py::test_case_%d %s\n", strings.ReplaceAll(p.pick(probeSvc...), "-", "_"), i, p.pick("PASSED", "PASSED", "FAILED", "SKIPPED"))
		})
	case "id_filler":
		return p.fill(size, func(i int, b *strings.Builder) {
			fmt.Fprintf(b, "id%d=%x ", p.r.IntN(1000), p.r.IntN(1<<(4+p.r.IntN(12))))
		})
	}
	panic("unknown kind " + kind)
}

var probeKinds = []string{"pretty_json", "compact_json", "yaml", "kubectl_table", "kubectl_describe", "markdown_table",
	"log_lines", "go_code", "base64", "prose_en", "prose_es", "prose_zh", "prometheus", "sql_rows", "grep",
	"test_output", "id_filler"}

// TestEstimatorGeneralization measures estimate/o200k on content from a
// generator the fit never saw, and reports the same on coretest's
// content kinds.
func TestEstimatorGeneralization(t *testing.T) {
	if testing.Short() {
		t.Skip("counts o200k tokens of ~300 KB")
	}
	enc, err := tokenizer.Get(tokenizer.O200kBase)
	require.NoError(t, err)
	est := tokens.New(tokens.O200k)
	var report strings.Builder
	var errs []float64
	fmt.Fprintf(&report, "\nindependent probe generator (8 KB, two seeds): estimate / o200k\n")
	for _, kind := range probeKinds {
		for _, seed := range []uint64{11, 12} {
			p := &probe{r: rand.New(rand.NewPCG(seed, 0x5eed))}
			s := p.gen(kind, 8192)
			y, err := enc.Count(s)
			require.NoError(t, err)
			ratio := float64(est.Text(s)) / float64(y)
			fmt.Fprintf(&report, "%-18s seed %d  %.3f\n", kind, seed, ratio)
			errs = append(errs, math.Abs(ratio-1))
			assert.GreaterOrEqual(t, ratio, 0.88, "%s seed %d", kind, seed)
			assert.LessOrEqual(t, ratio, 1.15, "%s seed %d", kind, seed)
		}
	}
	sort.Float64s(errs)
	med := errs[len(errs)/2]
	fmt.Fprintf(&report, "median |error| %.1f%%\n\ncoretest.Generate (8 KB, seed 3): estimate / o200k\n", 100*med)
	assert.LessOrEqual(t, med, 0.06, "median |error|")
	for _, k := range coretest.Kinds() {
		s := coretest.Generate(k, 8192, 3)
		y := o200k.Count(s)
		fmt.Fprintf(&report, "%-18s %.3f\n", k, float64(est.Text(s))/float64(y))
	}
	t.Log(report.String())
}
