package coretest

import (
	"encoding/base64"
	"hash/fnv"
	"math"
	"strings"
)

// The seed matrix: the 91 stress scenarios of the seeds, by window, with the
// compactions each must at least make.

// Windows of the seed matrix. The seeds write "4k", "8k", "200k" and "1M";
// the matrix uses these rounded values exactly (4k is 4_000, not 4_096).
const (
	Window4k   = 4_000
	Window8k   = 8_000
	Window200k = 200_000
	Window1M   = 1_000_000
)

// Defaults of the matrix for "minimal text" rows.
const (
	minimalUserText = 40
	minimalResponse = 40
)

// plan helpers -------------------------------------------------------------

// each returns a plan function that gives every turn the same plan.
func each(p TurnPlan) func(int) TurnPlan { return func(int) TurnPlan { return p } }

// vary returns a deterministic size in [lo, hi] for call i of turn t.
func vary(lo, hi, t, i int) int {
	if hi <= lo {
		return lo
	}
	return lo + (t*7919+i*104729+t*i*31)%(hi-lo+1)
}

// everyNth gives plan p to turns where turn%n == n-1 (every n-th turn) and
// a text-only plan with the same text sizes to the others.
func everyNth(n int, p TurnPlan) func(int) TurnPlan {
	return func(t int) TurnPlan {
		if t%n == n-1 {
			return p
		}
		return TurnPlan{UserTextSize: p.UserTextSize, ResponseSize: p.ResponseSize}
	}
}

// only gives plan p to turn k and a text-only plan to the others.
func only(k int, p TurnPlan) func(int) TurnPlan {
	return func(t int) TurnPlan {
		if t == k {
			return p
		}
		return TurnPlan{UserTextSize: p.UserTextSize, ResponseSize: p.ResponseSize}
	}
}

// mcpCalls returns n parallel calls to MCP tools (rotating over defs tools)
// with sizes in [lo, hi].
func mcpCalls(t, n, defs, lo, hi int) []ToolStep {
	calls := make([]ToolCall, n)
	for i := range calls {
		calls[i] = ToolCall{Name: MCPToolName((t*n + i) % defs), Size: vary(lo, hi, t, i), Kind: KindPrettyJSON}
	}
	return Parallel(calls...)
}

// mixedDebug rotates over the given calls: turn t calls a rotating subset of
// one to three of them in parallel.
func mixedDebug(calls ...ToolCall) func(int) TurnPlan {
	return func(t int) TurnPlan {
		n := 1 + t%3
		var cs []ToolCall
		for i := range n {
			cs = append(cs, calls[(t+i)%len(calls)])
		}
		return TurnPlan{UserTextSize: 300, ResponseSize: 400, Steps: Parallel(cs...)}
	}
}

// mixedWorkload is the 100- and 200-turn mix: text-only turns, small calls,
// parallel bursts, sequential chains and single big results, sizes in
// [lo, hi].
func mixedWorkload(lo, hi int) func(int) TurnPlan {
	names := []string{"read_file", "grep", "http_get", "sql_query", "kubectl_logs", "prometheus_query"}
	return func(t int) TurnPlan {
		p := TurnPlan{UserTextSize: 300, ResponseSize: 500}
		name := func(i int) string { return names[(t+i)%len(names)] }
		switch t % 5 {
		case 1:
			p.Steps = Parallel(Call(name(0), vary(lo, lo+(hi-lo)/10, t, 0)))
		case 2:
			p.Steps = Parallel(Call(name(0), vary(lo, hi/3, t, 0)), Call(name(1), vary(lo, hi/3, t, 1)))
		case 3:
			p.Steps = Sequential(Call(name(0), vary(lo, hi/2, t, 0)), Call(name(1), vary(lo, hi/2, t, 1)))
		case 4:
			p.Steps = Parallel(Call(name(0), vary(hi/2, hi, t, 0)))
		}
		return p
	}
}

func nameSeed(name string) int64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(name))
	return int64(h.Sum64() & 0x7fffffffffffffff)
}

