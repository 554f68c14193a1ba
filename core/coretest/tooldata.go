package coretest

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Tool data: the fake tools' arguments and outputs, MCP-style names and
// schemas.

// ToolArgs are the arguments the scripted model passes to fake tools: the
// size, kind and seed of the output to generate, a marker to plant in it and
// the call's tag (echoed back so the model can find its place).
type ToolArgs struct {
	Size   int    `json:"size"`
	Kind   string `json:"kind,omitempty"`
	Seed   int64  `json:"seed,omitempty"`
	Marker string `json:"marker,omitempty"`
	Tag    string `json:"tag,omitempty"`
}

// ToolOutput is what fake tools return: the echoed tag and marker, and the
// generated output.
type ToolOutput struct {
	Tag    string `json:"tag,omitempty"`
	Marker string `json:"marker,omitempty"`
	Output string `json:"output"`
}

// SeedToolNames are the tool names the seed matrix uses.
var SeedToolNames = []string{
	"kubectl_get_pods", "kubectl_describe", "kubectl_logs",
	"read_file", "edit_file", "run_tests", "grep",
	"prometheus_query", "grafana_query", "sql_query", "http_get",
	"fetch", "process",
}

// DefaultKind returns the kind of output a tool of this name produces by
// default: kubectl_get_pods a kubectl table, kubectl_logs log lines,
// read_file Go code, and so on; unknown names produce pretty JSON.
func DefaultKind(name string) Kind {
	switch name {
	case "kubectl_get_pods":
		return KindKubectlTable
	case "kubectl_describe":
		return KindKubectlDescribe
	case "kubectl_logs":
		return KindLogLines
	case "read_file", "edit_file":
		return KindGoCode
	case "run_tests":
		return KindTestOutput
	case "grep":
		return KindGrep
	case "prometheus_query":
		return KindPrometheus
	case "sql_query":
		return KindSQLRows
	case "grafana_query":
		return KindMarkdownTable
	case "fetch":
		return KindYAML
	case "http_get", "process":
		return KindCompactJSON
	}
	return KindPrettyJSON
}

// Produce generates the output a fake tool named name returns for a:
// Generate(a.Kind or DefaultKind(name), a.Size, a.Seed), with the tag and
// marker echoed. A negative size is an error.
func Produce(name string, a ToolArgs) (ToolOutput, error) {
	if a.Size < 0 {
		return ToolOutput{}, fmt.Errorf("%s: negative size %d", name, a.Size)
	}
	kind := Kind(a.Kind)
	if kind == "" {
		kind = DefaultKind(name)
	}
	return ToolOutput{Tag: a.Tag, Marker: a.Marker, Output: Generate(kind, a.Size, a.Seed)}, nil
}

// ProduceMap is [Produce] for a tool whose arguments and result are untyped
// JSON objects (a tool with a hand-written schema, see [MCPSchema]): args
// must be a map decoding into [ToolArgs]; the result has the keys "tag",
// "marker" and "output".
func ProduceMap(name string, args any) (map[string]any, error) {
	m, ok := args.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("contextguardtest: tool %q: unexpected args type %T", name, args)
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("contextguardtest: tool %q: %w", name, err)
	}
	var a ToolArgs
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, fmt.Errorf("contextguardtest: tool %q: bad args: %w", name, err)
	}
	out, err := Produce(name, a)
	if err != nil {
		return nil, fmt.Errorf("contextguardtest: tool %q: %w", name, err)
	}
	return map[string]any{"tag": out.Tag, "marker": out.Marker, "output": out.Output}, nil
}

// MCPToolName returns the name of the i-th MCP-like tool of a scenario, e.g.
// "mcp_api_gateway_list_0".
func MCPToolName(i int) string {
	svc := strings.ReplaceAll(services[i%len(services)], "-", "_")
	verb := strings.ToLower(goVerbs[(i/len(services)+i)%len(goVerbs)])
	return fmt.Sprintf("mcp_%s_%s_%d", svc, verb, i)
}

