// Command demo runs an ADK agent with kubectl-like tools through the context
// guard, offline: a scripted model plays an SRE investigating a cluster, the
// tools return realistic output, and the guard compacts the conversation
// when it nears the (deliberately small) context window.
package main

import (
	"context"
	"fmt"
	"iter"
	"log/slog"
	"os"
	"strings"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool"
	"google.golang.org/adk/tool/functiontool"
	"google.golang.org/genai"

	"github.com/adk-contextguard/contextguard"
)

const window = 16_000

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

type podArgs struct {
	Namespace string `json:"namespace"`
}

func run(ctx context.Context) error {
	getPods, err := functiontool.New(functiontool.Config{Name: "kubectl_get_pods", Description: "List pods in a namespace."},
		func(_ tool.Context, a podArgs) (map[string]any, error) {
			return map[string]any{"output": podTable(a.Namespace, 60)}, nil
		})
	if err != nil {
		return err
	}
	llm := &sreModel{}
	assistant, err := llmagent.New(llmagent.Config{
		Name:        "sre",
		Model:       llm,
		Instruction: "You are an SRE assistant. Use the tools to investigate the cluster.",
		Tools:       []tool.Tool{getPods},
	})
	if err != nil {
		return err
	}
	compactions := 0
	guard := contextguard.New(nil,
		contextguard.WithLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))),
		contextguard.WithOnCompaction(func(_ context.Context, e contextguard.CompactionEvent) {
			compactions++
			fmt.Printf("   >> compaction %d: %d -> %d tokens (threshold %d, window %d, fallback %v)\n",
				compactions, e.TokensBefore, e.TokensAfter, e.Threshold, e.Window, e.Fallback)
		}))
	guard.Add("sre", llm, contextguard.WithMaxTokens(window))
	r, err := runner.New(runner.Config{
		AppName: "demo", Agent: assistant, SessionService: session.InMemoryService(),
		PluginConfig: guard.PluginConfig(), AutoCreateSession: true,
	})
	if err != nil {
		return err
	}
	fmt.Printf("contextguard demo: window %d tokens, offline scripted model\n", window)
	for turn := 1; turn <= 12; turn++ {
		q := fmt.Sprintf("Turn %d: check the pods in namespace team-%d and tell me which are failing.", turn, turn)
		fmt.Printf("user: %s\n", q)
		for ev, err := range r.Run(ctx, "operator", "incident-42", genai.NewContentFromText(q, genai.RoleUser), agent.RunConfig{}) {
			if err != nil {
				return err
			}
			if ev.UsageMetadata != nil && !ev.Partial {
				fmt.Printf("   step: prompt %6d tokens (%3.0f%% of window)\n", ev.UsageMetadata.PromptTokenCount,
					100*float64(ev.UsageMetadata.PromptTokenCount)/window)
			}
		}
	}
	fmt.Printf("done: %d model calls, %d compactions, no request over the window\n", llm.calls, compactions)
	return nil
}

// sreModel is a scripted model: it calls kubectl_get_pods once per user
// request, then answers; asked to summarize, it returns a short summary.
type sreModel struct{ calls int }

func (m *sreModel) Name() string { return "gemini-2.5-flash" }

func (m *sreModel) GenerateContent(_ context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	m.calls++
	size := 0
	for _, c := range req.Contents {
		for _, p := range c.Parts {
			size += len(p.Text)
			if p.FunctionResponse != nil {
				size += len(fmt.Sprint(p.FunctionResponse.Response))
			}
		}
	}
	usage := &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: int32(size/3 + 200)}
	last := req.Contents[len(req.Contents)-1]
	var out *genai.Content
	switch {
	case req.Config != nil && req.Config.SystemInstruction != nil && strings.Contains(req.Config.SystemInstruction.Parts[0].Text, "compact the conversation"):
		out = genai.NewContentFromText("## Current State\nInvestigating failing pods namespace by namespace.\n## Exact Next Steps\nContinue with the next namespace.", genai.RoleModel)
	case last.Parts[0].FunctionResponse != nil:
		out = genai.NewContentFromText("Two pods are in CrashLoopBackOff; the rest are Running.", genai.RoleModel)
	default:
		ns := "default"
		if i := strings.Index(last.Parts[0].Text, "team-"); i >= 0 {
			ns = strings.Fields(last.Parts[0].Text[i:])[0]
		}
		out = &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{FunctionCall: &genai.FunctionCall{Name: "kubectl_get_pods", Args: map[string]any{"namespace": ns}}}}}
	}
	return func(yield func(*model.LLMResponse, error) bool) {
		yield(&model.LLMResponse{Content: out, UsageMetadata: usage}, nil)
	}
}

func podTable(ns string, n int) string {
	var b strings.Builder
	b.WriteString("NAME                                READY   STATUS             RESTARTS   AGE\n")
	for i := range n {
		status, restarts := "Running", 0
		if i%29 == 3 {
			status, restarts = "CrashLoopBackOff", 17+i
		}
		fmt.Fprintf(&b, "%s-api-%05x-%04d          1/1     %-18s %-10d %dd\n", ns, i*7919, i, status, restarts, 1+i%9)
	}
	return b.String()
}