// SeedMatrix returns the 91 scenarios of the earlier guard's matrix (ARCHITECTURE.md, Origins): 42 "Stress" rows and 49
// "Brutal" rows, with the seed's names, windows, turns, token ratios, usage
// metadata, tools, system prompts, inline data and sequential chains. Sizes
// are characters (bytes), as in the seed. Where the seed gives a range or a
// pattern ("mixed", "every 3rd"), the plan picks deterministic sizes inside
// it.
//
// MinSummarizerCalls is a conservative lower bound in seed mode, derived from
// the plan without running it: 1 for a row whose conversation (G tokens, with
// a 10% margin) cannot fit in the window beside its fixed part (system prompt
// and tool declarations), 0 otherwise; for the RepeatedCompactions rows,
// whose items are small, ceil(0.9*G/W)-1 (each compaction can absorb at most
// one window of growth). Rows with a KnownLimitation, or whose fixed part
// alone is over the usual trigger (80% of the window, leaving no room for a
// summary worth asking for), expect 0.
func SeedMatrix() []Scenario {
	s := func(name string, window, turns int, ratio float64, plan func(int) TurnPlan) Scenario {
		return Scenario{Prefix: "Stress", Name: name, Window: window, Turns: turns, TokenRatio: ratio, Plan: plan}
	}
	b := func(name string, window, turns int, ratio float64, plan func(int) TurnPlan) Scenario {
		return Scenario{Prefix: "Brutal", Name: name, Window: window, Turns: turns, TokenRatio: ratio, Plan: plan}
	}
	noUsage := func(sc Scenario) Scenario { sc.NoUsageMetadata = true; return sc }
	system := func(sc Scenario, size int) Scenario { sc.SystemPromptSize = size; return sc }
	defs := func(sc Scenario, n, size int) Scenario { sc.ToolDefs, sc.ToolDefSchemaSize = n, size; return sc }
	desc := func(sc Scenario, d string) Scenario { sc.Description = d; return sc }

	conversation := func(user, resp int) func(int) TurnPlan {
		return func(t int) TurnPlan {
			return TurnPlan{UserTextSize: vary(user/2, user, t, 0), ResponseSize: vary(resp/2, resp, t, 1)}
		}
	}
	oneTool := func(name string, size int) func(int) TurnPlan {
		return each(TurnPlan{UserTextSize: 300, ResponseSize: 300, Steps: Parallel(Call(name, size))})
	}
	storm := func(sizes ...int) func(int) TurnPlan {
		return func(t int) TurnPlan {
			var cs []ToolCall
			for i, sz := range sizes {
				cs = append(cs, ToolCall{Name: []string{"fetch", "process", "http_get"}[i%3], Size: sz})
			}
			return TurnPlan{UserTextSize: minimalUserText, ResponseSize: minimalResponse, Steps: Parallel(cs...)}
		}
	}
	chain := func(user, resp int, calls ...ToolCall) func(int) TurnPlan {
		return each(TurnPlan{UserTextSize: user, ResponseSize: resp, Steps: Sequential(calls...)})
	}
	withImages := func(every int, sizes []int, inner func(int) TurnPlan) func(int) TurnPlan {
		return func(t int) TurnPlan {
			p := inner(t)
			if t%every == 0 {
				p.Images = sizes
			}
			return p
		}
	}

	rows := []Scenario{
		// ---------------- Stress (42) ----------------
		desc(s("200k_NormalConversation", Window200k, 30, 2.0, conversation(1000, 2500)), "no tools"),
		desc(s("200k_ToolHeavy", Window200k, 20, 2.0, func(t int) TurnPlan {
			return TurnPlan{UserTextSize: 400, ResponseSize: 800, Steps: Parallel(
				Call("kubectl_logs", vary(10_000, 20_000, t, 0)), Call("sql_query", vary(10_000, 20_000, t, 1)), Call("http_get", vary(10_000, 20_000, t, 2)))}
		}), "3 parallel tools per turn, 10k-20k each"),
		desc(s("200k_SingleGiantToolResponse", Window200k, 3, 2.0, only(1, TurnPlan{UserTextSize: 300, ResponseSize: 500, Steps: Parallel(Call("kubectl_logs", 300_000))})), "one 300k tool response"),
		desc(s("200k_ToolBurst_10Parallel", Window200k, 3, 2.0, func(t int) TurnPlan {
			cs := make([]ToolCall, 10)
			for i := range cs {
				cs[i] = Call([]string{"kubectl_describe", "http_get", "grep"}[i%3], 5_000)
			}
			return TurnPlan{UserTextSize: 300, ResponseSize: 500, Steps: Parallel(cs...)}
		}), "10 parallel tools, 5k each"),
		desc(noUsage(s("200k_NoUsageMetadata", Window200k, 25, 2.5, oneTool("http_get", 8_000))), "no usage metadata, 1 tool/turn 8k"),
		desc(s("200k_LongRunning_50Turns", Window200k, 50, 2.2, everyNth(3, TurnPlan{UserTextSize: 500, ResponseSize: 1000, Steps: Parallel(Call("read_file", 5_000), Call("kubectl_logs", 15_000))})), "tools every 3rd turn (5k+15k)"),
		desc(s("200k_HighTokenRatio", Window200k, 15, 3.0, oneTool("sql_query", 10_000)), "ratio 3.0, 1 tool/turn 10k"),
		desc(s("200k_VeryHighTokenRatio_4x", Window200k, 10, 4.0, oneTool("kubectl_logs", 20_000)), "ratio 4.0, 1 tool/turn 20k"),
		desc(system(s("200k_LargeSystemPrompt", Window200k, 20, 2.0, oneTool("read_file", 5_000)), 50_000), "50k system prompt, 1 tool/turn 5k"),
		desc(s("200k_MassiveToolBurst", Window200k, 2, 2.0, func(t int) TurnPlan {
			cs := make([]ToolCall, 15)
			for i := range cs {
				cs[i] = Call([]string{"kubectl_logs", "http_get", "sql_query"}[i%3], 50_000)
			}
			return TurnPlan{UserTextSize: 300, ResponseSize: 500, Steps: Parallel(cs...)}
		}), "15 parallel tools, 50k each"),
		desc(s("200k_RepeatedCompactions", Window200k, 60, 2.0, everyNth(2, TurnPlan{UserTextSize: 400, ResponseSize: 600, Steps: Parallel(Call("kubectl_logs", 30_000), Call("grep", 10_000))})), "tools every 2nd turn (30k+10k)"),
		func() Scenario {
			sc := s("200k_LateUsageMetadata", Window200k, 25, 2.0, func(t int) TurnPlan {
				return TurnPlan{UserTextSize: 300, ResponseSize: 500, Steps: Parallel(Call("http_get", vary(5_000, 10_000, t, 0)))}
			})
			sc.LateTokenRatio, sc.UsageFromTurn = 2.5, 5
			return desc(sc, "5 turns without usage metadata (ratio 2.0), then 20 with (ratio 2.5); 1 tool/turn 5-10k")
		}(),
		desc(s("200k_100Turns_MixedWorkload", Window200k, 100, 2.3, mixedWorkload(1_000, 50_000)), "mixed workload 1k-50k"),
		desc(s("200k_KubeAgent", Window200k, 20, 2.5, chain(300, 800, Call("kubectl_get_pods", 15_000), Call("kubectl_describe", 10_000), Call("kubectl_logs", 25_000))), "kubectl get pods (15k) -> describe (10k) -> logs (25k)"),
		desc(s("200k_MixedDebugSession", Window200k, 25, 2.2, mixedDebug(Call("prometheus_query", 20_000), Call("sql_query", 15_000), Call("http_get", 500), Call("grep", 8_000))), "prometheus (20k) + sql (15k) + http (500) + grep (8k) mixed"),
		desc(s("200k_PureToolStorm", Window200k, 30, 2.0, storm(5_000, 5_000)), "2 tools/turn 5k each, minimal text"),
		desc(s("200k_CodingAgent", Window200k, 15, 2.5, chain(400, 600, Call("read_file", 8_000), Call("edit_file", 2_000), Call("run_tests", 12_000))), "read_file (8k) -> edit_file (2k) -> run_tests (12k)"),
		desc(s("1M_NormalConversation", Window1M, 50, 2.0, oneTool("http_get", 10_000)), "1 tool/turn 10k"),
		desc(s("1M_HeavyTools", Window1M, 30, 2.0, each(TurnPlan{UserTextSize: 400, ResponseSize: 800, Steps: Parallel(Call("read_file", 50_000), Call("grep", 20_000), Call("run_tests", 30_000))})), "read_file (50k) + grep (20k) + tests (30k)"),
		desc(s("4k_NormalConversation", Window4k, 20, 1.8, conversation(400, 600)), "no tools"),
		desc(s("4k_WithSmallTools", Window4k, 10, 1.8, oneTool("http_get", 500)), "1 tool/turn 500"),
		desc(s("8k_NormalConversation", Window8k, 20, 1.8, conversation(600, 1000)), "no tools"),
		desc(s("8k_SmallToolCalls", Window8k, 15, 1.8, oneTool("grep", 1_000)), "1 tool/turn 1k"),
		desc(s("8k_LargeToolResponse", Window8k, 3, 1.8, only(1, TurnPlan{UserTextSize: 300, ResponseSize: 300, Steps: Parallel(Call("kubectl_logs", 20_000))})), "one 20k tool response"),
		desc(noUsage(s("8k_NoUsageMetadata", Window8k, 25, 2.0, oneTool("http_get", 1_500))), "no usage metadata, 1 tool/turn 1.5k"),
		desc(s("8k_LongRunning_40Turns", Window8k, 40, 1.8, conversation(500, 800)), "no tools, 40 turns"),
		desc(s("8k_ToolBurst", Window8k, 3, 1.8, func(t int) TurnPlan {
			steps := Parallel(Call("kubectl_describe", 3_000), Call("http_get", 3_000), Call("grep", 3_000))
			steps = append(steps, Parallel(Call("sql_query", 1_000), Call("kubectl_logs", 2_000))...)
			return TurnPlan{UserTextSize: 300, ResponseSize: 300, Steps: steps}
		}), "3 parallel (3k) then 2 parallel (1-2k)"),
		desc(s("8k_HighTokenRatio", Window8k, 20, 3.0, oneTool("sql_query", 1_000)), "ratio 3.0, 1 tool/turn 1k"),
		desc(system(s("8k_LargeSystemPrompt", Window8k, 15, 1.8, conversation(400, 600)), 8_000), "8k system prompt, no tools"),
		desc(s("8k_OnlyToolResponses", Window8k, 10, 2.0, each(TurnPlan{UserTextSize: minimalUserText, ResponseSize: minimalResponse, Steps: Parallel(Call("kubectl_logs", 5_000))})), "1 tool/turn 5k"),
		desc(s("8k_RapidFireShortMessages", Window8k, 80, 1.8, conversation(80, 120)), "80 short messages"),
		desc(s("8k_RepeatedCompactions", Window8k, 40, 1.8, oneTool("kubectl_logs", 2_000)), "1 tool/turn 2k"),
		desc(s("8k_AlternatingToolAndText", Window8k, 30, 2.0, everyNth(2, TurnPlan{UserTextSize: 300, ResponseSize: 400, Steps: Parallel(Call("http_get", 3_000))})), "tool every 2nd turn (3k)"),
		desc(s("8k_KubeAgent", Window8k, 10, 2.0, chain(200, 300, Call("kubectl_get_pods", 5_000), Call("kubectl_describe", 3_000), Call("kubectl_logs", 8_000))), "kubectl get pods (5k) -> describe (3k) -> logs (8k)"),
		desc(s("8k_MixedDebugSession", Window8k, 20, 1.8, mixedDebug(Call("prometheus_query", 3_000), Call("sql_query", 2_000), Call("http_get", 200))), "prometheus (3k) + sql (2k) + http (200) mixed"),
		desc(s("8k_PureToolStorm", Window8k, 20, 1.8, storm(2_000)), "1 tool/turn 2k, minimal text"),
		desc(s("8k_CodingAgent", Window8k, 10, 2.0, chain(200, 300, Call("read_file", 3_000), Call("edit_file", 1_000), Call("run_tests", 4_000))), "read_file (3k) -> edit_file (1k) -> run_tests (4k)"),
		desc(defs(s("200k_HeavyToolDefinitions", Window200k, 30, 2.0, func(t int) TurnPlan {
			return TurnPlan{UserTextSize: 300, ResponseSize: 500, Steps: Parallel(
				ToolCall{Name: MCPToolName((2 * t) % 20), Size: 5_000}, ToolCall{Name: MCPToolName((2*t + 1) % 20), Size: 8_000})}
		}), 20, 2_000), "20 MCP tool definitions (2k schema each), 2 calls/turn (5k+8k)"),
		desc(s("200k_InlineImages", Window200k, 15, 2.0, each(TurnPlan{UserTextSize: 300, ResponseSize: 600, Images: []int{100_000}})), "100KB image per turn, no tools"),
		desc(defs(s("8k_HeavyToolDefinitions", Window8k, 20, 2.0, func(t int) TurnPlan {
			return TurnPlan{UserTextSize: 200, ResponseSize: 300, Steps: Parallel(ToolCall{Name: MCPToolName(t % 10), Size: 1_500})}
		}), 10, 1_000), "10 MCP tool definitions (1k schema each), 1 call/turn 1.5k"),
		desc(s("8k_InlineSmallImages", Window8k, 10, 2.0, each(TurnPlan{UserTextSize: 200, ResponseSize: 300, Images: []int{10_000}})), "10KB image per turn, no tools"),
		desc(system(s("CompactionNoInfiniteLoop", Window8k, 5, 2.5, conversation(300, 400)), 12_000), "12k system prompt, no tools: the fixed part alone is over the trigger"),

		// ---------------- Brutal (49) ----------------
		desc(b("8k_ToolResponseBiggerThanWindow", Window8k, 3, 2.0, only(1, TurnPlan{UserTextSize: 300, ResponseSize: 300, Steps: Parallel(Call("kubectl_logs", 40_000))})), "single 40k tool response (5x window)"),
		desc(b("8k_EveryTurnExceedsWindow", Window8k, 15, 2.0, each(TurnPlan{UserTextSize: 2_000, ResponseSize: 300, Steps: Parallel(Call("kubectl_logs", 15_000))})), "2k message + 15k tool every turn"),
		desc(noUsage(b("8k_NoUsageMetadata_HighRatio", Window8k, 20, 2.0, oneTool("http_get", 1_500))), "pure heuristic at the default factor limit"),
		func() Scenario {
			sc := desc(noUsage(b("8k_NoUsageMetadata_BeyondDefault", Window8k, 15, 3.0, oneTool("http_get", 1_500))), "ratio beyond the default factor, no usage metadata")
			sc.KnownLimitation = "without usage metadata a guard cannot learn a token ratio above its default factor; use WithMaxTokens"
			return sc
		}(),
		desc(b("8k_150Turns", Window8k, 150, 1.8, everyNth(3, TurnPlan{UserTextSize: 300, ResponseSize: 400, Steps: Parallel(Call("grep", 1_000))})), "150 turns, a 1k tool every 3rd turn"),
		desc(system(b("8k_SystemPromptLargerThanWindow", Window8k, 10, 2.0, conversation(200, 300)), 15_000), "15k system prompt (over the trigger)"),
		desc(b("8k_ToolChain_MultipleRoundtrips", Window8k, 10, 2.0, func(t int) TurnPlan {
			cs := make([]ToolCall, 5)
			for i := range cs {
				cs[i] = Call([]string{"kubectl_describe", "http_get", "grep", "sql_query", "kubectl_logs"}[i], 2_000)
			}
			return TurnPlan{UserTextSize: 200, ResponseSize: 300, Steps: Parallel(cs...)}
		}), "5 parallel tools/turn (10k total)"),
		desc(b("8k_AlternatingHugeAndTiny", Window8k, 30, 2.0, func(t int) TurnPlan {
			if t%2 == 0 {
				return TurnPlan{UserTextSize: 30, ResponseSize: 2}
			}
			return TurnPlan{UserTextSize: 200, ResponseSize: 300, Steps: Parallel(Call("kubectl_logs", 10_000))}
		}), `"ok" alternating with 10k tools`),
		desc(system(b("8k_CompactionEveryStep", Window8k, 30, 2.0, each(TurnPlan{UserTextSize: 1_200, ResponseSize: 300, Steps: Parallel(Call("http_get", 4_000))})), 4_000), "1.2k message + 4k tool + 4k system"),
		desc(b("8k_CorrectionFactorDrift", Window8k, 20, 1.5, func(t int) TurnPlan {
			kinds := []Kind{KindProseEnglish, KindCompactJSON, KindBase64, KindLogLines, KindMarkdownTable}
			return TurnPlan{UserTextSize: 300, ResponseSize: 400, Steps: Parallel(ToolCall{Name: "http_get", Size: 2_000, Kind: kinds[t%len(kinds)]})}
		}), "low ratio, payload kinds drifting"),
		desc(b("8k_EmptyToolResponses", Window8k, 25, 2.0, func(t int) TurnPlan {
			return TurnPlan{UserTextSize: 200, ResponseSize: 300, Steps: Parallel(
				ToolCall{Name: "http_get", Size: vary(3, 10, t, 0), Kind: KindProseEnglish}, ToolCall{Name: "grep", Size: vary(3, 10, t, 1), Kind: KindProseEnglish}, ToolCall{Name: "sql_query", Size: vary(3, 10, t, 2), Kind: KindProseEnglish})}
		}), "3 tools with 3-10 char responses"),
		desc(b("8k_VeryLargeModelResponses", Window8k, 20, 2.0, conversation(300, 2_000)), "2k-char model responses"),
		desc(b("8k_JSON_Heavy_ToolResponses", Window8k, 15, 3.5, each(TurnPlan{UserTextSize: 200, ResponseSize: 300, Steps: Parallel(ToolCall{Name: "http_get", Size: 2_000, Kind: KindPrettyJSON})})), "high ratio simulating JSON overhead"),
		desc(b("200k_ConsecutiveMassiveBursts", Window200k, 10, 2.5, each(TurnPlan{UserTextSize: 300, ResponseSize: 500, Steps: Parallel(Call("kubectl_logs", 80_000), Call("sql_query", 30_000))})), "80k+30k tools every turn"),
		desc(noUsage(b("200k_NoUsageMetadata_LongSession", Window200k, 80, 2.5, oneTool("http_get", 5_000))), "no calibration over 80 turns"),
		desc(b("200k_TokenRatio_5x", Window200k, 10, 5.0, oneTool("kubectl_logs", 15_000)), "extreme 5x ratio"),
		desc(b("200k_SingleTurnFillsWindow", Window200k, 2, 2.0, only(1, func() TurnPlan {
			cs := make([]ToolCall, 20)
			for i := range cs {
				cs[i] = Call([]string{"kubectl_logs", "http_get", "sql_query", "grep"}[i%4], 30_000)
			}
			return TurnPlan{UserTextSize: 300, ResponseSize: 500, Steps: Parallel(cs...)}
		}())), "20 parallel tools x 30k = 600k in one turn"),
		desc(b("200k_200Turns", Window200k, 200, 2.2, mixedWorkload(1_000, 30_000)), "200 turns, mixed tools"),
		desc(defs(b("200k_ToolDefinitionsDominateWindow", Window200k, 20, 2.5, func(t int) TurnPlan {
			return TurnPlan{UserTextSize: 300, ResponseSize: 500, Steps: mcpCalls(t, 3, 50, 3_000, 8_000)}
		}), 50, 4_000), "50 MCP tools x 4k schema + 3 tool calls/turn"),
		desc(defs(b("200k_ToolDefinitionsHighRatio", Window200k, 15, 3.5, func(t int) TurnPlan {
			return TurnPlan{UserTextSize: 300, ResponseSize: 500, Steps: mcpCalls(t, 2, 30, 3_000, 8_000)}
		}), 30, 3_000), "30 MCP tools x 3k schema, high ratio"),
		desc(b("200k_LargeInlineDocuments", Window200k, 3, 2.0, func(t int) TurnPlan {
			p := TurnPlan{UserTextSize: 300, ResponseSize: 800}
			switch t {
			case 0:
				p.Documents = []int{500_000}
			case 1:
				p.Documents = []int{300_000}
			}
			return p
		}), "500KB + 300KB inline PDFs"),
		desc(b("200k_MultipleInlinePerTurn", Window200k, 8, 2.0, each(TurnPlan{UserTextSize: 300, ResponseSize: 600, Images: []int{80_000, 60_000, 90_000}})), "3 images/turn (80k+60k+90k)"),
		desc(defs(b("200k_ToolDefsAndInlineImages", Window200k, 20, 2.5, withImages(3, []int{100_000}, func(t int) TurnPlan {
			return TurnPlan{UserTextSize: 300, ResponseSize: 500, Steps: mcpCalls(t, 2, 15, 3_000, 10_000)}
		})), 15, 2_000), "15 MCP tools + images every 3rd turn"),
		desc(noUsage(defs(b("200k_ToolDefsAndInlineNoUsageMetadata", Window200k, 15, 2.0, withImages(3, []int{100_000}, func(t int) TurnPlan {
			return TurnPlan{UserTextSize: 300, ResponseSize: 500, Steps: mcpCalls(t, 2, 10, 3_000, 10_000)}
		})), 10, 2_000)), "10 MCP tools + images + no calibration"),
		desc(noUsage(defs(b("8k_ToolDefinitionsNoUsageMetadata", Window8k, 15, 2.0, func(t int) TurnPlan {
			return TurnPlan{UserTextSize: 200, ResponseSize: 300, Steps: mcpCalls(t, 1, 8, 1_000, 1_000)}
		}), 8, 800)), "8 MCP tools (800ch schema) + no calibration"),
		desc(noUsage(defs(b("8k_ToolDefsAndInlineCombined", Window8k, 20, 2.0, withImages(2, []int{3_000}, func(t int) TurnPlan {
			return TurnPlan{UserTextSize: 200, ResponseSize: 300, Steps: mcpCalls(t, 1, 5, 800, 1_500)}
		})), 5, 800)), "5 MCP tools + images + tools + no calibration"),
		desc(b("200k_KubeAgent_30Rounds", Window200k, 30, 2.5, chain(300, 800, Call("kubectl_get_pods", 20_000), Call("kubectl_describe", 15_000), Call("kubectl_logs", 40_000))), "kubectl get pods (20k) -> describe (15k) -> logs (40k)"),
		desc(b("200k_MixedDebugSession_LongInvestigation", Window200k, 50, 2.3, mixedDebug(Call("prometheus_query", 30_000), Call("grafana_query", 10_000), Call("sql_query", 20_000), Call("http_get", 1_000), Call("grep", 8_000))), "prometheus (30k) + grafana (10k) + sql (20k) + http + grep mixed"),
		desc(b("200k_PureToolStorm_HugeResponses", Window200k, 20, 2.0, storm(50_000, 20_000)), "fetch (50k) + process (20k) per turn, minimal text"),
		desc(b("8k_PureToolStorm_50Turns", Window8k, 50, 2.0, storm(3_000)), "3k tool/turn, minimal text, 50 turns"),
		desc(b("200k_CodingAgent_DeepRefactor", Window200k, 25, 2.5, chain(400, 800, Call("read_file", 15_000), Call("grep", 8_000), Call("edit_file", 3_000), Call("read_file", 15_000), Call("edit_file", 3_000), Call("run_tests", 12_000))), "6 sequential tools/turn (read, grep, edit, read, edit, tests)"),
		desc(noUsage(b("8k_CodingAgent_NoUsageMetadata", Window8k, 15, 2.0, chain(200, 300, Call("read_file", 2_000), Call("edit_file", 1_000), Call("run_tests", 2_000)))), "read -> edit -> tests, no calibration"),
		desc(b("4k_ToolResponseExceedsWindow", Window4k, 3, 2.0, only(1, TurnPlan{UserTextSize: 200, ResponseSize: 200, Steps: Parallel(Call("kubectl_logs", 20_000))})), "single 20k tool response (5x window)"),
		desc(b("4k_EveryTurnExceedsWindow", Window4k, 20, 2.0, each(TurnPlan{UserTextSize: 1_000, ResponseSize: 200, Steps: Parallel(Call("kubectl_logs", 8_000))})), "1k message + 8k tool every turn"),
		desc(b("4k_KubeAgent", Window4k, 10, 2.0, chain(150, 200, Call("kubectl_get_pods", 2_000), Call("kubectl_describe", 1_500), Call("kubectl_logs", 3_000))), "kubectl pattern in a tiny window"),
		desc(b("4k_CodingAgent", Window4k, 10, 2.0, chain(150, 200, Call("read_file", 1_500), Call("edit_file", 500), Call("run_tests", 2_000))), "read -> edit -> tests in a tiny window"),
		desc(b("4k_MixedDebug", Window4k, 15, 2.0, mixedDebug(Call("prometheus_query", 1_500), Call("sql_query", 1_000), Call("http_get", 200))), "prometheus + sql + http mixed in 4k"),
		desc(b("4k_PureToolStorm", Window4k, 20, 2.0, storm(2_000)), "2k tool/turn, minimal text in 4k"),
		desc(b("1M_KubeAgent_ExtremeLongevity", Window1M, 100, 2.0, chain(300, 800, Call("kubectl_get_pods", 30_000), Call("kubectl_describe", 20_000), Call("kubectl_logs", 50_000))), "kubectl (30k+20k+50k) per turn, 100 turns"),
		desc(b("1M_PureToolStorm_MonsterResponses", Window1M, 50, 2.0, storm(100_000)), "100k tool/turn, 50 turns"),
		desc(noUsage(b("1M_NoUsageMetadata", Window1M, 40, 2.5, oneTool("kubectl_logs", 45_000))), "45k tools/turn, no calibration"),
		desc(defs(b("200k_MagecProductionScenario", Window200k, 30, 2.5, withImages(4, []int{100_000}, func(t int) TurnPlan {
			return TurnPlan{UserTextSize: 400, ResponseSize: 800, Steps: mcpCalls(t, 2+t%3, 25, 5_000, 15_000)}
		})), 25, 2_000), "25 MCP tools + images + 2-4 tool calls/turn"),
		desc(noUsage(defs(b("200k_MagecProductionScenario_NoUsageMetadata", Window200k, 20, 2.5, withImages(4, []int{100_000}, func(t int) TurnPlan {
			return TurnPlan{UserTextSize: 400, ResponseSize: 800, Steps: mcpCalls(t, 2+t%3, 20, 5_000, 15_000)}
		})), 20, 2_000)), "20 MCP tools + images + no calibration"),
		desc(b("200k_SequentialEscalatingSizes", Window200k, 10, 2.0, chain(300, 500, Call("read_file", 2_000), Call("grep", 5_000), Call("kubectl_logs", 20_000), Call("sql_query", 40_000), Call("http_get", 60_000))), "5 sequential tools escalating 2k -> 60k"),
		desc(b("8k_SequentialEscalatingSizes", Window8k, 10, 2.0, chain(200, 300, Call("read_file", 500), Call("grep", 1_500), Call("kubectl_logs", 3_000), Call("http_get", 5_000))), "4 sequential tools escalating 500 -> 5k"),
		desc(b("4k_SequentialEscalatingSizes", Window4k, 8, 2.0, chain(150, 200, Call("read_file", 300), Call("grep", 800), Call("kubectl_logs", 2_000))), "3 sequential tools escalating 300 -> 2k"),
		desc(b("8k_SequentialToolChain", Window8k, 8, 2.0, chain(200, 300, Call("read_file", 2_000), Call("grep", 1_500), Call("kubectl_logs", 2_500), Call("sql_query", 1_000), Call("http_get", 1_500))), "5 sequential tools (2k, 1.5k, 2.5k, 1k, 1.5k)"),
		desc(b("200k_SequentialToolChain_LargeResponses", Window200k, 5, 2.0, chain(300, 500, Call("read_file", 40_000), Call("grep", 20_000), Call("kubectl_logs", 30_000), Call("sql_query", 15_000), Call("http_get", 5_000))), "5 sequential tools (40k, 20k, 30k, 15k, 5k)"),
		desc(noUsage(b("8k_SequentialChain_NoUsageMetadata", Window8k, 10, 2.0, chain(200, 300, Call("read_file", 1_000), Call("grep", 800), Call("http_get", 1_200)))), "3 sequential tools (1k, 800, 1.2k), no calibration"),
	}
	for i := range rows {
		rows[i].Seed = nameSeed(rows[i].FullName())
		rows[i].MinSummarizerCalls = minCompactions(rows[i])
	}
	return rows
}