// MCPToolDescription returns the description of the i-th MCP-like tool
// ([MCPToolName]) of the given seed.
func MCPToolDescription(i int, seed int64) string {
	r := newRand(seed, uint64(i)+0x6d6370)
	svc := strings.ReplaceAll(services[i%len(services)], "-", "_")
	return fmt.Sprintf("%s %s records of the %s service. ", goVerbs[i%len(goVerbs)], strings.ToLower(pick(r, goNouns)), svc) +
		Generate(KindProseEnglish, 160, mix(seed, int64(i), 1))
}

// MCPToolSchema returns the parameter schema of the i-th MCP-like tool of
// the given seed: [MCPSchema] of about schemaSize bytes.
func MCPToolSchema(i, schemaSize int, seed int64) map[string]any {
	return MCPSchema(schemaSize, mix(seed, int64(i), 2))
}

// MCPSchema returns a JSON Schema object that serializes to about size bytes
// of compact JSON: the [ToolArgs] properties plus optional, documented filter
// properties.
func MCPSchema(size int, seed int64) map[string]any {
	props := map[string]any{
		"size":   map[string]any{"type": "integer", "description": "Size in bytes of the output to return."},
		"kind":   map[string]any{"type": "string", "description": "Kind of output.", "enum": kindNames()},
		"seed":   map[string]any{"type": "integer", "description": "Seed of the generated output."},
		"marker": map[string]any{"type": "string", "description": "Marker to echo."},
		"tag":    map[string]any{"type": "string", "description": "Call tag to echo."},
	}
	schema := map[string]any{"type": "object", "properties": props, "required": []any{"size"}, "additionalProperties": false}
	r := newRand(seed, 0x736368)
	for i := 0; ; i++ {
		cur := len(marshalCompact(schema))
		if cur >= size {
			break
		}
		remaining := size - cur
		name := fmt.Sprintf("%s_%s_%d", strings.ToLower(pick(r, goNouns)), pick(r, []string{"filter", "limit", "since", "label", "field", "order"}), i)
		prop := map[string]any{"type": pick(r, []string{"string", "integer", "boolean", "array"})}
		const overhead = 48 // name, quotes, type and description keys
		descLen := min(remaining-len(name)-overhead, 120+r.IntN(200))
		if descLen <= 0 {
			break
		}
		prop["description"] = Generate(KindProseEnglish, descLen, mix(seed, int64(i)))
		if prop["type"] == "array" {
			prop["items"] = map[string]any{"type": "string"}
		}
		props[name] = prop
	}
	return schema
}

func kindNames() []any {
	ks := Kinds()
	out := make([]any, len(ks))
	names := make([]string, len(ks))
	for i, k := range ks {
		names[i] = string(k)
	}
	sort.Strings(names)
	for i, n := range names {
		out[i] = n
	}
	return out
}

// ToolNames returns the tools the plans of sc call, in order of first call.
func ToolNames(sc Scenario) []string {
	var names []string
	seen := map[string]bool{}
	for t := range sc.Turns {
		for _, st := range sc.TurnPlan(t).Steps {
			for _, c := range st.Calls {
				if !seen[c.Name] {
					seen[c.Name] = true
					names = append(names, c.Name)
				}
			}
		}
	}
	return names
}

// DataToolNames returns the tools a driver builds for sc beside its
// sc.ToolDefs MCP-like tools (named [MCPToolName](0..ToolDefs-1)): every
// other tool its plans call, in order. A plan calling an MCP-like tool that
// sc does not declare is an error.
func DataToolNames(sc Scenario) ([]string, error) {
	declared := map[string]bool{}
	for i := range max(sc.ToolDefs, 0) {
		declared[MCPToolName(i)] = true
	}
	var out []string
	for _, n := range ToolNames(sc) {
		if declared[n] {
			continue
		}
		if strings.HasPrefix(n, "mcp_") {
			return nil, fmt.Errorf("contextguardtest: scenario %s calls %q but declares only %d MCP tools", sc.FullName(), n, sc.ToolDefs)
		}
		out = append(out, n)
	}
	return out, nil
}
