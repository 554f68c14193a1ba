package main

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"path"
	"strings"
	"time"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/tool"
	"google.golang.org/adk/tool/functiontool"

	"github.com/adk-contextguard/contextguard/core/coretest"
)

// toolResult is what every demo tool returns: the command it stands for,
// then its output, as a terminal would show them.
type toolResult struct {
	Output string `json:"output"`
}

func result(cmd, body string) toolResult {
	return toolResult{Output: "$ " + cmd + "\n" + body}
}

// newTools builds the four tools with ADK's functiontool. Their output is
// deterministic: the same arguments always return the same text.
func newTools() ([]tool.Tool, error) {
	pods, err := functiontool.New(functiontool.Config{
		Name:        "kubectl_get_pods",
		Description: "List the pods of a namespace (kubectl get pods -o wide), optionally filtered by a label selector.",
	}, func(_ agent.ToolContext, a podsArgs) (toolResult, error) {
		return result(a.command(), podTable(a)), nil
	})
	if err != nil {
		return nil, fmt.Errorf("kubectl_get_pods: %w", err)
	}
	describe, err := functiontool.New(functiontool.Config{
		Name:        "kubectl_describe",
		Description: "Describe a pod or a node (kubectl describe): state, limits, conditions and recent events.",
	}, func(_ agent.ToolContext, a describeArgs) (toolResult, error) {
		if strings.EqualFold(a.Kind, "node") {
			return result(a.command(), describeNode(a.Name)), nil
		}
		return result(a.command(), describePod(a)), nil
	})
	if err != nil {
		return nil, fmt.Errorf("kubectl_describe: %w", err)
	}
	logs, err := functiontool.New(functiontool.Config{
		Name:        "kubectl_logs",
		Description: "Print the most recent log lines of a pod's container (kubectl logs --tail), or of its previous container.",
	}, func(_ agent.ToolContext, a logsArgs) (toolResult, error) {
		return result(a.command(), podLogs(a)), nil
	})
	if err != nil {
		return nil, fmt.Errorf("kubectl_logs: %w", err)
	}
	read, err := functiontool.New(functiontool.Config{
		Name:        "read_file",
		Description: "Read a file of the payments repository (Go code, Kubernetes manifests, docs).",
	}, func(_ agent.ToolContext, a fileArgs) (toolResult, error) {
		return result(a.command(), fileContent(a.Path)), nil
	})
	if err != nil {
		return nil, fmt.Errorf("read_file: %w", err)
	}
	return []tool.Tool{pods, describe, logs, read}, nil
}

// incidentTime is "now" in the story.
var incidentTime = time.Date(2024, 6, 1, 14, 7, 30, 0, time.UTC)

// rng returns a generator seeded by the given strings, so every output is a
// pure function of the tool's arguments.
func rng(keys ...string) *rand.Rand {
	h := fnv.New64a()
	for _, k := range keys {
		h.Write([]byte(k))
		h.Write([]byte{0})
	}
	s := h.Sum64()
	return rand.New(rand.NewPCG(s, s^0x9e3779b97f4a7c15))
}

func hexID(r *rand.Rand, n int) string {
	const digits = "bcdfghjklmnpqrstvwxz2456789"
	b := make([]byte, n)
	for i := range b {
		b[i] = digits[r.IntN(len(digits))]
	}
	return string(b)
}

// serviceOf strips the replica-set hash and pod suffix from a pod name.
func serviceOf(pod string) string {
	parts := strings.Split(pod, "-")
	switch {
	case len(parts) >= 3 && len(parts[len(parts)-1]) == 5 && len(parts[len(parts)-2]) >= 8:
		return strings.Join(parts[:len(parts)-2], "-")
	case len(parts) >= 2 && strings.Trim(parts[len(parts)-1], "0123456789") == "":
		return strings.Join(parts[:len(parts)-1], "-") // statefulset pod
	}
	return pod
}

