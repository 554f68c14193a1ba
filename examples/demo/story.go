package main

import (
	"fmt"
	"strings"
)

// The story the demo plays: an on-call SRE and an assistant agent
// investigating incident INC-4127 ("checkout returns 5xx in production").
// The user side (the turns' messages) is the same with the scripted model and
// with Gemini; the scripted model also plays the assistant side (steps,
// findings, answers).

// systemInstruction is the agent's instruction, with both models.
const systemInstruction = `You are an on-call SRE assistant for a production Kubernetes cluster.
Investigate with the tools you have (kubectl_get_pods, kubectl_describe, kubectl_logs, read_file); call several tools at once when they are independent.
Quote exact pod names, error messages, versions and numbers.
State every conclusion on its own line starting with "Finding:", then answer the user briefly.`

// podsArgs are the arguments of kubectl_get_pods.
type podsArgs struct {
	Namespace string `json:"namespace" jsonschema:"Kubernetes namespace, e.g. payments"`
	Selector  string `json:"selector,omitempty" jsonschema:"optional label selector, e.g. app=payment-svc"`
}

func (a podsArgs) command() string {
	cmd := "kubectl get pods -n " + orDefault(a.Namespace, "default")
	if a.Selector != "" {
		cmd += " -l " + a.Selector
	}
	return cmd + " -o wide"
}

// describeArgs are the arguments of kubectl_describe.
type describeArgs struct {
	Kind      string `json:"kind" jsonschema:"resource kind: pod or node"`
	Name      string `json:"name" jsonschema:"resource name"`
	Namespace string `json:"namespace,omitempty" jsonschema:"namespace of the resource (not for nodes)"`
}

func (a describeArgs) command() string {
	kind := orDefault(strings.ToLower(a.Kind), "pod")
	if kind == "node" {
		return "kubectl describe node " + a.Name
	}
	return "kubectl describe " + kind + " " + a.Name + " -n " + orDefault(a.Namespace, "default")
}

// logsArgs are the arguments of kubectl_logs.
type logsArgs struct {
	Namespace string `json:"namespace" jsonschema:"namespace of the pod"`
	Pod       string `json:"pod" jsonschema:"pod name"`
	Tail      int    `json:"tail,omitempty" jsonschema:"number of most recent lines (default 40, at most 500)"`
	Previous  bool   `json:"previous,omitempty" jsonschema:"logs of the previous, terminated container"`
}

func (a logsArgs) lines() int {
	switch {
	case a.Tail <= 0:
		return 40
	case a.Tail > 500:
		return 500
	}
	return a.Tail
}

func (a logsArgs) command() string {
	cmd := fmt.Sprintf("kubectl logs %s -n %s --tail=%d", a.Pod, orDefault(a.Namespace, "default"), a.lines())
	if a.Previous {
		cmd += " --previous"
	}
	return cmd
}

// fileArgs are the arguments of read_file.
type fileArgs struct {
	Path string `json:"path" jsonschema:"path of the file, relative to the repository root"`
}

func (a fileArgs) command() string { return "cat " + a.Path }

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// commander is a tool's arguments: each renders as the shell command it
// stands for, which the tool echoes as the first line of its output. The
// scripted model recognises its steps by these commands.
type commander interface{ command() string }

// toolCall is one call the scripted model makes.
type toolCall struct {
	Tool string
	Args commander
}

// step is one model response calling tools; several calls in one step are
// parallel calls.
type step struct {
	Say   string
	Calls []toolCall
}

// storyTurn is one user message and the scripted work answering it.
type storyTurn struct {
	User     string
	Steps    []step
	Findings []string // each becomes a "Finding: ..." line of the answer
	Answer   string
}

const (
	crashPod   = "payment-svc-7d9f8b6c5-x2k4p"
	replicaPod = "payment-svc-7d9f8b6c5-q8w2n"
	checkout   = "checkout-6c8d7f9b4-h7j2m"
	stagingPay = "payment-svc-5f6b7c8d9-t4r6y"
	rolledBack = "payment-svc-66b9c7d4f-m3n8k"
	crashNode  = "gke-prod-pool-1-a8f3e2c1-x7k2"
)

func get(tool string, a commander) toolCall { return toolCall{Tool: tool, Args: a} }