// estimateSeedTokens returns the seed-mode tokens of the fixed part of every
// request (system prompt, tool declarations) and of everything the
// conversation accumulates, computed from the plans without running them.
func estimateSeedTokens(sc Scenario) (fixed, growth float64) {
	q := sc.TokenRatio / 4
	fixedBytes := float64(sc.SystemPromptSize + sc.ToolDefs*(sc.ToolDefSchemaSize+200))
	var g float64
	for t := range sc.Turns {
		p := sc.TurnPlan(t)
		g += float64(p.UserTextSize + p.ResponseSize + 2*SeedMessageOverheadBytes)
		for _, img := range p.Images {
			g += float64(base64.StdEncoding.EncodedLen(img))
		}
		for _, doc := range p.Documents {
			g += float64(base64.StdEncoding.EncodedLen(doc))
		}
		for _, st := range p.Steps {
			g += 2 * SeedMessageOverheadBytes
			for _, c := range st.Calls {
				g += float64(c.Size + 200) // args, name, echoed tag and marker
			}
		}
	}
	return fixedBytes * q, g * q
}

// minCompactions is the lower bound described in [SeedMatrix].
func minCompactions(sc Scenario) int {
	fixed, growth := estimateSeedTokens(sc)
	room := float64(sc.Window) - fixed
	if room <= 0.2*float64(sc.Window) || sc.KnownLimitation != "" || 0.9*growth <= room {
		return 0
	}
	if strings.Contains(sc.Name, "RepeatedCompactions") {
		return max(int(math.Ceil(0.9*growth/float64(sc.Window)))-1, 1)
	}
	return 1
}