// ---------------------------------------------------------------------------
// kubectl get pods

type podRow struct {
	name, ready, status, restarts, age, ip, node string
}

var nodes = []string{
	"gke-prod-pool-1-a8f3e2c1-x7k2", "gke-prod-pool-1-a8f3e2c1-m4n9", "gke-prod-pool-1-a8f3e2c1-p2d6",
	"gke-prod-pool-2-b71d09e4-q2w8", "gke-prod-pool-2-b71d09e4-z9c3",
}

var namespaceServices = map[string][]string{
	"payments":   {"ledger-writer", "fraud-scorer", "refund-worker", "payout-scheduler", "currency-rates", "invoice-renderer", "webhook-dispatcher"},
	"production": {"checkout", "cart", "catalog", "search-indexer", "recommendation", "frontend", "order-processor", "user-profile", "notification-worker", "api-gateway"},
	"staging":    {"payment-svc", "checkout", "cart", "catalog", "frontend", "ledger-writer"},
}

// storyPods are the pods the incident is about, by namespace.
var storyPods = map[string][]podRow{
	"payments": {
		{crashPod, "0/1", "CrashLoopBackOff", "14 (2m ago)", "38m", "10.4.2.17", crashNode},
		{replicaPod, "1/1", "Running", "9 (6m ago)", "38m", "10.4.3.22", "gke-prod-pool-1-a8f3e2c1-m4n9"},
		{"payment-svc-7d9f8b6c5-v5c7z", "1/1", "Running", "11 (1m ago)", "38m", "10.4.5.9", "gke-prod-pool-2-b71d09e4-q2w8"},
		{"redis-cache-0", "1/1", "Running", "0", "12d", "10.4.1.40", "gke-prod-pool-2-b71d09e4-z9c3"},
	},
	"production": {
		{checkout, "1/1", "Running", "0", "3d2h", "10.4.6.31", "gke-prod-pool-2-b71d09e4-q2w8"},
		{"checkout-6c8d7f9b4-r2t5v", "1/1", "Running", "0", "3d2h", "10.4.7.12", "gke-prod-pool-1-a8f3e2c1-p2d6"},
		{"checkout-6c8d7f9b4-w8n4k", "1/1", "Running", "0", "3d2h", "10.4.2.58", crashNode},
	},
	"staging": {
		{stagingPay, "1/1", "Running", "0", "41m", "10.8.1.77", "gke-stg-pool-1-c3e9a1f0-k5m2"},
		{"payment-svc-5f6b7c8d9-h3j8p", "1/1", "Running", "0", "41m", "10.8.2.13", "gke-stg-pool-1-c3e9a1f0-n7q4"},
	},
}

// afterRollback are the payment-svc pods once v2.13.2 is back.
var afterRollback = []podRow{
	{rolledBack, "1/1", "Running", "0", "6m", "10.4.2.91", crashNode},
	{"payment-svc-66b9c7d4f-k7p2x", "1/1", "Running", "0", "6m", "10.4.3.64", "gke-prod-pool-1-a8f3e2c1-m4n9"},
	{"payment-svc-66b9c7d4f-d5w9q", "1/1", "Running", "0", "5m", "10.4.5.33", "gke-prod-pool-2-b71d09e4-q2w8"},
	{"redis-cache-0", "1/1", "Running", "0", "12d", "10.4.1.40", "gke-prod-pool-2-b71d09e4-z9c3"},
}