// story is the incident, turn by turn.
var story = []storyTurn{
	{
		User:     "We just got paged: checkout returns 5xx for about 12% of requests in production (INC-4127). Start with the payments namespace: which pods look unhealthy?",
		Steps:    []step{{Say: "Listing the pods in payments.", Calls: []toolCall{get("kubectl_get_pods", podsArgs{Namespace: "payments"})}}},
		Findings: []string{crashPod + " is in CrashLoopBackOff with 14 restarts in 38m; the other two payment-svc replicas restarted 9 and 11 times."},
		Answer:   "All three payment-svc replicas of the v2.14.0 rollout are unstable; the rest of payments looks healthy.",
	},
	{
		User:     "Describe the crashing payment-svc pod. Why does it keep restarting?",
		Steps:    []step{{Say: "Describing the crashing pod.", Calls: []toolCall{get("kubectl_describe", describeArgs{Kind: "pod", Name: crashPod, Namespace: "payments"})}}},
		Findings: []string{"Last State of " + crashPod + " is Terminated, Reason OOMKilled, Exit Code 137; memory limit 256Mi, image gcr.io/prod/payment-svc:v2.14.0."},
		Answer:   "It is killed for exceeding its memory limit, not crashing on its own.",
	},
	{
		User: "Get me the logs of the current and of the previous container of that pod.",
		Steps: []step{{Say: "Fetching both containers' logs in parallel.", Calls: []toolCall{
			get("kubectl_logs", logsArgs{Namespace: "payments", Pod: crashPod, Tail: 80}),
			get("kubectl_logs", logsArgs{Namespace: "payments", Pod: crashPod, Tail: 80, Previous: true}),
		}}},
		Findings: []string{"The previous container logged idempotency cache entries=1.84M and heap_alloc=251MiB just before \"fatal error: runtime: out of memory\"."},
		Answer:   "Memory grows steadily with the idempotency cache until the container is killed.",
	},
	{
		User:     "Show me the deployment manifest for payment-svc.",
		Steps:    []step{{Say: "Reading the manifest.", Calls: []toolCall{get("read_file", fileArgs{Path: "deploy/payments/payment-svc.yaml"})}}},
		Findings: []string{"deploy/payments/payment-svc.yaml sets limits.memory 256Mi, requests.memory 128Mi, IDEMPOTENCY_CACHE_TTL=24h and no IDEMPOTENCY_CACHE_MAX_ENTRIES."},
		Answer:   "Nothing bounds the cache except a 24h TTL.",
	},
	{
		User: "Is checkout itself healthy? Check its pods in production and then the logs of one of them.",
		Steps: []step{
			{Say: "Listing the checkout pods first.", Calls: []toolCall{get("kubectl_get_pods", podsArgs{Namespace: "production"})}},
			{Say: "Now the logs of one checkout replica.", Calls: []toolCall{get("kubectl_logs", logsArgs{Namespace: "production", Pod: checkout, Tail: 100})}},
		},
		Findings: []string{"checkout pods are Running with 0 restarts; " + checkout + " logs \"upstream payment-svc: connection refused\" and retries each charge 3 times."},
		Answer:   "checkout is a victim: its 5xx come from payment-svc being down.",
	},
	{
		User:     "Read the payment client in the checkout repo: how does it retry?",
		Steps:    []step{{Say: "Reading the client.", Calls: []toolCall{get("read_file", fileArgs{Path: "internal/payments/client.go"})}}},
		Findings: []string{"internal/payments/client.go retries any 5xx 3 times with a fixed 50ms delay and no jitter, tripling the load on payment-svc during the outage."},
		Answer:   "The retry policy amplifies the outage; worth a follow-up.",
	},
	{
		User: "Check redis-cache too, payment-svc keeps idempotency keys there. Describe the pod and fetch its logs.",
		Steps: []step{{Say: "Describing redis-cache-0 and reading its logs in parallel.", Calls: []toolCall{
			get("kubectl_describe", describeArgs{Kind: "pod", Name: "redis-cache-0", Namespace: "payments"}),
			get("kubectl_logs", logsArgs{Namespace: "payments", Pod: "redis-cache-0", Tail: 80}),
		}}},
		Findings: []string{"redis-cache-0 is healthy but logged \"max number of clients reached\" (maxclients 1000) between 14:02 and 14:09, while payment-svc pods were restarting."},
		Answer:   "Redis is a symptom of reconnect storms, not a cause.",
	},
	{
		User:     "What changed in the last release? Read the changelog.",
		Steps:    []step{{Say: "Reading the changelog.", Calls: []toolCall{get("read_file", fileArgs{Path: "CHANGELOG.md"})}}},
		Findings: []string{"v2.14.0 (deployed 13:29) added an in-memory idempotency cache (PAY-2291), described as unbounded with a 24h TTL."},
		Answer:   "The timing matches the first OOMKilled at 13:41.",
	},
	{
		User:     "Read the cache implementation.",
		Steps:    []step{{Say: "Reading the cache.", Calls: []toolCall{get("read_file", fileArgs{Path: "internal/idempotency/cache.go"})}}},
		Findings: []string{"internal/idempotency/cache.go stores entries in a map and evicts expired ones only on Get; there is no size bound, so memory grows with traffic."},
		Answer:   "This is the leak.",
	},
	{
		User: "Compare with staging: are the payment pods there running out of memory too?",
		Steps: []step{{Say: "Listing staging pods and reading one payment-svc log, in parallel.", Calls: []toolCall{
			get("kubectl_get_pods", podsArgs{Namespace: "staging"}),
			get("kubectl_logs", logsArgs{Namespace: "staging", Pod: stagingPay, Tail: 100}),
		}}},
		Findings: []string{"staging runs v2.14.0 too but at about 3% of production traffic; " + stagingPay + " heap is 96MiB, no OOM yet."},
		Answer:   "Staging would have hit it in about a day.",
	},
	{
		User:     "Look at the node the crashing pod ran on: any memory pressure?",
		Steps:    []step{{Say: "Describing the node.", Calls: []toolCall{get("kubectl_describe", describeArgs{Kind: "node", Name: crashNode})}}},
		Findings: []string{"node " + crashNode + " reports MemoryPressure False with 41% of memory allocatable in use; the kills come from the container limit, not the node."},
		Answer:   "No node problem.",
	},
	{
		User:     "Check the logs of the other payment-svc replica before it restarts too.",
		Steps:    []step{{Say: "Reading the replica's logs.", Calls: []toolCall{get("kubectl_logs", logsArgs{Namespace: "payments", Pod: replicaPod, Tail: 120})}}},
		Findings: []string{replicaPod + " heap is at 231MiB and growing about 4MiB per minute; it will be OOMKilled within minutes."},
		Answer:   "We should act now.",
	},
	{
		User: "Propose a mitigation. Read the HPA and then the PDB of payment-svc first.",
		Steps: []step{
			{Say: "Reading the HPA.", Calls: []toolCall{get("read_file", fileArgs{Path: "deploy/payments/hpa.yaml"})}},
			{Say: "And the PDB.", Calls: []toolCall{get("read_file", fileArgs{Path: "deploy/payments/pdb.yaml"})}},
		},
		Findings: []string{"the HPA scales payment-svc on CPU 70% only and the PDB requires minAvailable 2; mitigation: roll back to v2.13.2, then set limits.memory 512Mi and IDEMPOTENCY_CACHE_MAX_ENTRIES=200000."},
		Answer:   "Rollback first (kubectl rollout undo deployment/payment-svc -n payments), fix forward after.",
	},
	{
		User: "The rollback is done. Verify it: list the payment-svc pods, then check the logs of a new pod.",
		Steps: []step{
			{Say: "Listing payment-svc pods after the rollback.", Calls: []toolCall{get("kubectl_get_pods", podsArgs{Namespace: "payments", Selector: "app=payment-svc"})}},
			{Say: "Reading a new pod's logs.", Calls: []toolCall{get("kubectl_logs", logsArgs{Namespace: "payments", Pod: rolledBack, Tail: 100})}},
		},
		Findings: []string{"after the rollback all 3 payment-svc replicas run v2.13.2 with 0 restarts; " + rolledBack + " heap is stable at 88MiB and checkout 5xx dropped to 0.2%."},
		Answer:   "The incident is mitigated.",
	},
	{
		User: "Write the incident summary for INC-4127: what you found, the root cause and the follow-ups.",
	},
}

// storyCommands returns the command of every call of turn t's step s.
func storyCommands(t, s int) []string {
	var out []string
	for _, c := range story[t].Steps[s].Calls {
		out = append(out, c.Args.command())
	}
	return out
}

// allFindings lists every finding of the story, in order.
func allFindings() []string {
	var out []string
	for _, t := range story {
		out = append(out, t.Findings...)
	}
	return out
}