func podTable(a podsArgs) string {
	ns := orDefault(a.Namespace, "default")
	r := rng("pods", ns, a.Selector)
	rows := storyPods[ns]
	if ns == "payments" && a.Selector != "" {
		rows = afterRollback // the story lists payment-svc by selector after the rollback
	}
	if a.Selector == "" {
		services := namespaceServices[ns]
		if len(services) == 0 {
			services = []string{"web", "worker", "cron-cleanup", "metrics-exporter"}
		}
		for _, svc := range services {
			hash := hexID(r, 9)
			for range 2 + r.IntN(3) {
				rows = append(rows, podRow{
					name:     svc + "-" + hash + "-" + hexID(r, 5),
					ready:    "1/1",
					status:   "Running",
					restarts: "0",
					age:      fmt.Sprintf("%dd%dh", 1+r.IntN(20), r.IntN(24)),
					ip:       fmt.Sprintf("10.4.%d.%d", r.IntN(8), 2+r.IntN(250)),
					node:     nodes[r.IntN(len(nodes))],
				})
			}
		}
	} else {
		app := strings.TrimPrefix(a.Selector, "app=")
		kept := rows[:0:0]
		for _, p := range rows {
			if serviceOf(p.name) == app {
				kept = append(kept, p)
			}
		}
		rows = kept
	}
	if len(rows) == 0 {
		return "No resources found in " + ns + " namespace.\n"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-44s %-7s %-18s %-13s %-6s %-12s %-32s %-15s %s\n", "NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED NODE", "READINESS GATES")
	for _, p := range rows {
		fmt.Fprintf(&b, "%-44s %-7s %-18s %-13s %-6s %-12s %-32s %-15s %s\n", p.name, p.ready, p.status, p.restarts, p.age, p.ip, p.node, "<none>", "<none>")
	}
	return b.String()
}

// ---------------------------------------------------------------------------
// kubectl describe

func describePod(a describeArgs) string {
	ns := orDefault(a.Namespace, "default")
	r := rng("describe", ns, a.Name)
	svc := serviceOf(a.Name)
	image, state, last, restarts, limit, request := fmt.Sprintf("gcr.io/prod/%s:v1.%d.%d", svc, r.IntN(30), r.IntN(10)), "Running", "", 0, "512Mi", "256Mi"
	node := nodes[r.IntN(len(nodes))]
	events := [][4]string{{"Normal", "Pulled", "12d", "Container image already present on machine"}}
	switch {
	case strings.HasPrefix(a.Name, "payment-svc-7d9f8b6c5"):
		image, restarts, limit, request, node = "gcr.io/prod/payment-svc:v2.14.0", 14, "256Mi", "128Mi", crashNode
		state = "Waiting\n      Reason:       CrashLoopBackOff"
		last = "    Last State:     Terminated\n      Reason:       OOMKilled\n      Exit Code:    137\n      Started:      Sat, 01 Jun 2024 14:03:12 +0000\n      Finished:     Sat, 01 Jun 2024 14:05:27 +0000\n"
		events = [][4]string{
			{"Normal", "Scheduled", "38m", "Successfully assigned payments/" + a.Name + " to " + crashNode},
			{"Normal", "Pulled", "38m", "Successfully pulled image \"gcr.io/prod/payment-svc:v2.14.0\" in 2.114s"},
			{"Warning", "OOMKilling", "26m (x13 over 38m)", "Memory cgroup out of memory: Killed process 1 (payment-svc) total-vm:1804212kB, anon-rss:262144kB"},
			{"Normal", "Pulled", "2m (x14 over 36m)", "Container image \"gcr.io/prod/payment-svc:v2.14.0\" already present on machine"},
			{"Warning", "BackOff", "7s (x142 over 35m)", "Back-off restarting failed container payment-svc in pod " + a.Name + "_payments"},
		}
	case a.Name == "redis-cache-0":
		image, limit, request = "docker.io/library/redis:7.2.4-alpine", "2Gi", "1Gi"
		events = [][4]string{{"Warning", "Unhealthy", "6m (x3 over 12m)", "Readiness probe failed: ERR max number of clients reached"}}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Name:             %s\nNamespace:        %s\nPriority:         0\nService Account:  %s\nNode:             %s/10.128.0.%d\n", a.Name, ns, svc, node, 2+r.IntN(200))
	fmt.Fprintf(&b, "Start Time:       Sat, 01 Jun 2024 13:29:%02d +0000\nLabels:           app=%s\n                  pod-template-hash=%s\n                  team=payments\nAnnotations:      prometheus.io/port: 9090\n                  prometheus.io/scrape: true\n", r.IntN(60), svc, hexID(r, 9))
	fmt.Fprintf(&b, "Status:           Running\nIP:               10.4.%d.%d\nControlled By:    ReplicaSet/%s\nContainers:\n  %s:\n    Container ID:   containerd://%s%s\n    Image:          %s\n    Ports:          8080/TCP, 9090/TCP\n    State:          %s\n",
		r.IntN(8), 2+r.IntN(250), svc, svc, hexID(r, 32), hexID(r, 32), image, state)
	b.WriteString(last)
	fmt.Fprintf(&b, "    Ready:          %v\n    Restart Count:  %d\n    Limits:\n      cpu:     1\n      memory:  %s\n    Requests:\n      cpu:      250m\n      memory:   %s\n", restarts == 0, restarts, limit, request)
	fmt.Fprintf(&b, "    Liveness:       http-get http://:8080/healthz delay=10s timeout=2s period=10s #success=1 #failure=3\n    Readiness:      http-get http://:8080/readyz delay=5s timeout=2s period=5s #success=1 #failure=3\n    Environment:\n")
	for _, env := range []string{"LOG_LEVEL=info", "GOMEMLIMIT=0", "DB_POOL_SIZE=20", "REDIS_ADDR=redis-cache-0.redis-cache.payments.svc:6379", "IDEMPOTENCY_CACHE_TTL=24h", "OTEL_EXPORTER_OTLP_ENDPOINT=http://otel-collector.monitoring:4317"} {
		k, v, _ := strings.Cut(env, "=")
		fmt.Fprintf(&b, "      %-28s %s\n", k+":", v)
	}
	fmt.Fprintf(&b, "    Mounts:\n      /etc/%s from config (ro)\n      /var/run/secrets/kubernetes.io/serviceaccount from kube-api-access-%s (ro)\n", svc, hexID(r, 5))
	b.WriteString("Conditions:\n  Type              Status\n  Initialized       True\n")
	fmt.Fprintf(&b, "  Ready             %v\n  ContainersReady   %v\n  PodScheduled      True\n", restarts == 0, restarts == 0)
	fmt.Fprintf(&b, "Volumes:\n  config:\n    Type:      ConfigMap (a volume populated by a ConfigMap)\n    Name:      %s-config\n    Optional:  false\nQoS Class:                   Burstable\nNode-Selectors:              cloud.google.com/gke-nodepool=prod-pool-1\nTolerations:                 node.kubernetes.io/not-ready:NoExecute op=Exists for 300s\n                             node.kubernetes.io/unreachable:NoExecute op=Exists for 300s\n", svc)
	b.WriteString("Events:\n  Type     Reason      Age                   From     Message\n  ----     ------      ----                  ----     -------\n")
	for _, e := range events {
		fmt.Fprintf(&b, "  %-8s %-11s %-21s %-8s %s\n", e[0], e[1], e[2], "kubelet", e[3])
	}
	return b.String()
}

func describeNode(name string) string {
	r := rng("node", name)
	var b strings.Builder
	fmt.Fprintf(&b, "Name:               %s\nRoles:              <none>\nLabels:             cloud.google.com/gke-nodepool=prod-pool-1\n                    node.kubernetes.io/instance-type=e2-standard-8\n                    topology.kubernetes.io/zone=us-central1-a\n", name)
	b.WriteString("CreationTimestamp:  Mon, 13 May 2024 09:12:44 +0000\nTaints:             <none>\nUnschedulable:      false\nConditions:\n  Type                 Status  LastHeartbeatTime                 Reason                       Message\n  ----                 ------  -----------------                 ------                       -------\n")
	for _, c := range [][3]string{
		{"MemoryPressure", "False", "KubeletHasSufficientMemory    kubelet has sufficient memory available"},
		{"DiskPressure", "False", "KubeletHasNoDiskPressure      kubelet has no disk pressure"},
		{"PIDPressure", "False", "KubeletHasSufficientPID       kubelet has sufficient PID available"},
		{"Ready", "True", "KubeletReady                  kubelet is posting ready status"},
	} {
		fmt.Fprintf(&b, "  %-20s %-7s Sat, 01 Jun 2024 14:07:%02d +0000   %s\n", c[0], c[1], r.IntN(30), c[2])
	}
	b.WriteString("Capacity:\n  cpu:                8\n  memory:             32880764Ki\n  pods:               110\nAllocatable:\n  cpu:                7910m\n  memory:             29214332Ki\n  pods:               110\nNon-terminated Pods:          (30 in total)\n  Namespace    Name                                         CPU Requests  CPU Limits  Memory Requests  Memory Limits  Age\n  ---------    ----                                         ------------  ----------  ---------------  -------------  ---\n")
	fmt.Fprintf(&b, "  %-12s %-44s %-13s %-11s %-16s %-14s %s\n", "payments", crashPod, "250m (3%)", "1 (12%)", "128Mi (0%)", "256Mi (0%)", "38m")
	fmt.Fprintf(&b, "  %-12s %-44s %-13s %-11s %-16s %-14s %s\n", "production", "checkout-6c8d7f9b4-w8n4k", "250m (3%)", "1 (12%)", "256Mi (0%)", "512Mi (1%)", "3d2h")
	for i := range 28 {
		ns := []string{"production", "monitoring", "kube-system", "payments"}[i%4]
		services := namespaceServices[ns]
		if len(services) == 0 {
			services = []string{"node-exporter", "fluent-bit", "kube-proxy", "otel-collector"}
		}
		fmt.Fprintf(&b, "  %-12s %-44s %-13s %-11s %-16s %-14s %dd\n", ns, services[r.IntN(len(services))]+"-"+hexID(r, 9)+"-"+hexID(r, 5),
			fmt.Sprintf("%dm (%d%%)", 100*(1+r.IntN(5)), 1+r.IntN(6)), "1 (12%)", fmt.Sprintf("%dMi (%d%%)", 128*(1+r.IntN(8)), 1+r.IntN(3)), fmt.Sprintf("%dMi (%d%%)", 256*(1+r.IntN(8)), 1+r.IntN(6)), 1+r.IntN(20))
	}
	b.WriteString("Allocated resources:\n  Resource           Requests       Limits\n  --------           --------       ------\n  cpu                3850m (48%)    12 (151%)\n  memory             11987Mi (41%)  21504Mi (75%)\nEvents:\n  Type    Reason                   Age   From                   Message\n  ----    ------                   ----  ----                   -------\n  Normal  NodeHasSufficientMemory  19d   kubelet                Node status is now: NodeHasSufficientMemory\n")
	return b.String()
}

// ---------------------------------------------------------------------------
// kubectl logs

// logMessage returns the level and message of one log line of a service.
// heap is the service's current heap in MiB, for payment-svc's cache stats.
func logMessage(r *rand.Rand, svc string, i int, heap int) (level, msg string) {
	switch svc {
	case "payment-svc":
		switch {
		case i%6 == 5:
			return "warn", fmt.Sprintf(`msg="idempotency cache stats" entries=%dk heap_alloc=%dMiB`, heap*7+300, heap)
		case r.IntN(3) == 0:
			return "info", fmt.Sprintf(`msg="charge authorized" provider=stripe amount_cents=%d latency_ms=%d`, 500+r.IntN(50000), 40+r.IntN(300))
		case r.IntN(2) == 0:
			return "info", fmt.Sprintf(`msg="idempotency key stored" key=idem_%s ttl=24h`, hexID(r, 12))
		default:
			return "info", fmt.Sprintf(`msg="request completed" method=POST path=/v1/charges status=201 duration_ms=%d`, 30+r.IntN(400))
		}
	case "checkout":
		switch r.IntN(4) {
		case 0:
			return "error", fmt.Sprintf(`msg="upstream payment-svc: connection refused" attempt=%d/3 retry_in=50ms`, 1+r.IntN(3))
		case 1:
			return "error", fmt.Sprintf(`msg="request completed" method=POST path=/api/v1/cart/checkout status=502 duration_ms=%d`, 150+r.IntN(200))
		case 2:
			return "info", fmt.Sprintf(`msg="cart loaded" items=%d cache=hit`, 1+r.IntN(9))
		default:
			return "info", fmt.Sprintf(`msg="request completed" method=POST path=/api/v1/cart/checkout status=200 duration_ms=%d`, 80+r.IntN(300))
		}
	}
	return "info", fmt.Sprintf(`msg="request completed" status=200 duration_ms=%d`, r.IntN(300))
}

// redisLine is one line of Redis's own log format.
func redisLine(r *rand.Rand, i, n int) string {
	at := fmt.Sprintf("1:M 01 Jun 2024 14:%02d:%02d.%03d", 2+i*7/max(n, 1), r.IntN(60), r.IntN(1000))
	switch i % 3 {
	case 0:
		return fmt.Sprintf("%s * Accepted 10.4.%d.%d:%d", at, r.IntN(8), 2+r.IntN(250), 30000+r.IntN(30000))
	case 1:
		return at + " # Error accepting a client connection: max number of clients reached (maxclients 1000)"
	}
	return fmt.Sprintf("%s * Client closed connection id=%d", at, 100000+r.IntN(900000))
}

func podLogs(a logsArgs) string {
	ns := orDefault(a.Namespace, "default")
	svc := serviceOf(a.Pod)
	r := rng("logs", ns, a.Pod, fmt.Sprint(a.Previous))
	n := a.lines()
	end := incidentTime
	if a.Previous {
		end = time.Date(2024, 6, 1, 14, 5, 27, 0, time.UTC)
	}
	t := end.Add(-time.Duration(n) * 800 * time.Millisecond)
	heap := 180 + r.IntN(20) // the story's replicas near their 256Mi limit
	switch {
	case strings.HasPrefix(a.Pod, "payment-svc-66b9c7d4f"): // v2.13.2, after the rollback
		heap = 85
	case svc == "payment-svc" && ns == "staging":
		heap = 90
	case a.Pod == crashPod && !a.Previous: // restarted 2 minutes ago
		heap = 40
	case a.Pod == replicaPod:
		heap = 224
	}
	lines := make([]string, 0, n+10)
	for i := range n {
		t = t.Add(time.Duration(400+r.IntN(800)) * time.Millisecond)
		if svc == "redis-cache" {
			lines = append(lines, redisLine(r, i, n))
			continue
		}
		if i%6 == 5 {
			heap += r.IntN(3)
		}
		level, msg := logMessage(r, svc, i, heap)
		lines = append(lines, fmt.Sprintf("%s level=%s service=%s %s trace_id=%s",
			t.Format("2006-01-02T15:04:05.000Z"), level, svc, msg, hexID(r, 16)))
	}
	if a.Previous && svc == "payment-svc" {
		lines = append(lines[:max(len(lines)-6, 0)],
			`2024-06-01T14:05:26.881Z level=warn service=payment-svc msg="idempotency cache stats" entries=1840k heap_alloc=251MiB`,
			`2024-06-01T14:05:27.003Z level=error service=payment-svc msg="GC forced" gc_pause_ms=212 heap_goal=268MiB`,
			`fatal error: runtime: out of memory`,
			``,
			`runtime stack:`,
			`runtime.throw({0x1a2b3c4?, 0x10000000?})`,
			`	/usr/local/go/src/runtime/panic.go:1023 +0x5c`,
			`goroutine 1 [running]:`,
			`github.com/acme/payments/internal/idempotency.(*Cache).Put(0xc0001a4000, {0xc01f2a3b40, 0x24}, {0xc02b1c9e00, 0x1a4, 0x200})`,
			`	/src/internal/idempotency/cache.go:58 +0x1d4`,
		)
	}
	return strings.Join(lines, "\n") + "\n"
}

// ---------------------------------------------------------------------------
// read_file

var storyFiles = map[string]string{
	"deploy/payments/payment-svc.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: payment-svc
  namespace: payments
  labels:
    app: payment-svc
    team: payments
  annotations:
    deployment.kubernetes.io/revision: "47"
spec:
  replicas: 3
  revisionHistoryLimit: 10
  selector:
    matchLabels:
      app: payment-svc
  strategy:
    type: RollingUpdate
    rollingUpdate:
      maxSurge: 1
      maxUnavailable: 0
  template:
    metadata:
      labels:
        app: payment-svc
        team: payments
      annotations:
        prometheus.io/scrape: "true"
        prometheus.io/port: "9090"
    spec:
      serviceAccountName: payment-svc
      containers:
        - name: payment-svc
          image: gcr.io/prod/payment-svc:v2.14.0
          ports:
            - containerPort: 8080
            - containerPort: 9090
          env:
            - name: LOG_LEVEL
              value: info
            - name: DB_POOL_SIZE
              value: "20"
            - name: REDIS_ADDR
              value: redis-cache-0.redis-cache.payments.svc:6379
            - name: IDEMPOTENCY_CACHE_TTL
              value: 24h
            - name: OTEL_EXPORTER_OTLP_ENDPOINT
              value: http://otel-collector.monitoring:4317
          resources:
            requests:
              cpu: 250m
              memory: 128Mi
            limits:
              cpu: "1"
              memory: 256Mi
          livenessProbe:
            httpGet: {path: /healthz, port: 8080}
            initialDelaySeconds: 10
          readinessProbe:
            httpGet: {path: /readyz, port: 8080}
            initialDelaySeconds: 5
`,
	"deploy/payments/hpa.yaml": `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: payment-svc
  namespace: payments
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: payment-svc
  minReplicas: 3
  maxReplicas: 12
  metrics:
    - type: Resource
      resource:
        name: cpu
        target:
          type: Utilization
          averageUtilization: 70
  behavior:
    scaleDown:
      stabilizationWindowSeconds: 300
`,
	"deploy/payments/pdb.yaml": `apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: payment-svc
  namespace: payments
spec:
  minAvailable: 2
  selector:
    matchLabels:
      app: payment-svc
`,
	"CHANGELOG.md": `# Changelog

## v2.14.0 — 2024-06-01 13:29 UTC

- PAY-2291: in-memory idempotency cache in front of Redis, to cut p99 latency of
  POST /v1/charges. Entries live for IDEMPOTENCY_CACHE_TTL (default 24h); the
  cache is unbounded by design for now, size limits to follow.
- PAY-2288: upgrade stripe-go to v76.25.0.
- PAY-2270: structured logging of provider latency.

## v2.13.2 — 2024-05-28

- PAY-2265: fix double refund on webhook retries.
- PAY-2259: raise DB_POOL_SIZE default to 20.

## v2.13.1 — 2024-05-21

- PAY-2241: retry Stripe 429 with exponential backoff.
- PAY-2238: expose payment_provider_latency_seconds histogram.

## v2.13.0 — 2024-05-14

- PAY-2210: multi-currency payouts (EUR, GBP, JPY).
- PAY-2199: idempotency keys stored in Redis with a 24h TTL.
`,
	"internal/idempotency/cache.go": `// Package idempotency remembers the outcome of payment requests by their
// idempotency key, so a retried request returns the first answer.
package idempotency

import (
	"sync"
	"time"
)

// Entry is a stored response.
type Entry struct {
	Status  int
	Body    []byte
	Expires time.Time
}

// Cache is an in-memory idempotency cache (PAY-2291).
type Cache struct {
	mu      sync.RWMutex
	ttl     time.Duration
	entries map[string]Entry
}

// New returns a cache whose entries expire after ttl.
func New(ttl time.Duration) *Cache {
	return &Cache{ttl: ttl, entries: make(map[string]Entry)}
}

// Get returns the entry for key, evicting it when it has expired.
func (c *Cache) Get(key string) (Entry, bool) {
	c.mu.RLock()
	e, ok := c.entries[key]
	c.mu.RUnlock()
	if !ok {
		return Entry{}, false
	}
	if time.Now().After(e.Expires) {
		c.mu.Lock()
		delete(c.entries, key) // expired entries are only evicted here
		c.mu.Unlock()
		return Entry{}, false
	}
	return e, true
}

// Put stores the response for key. There is no size bound: every key stays
// until its TTL passes and it is read again.
func (c *Cache) Put(key string, status int, body []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries[key] = Entry{Status: status, Body: body, Expires: time.Now().Add(c.ttl)}
}

// Len is the number of entries held.
func (c *Cache) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.entries)
}
`,
	"internal/payments/client.go": `// Package payments is checkout's client for payment-svc.
package payments

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

const (
	maxAttempts = 3
	retryDelay  = 50 * time.Millisecond // fixed, no jitter
)

// Client calls payment-svc.
type Client struct {
	base string
	http *http.Client
}

// Charge creates a charge, retrying any 5xx answer.
func (c *Client) Charge(ctx context.Context, req ChargeRequest) (*Charge, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("encode charge: %w", err)
	}
	var lastErr error
	for attempt := 1; attempt <= maxAttempts; attempt++ {
		r, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/v1/charges", bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		r.Header.Set("Idempotency-Key", req.IdempotencyKey)
		resp, err := c.http.Do(r)
		if err == nil && resp.StatusCode < 500 {
			defer resp.Body.Close()
			var ch Charge
			return &ch, json.NewDecoder(resp.Body).Decode(&ch)
		}
		if err == nil {
			resp.Body.Close()
			err = fmt.Errorf("payment-svc: %s", resp.Status)
		}
		lastErr = err
		time.Sleep(retryDelay)
	}
	return nil, fmt.Errorf("charge after %d attempts: %w", maxAttempts, lastErr)
}
`,
}

// fileContent returns the content of a repository file: the story's files
// as written above (Go files continue with generated code), other Go and
// YAML files generated by contextguardtest, anything else not found.
func fileContent(p string) string {
	p = path.Clean(strings.TrimPrefix(p, "./"))
	seed := int64(rng("file", p).Uint64() >> 1)
	if s, ok := storyFiles[p]; ok {
		if strings.HasSuffix(p, ".go") {
			return s + "\n" + goBody(9000, seed)
		}
		return s
	}
	switch path.Ext(p) {
	case ".go":
		return "package " + path.Base(path.Dir(p)) + "\n\n" + goBody(4000, seed)
	case ".yaml", ".yml":
		return coretest.Generate(coretest.KindYAML, 2500, seed)
	}
	return "cat: " + p + ": No such file or directory\n"
}

// goBody is generated Go code without its package clause and imports.
func goBody(size int, seed int64) string {
	code := coretest.Generate(coretest.KindGoCode, size, seed)
	if i := strings.Index(code, "\n)\n"); i >= 0 {
		code = code[i+3:]
	}
	// End on a complete function.
	if i := strings.LastIndex(code, "\n}\n"); i >= 0 {
		code = code[:i+3]
	}
	return strings.TrimLeft(code, "\n")
}
