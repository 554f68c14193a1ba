package contextguardtest

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/tool"
	"google.golang.org/adk/tool/functiontool"
	"google.golang.org/genai"
)

// ToolArgs are the arguments the [ScriptedModel] passes to fake tools: the
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

// produce generates the output a fake tool named name returns for args.
func produce(name string, a ToolArgs) ToolOutput {
	kind := Kind(a.Kind)
	if kind == "" {
		kind = DefaultKind(name)
	}
	return ToolOutput{Tag: a.Tag, Marker: a.Marker, Output: Generate(kind, a.Size, a.Seed)}
}

// DataTool returns a functiontool named name whose output is generated from
// its [ToolArgs]: Generate(args.Kind or DefaultKind(name), args.Size,
// args.Seed), with the tag and marker echoed ([ToolOutput]).
func DataTool(name, description string) (tool.Tool, error) {
	if description == "" {
		description = "Fake " + name + " tool: returns generated output of the requested size and kind."
	}
	t, err := functiontool.New(functiontool.Config{Name: name, Description: description},
		func(_ agent.ToolContext, a ToolArgs) (ToolOutput, error) {
			if a.Size < 0 {
				return ToolOutput{}, fmt.Errorf("%s: negative size %d", name, a.Size)
			}
			return produce(name, a), nil
		})
	if err != nil {
		return nil, fmt.Errorf("contextguardtest: tool %q: %w", name, err)
	}
	return t, nil
}

// Tools returns a [DataTool] for each name (deduplicated, in order).
func Tools(names ...string) ([]tool.Tool, error) {
	seen := map[string]bool{}
	var out []tool.Tool
	for _, n := range names {
		if seen[n] {
			continue
		}
		seen[n] = true
		t, err := DataTool(n, "")
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// SchemaTool is a tool with a fixed, possibly large, JSON schema, like the
// tools an MCP server declares. Its declaration lands in
// req.Config.Tools as a FunctionDeclaration with ParametersJsonSchema; when
// called it behaves like a [DataTool].
type SchemaTool struct {
	name, description string
	decl              *genai.FunctionDeclaration
}

// NewSchemaTool returns a tool declaring schema (a JSON Schema object) as its
// parameters.
func NewSchemaTool(name, description string, schema map[string]any) *SchemaTool {
	return &SchemaTool{
		name:        name,
		description: description,
		decl: &genai.FunctionDeclaration{
			Name:                 name,
			Description:          description,
			ParametersJsonSchema: schema,
		},
	}
}

// Name returns the tool name.
func (t *SchemaTool) Name() string { return t.name }

// Description returns the tool description.
func (t *SchemaTool) Description() string { return t.description }

// IsLongRunning reports false.
func (t *SchemaTool) IsLongRunning() bool { return false }

// Declaration returns the tool's function declaration (the same value on
// every call).
func (t *SchemaTool) Declaration() *genai.FunctionDeclaration { return t.decl }

// ProcessRequest adds the tool and its declaration to req, as ADK's function
// tools do.
func (t *SchemaTool) ProcessRequest(_ agent.ToolContext, req *model.LLMRequest) error {
	if req.Tools == nil {
		req.Tools = map[string]any{}
	}
	if _, dup := req.Tools[t.name]; dup {
		return fmt.Errorf("contextguardtest: duplicate tool %q", t.name)
	}
	req.Tools[t.name] = t
	if req.Config == nil {
		req.Config = &genai.GenerateContentConfig{}
	}
	for _, gt := range req.Config.Tools {
		if gt != nil && gt.FunctionDeclarations != nil {
			gt.FunctionDeclarations = append(gt.FunctionDeclarations, t.decl)
			return nil
		}
	}
	req.Config.Tools = append(req.Config.Tools, &genai.Tool{FunctionDeclarations: []*genai.FunctionDeclaration{t.decl}})
	return nil
}

// Run generates the output described by args (see [ToolArgs]).
func (t *SchemaTool) Run(_ agent.ToolContext, args any) (map[string]any, error) {
	m, ok := args.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("contextguardtest: tool %q: unexpected args type %T", t.name, args)
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("contextguardtest: tool %q: %w", t.name, err)
	}
	var a ToolArgs
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, fmt.Errorf("contextguardtest: tool %q: bad args: %w", t.name, err)
	}
	out := produce(t.name, a)
	return map[string]any{"tag": out.Tag, "marker": out.Marker, "output": out.Output}, nil
}

// MCPToolName returns the name of the i-th tool [MCPTools] returns, e.g.
// "mcp_api_gateway_list_0".
func MCPToolName(i int) string {
	svc := strings.ReplaceAll(services[i%len(services)], "-", "_")
	verb := strings.ToLower(goVerbs[(i/len(services)+i)%len(goVerbs)])
	return fmt.Sprintf("mcp_%s_%s_%d", svc, verb, i)
}

// MCPTools returns n [SchemaTool]s named like MCP tools ([MCPToolName])
// whose parameter schemas serialize to about schemaSize bytes of compact
// JSON each (at least the few hundred bytes of the mandatory properties).
// The schemas are deterministic in seed.
func MCPTools(n, schemaSize int, seed int64) []tool.Tool {
	out := make([]tool.Tool, 0, max(n, 0))
	for i := range max(n, 0) {
		r := newRand(seed, uint64(i)+0x6d6370)
		name := MCPToolName(i)
		svc := strings.ReplaceAll(services[i%len(services)], "-", "_")
		desc := fmt.Sprintf("%s %s records of the %s service. ", goVerbs[i%len(goVerbs)], strings.ToLower(pick(r, goNouns)), svc) +
			Generate(KindProseEnglish, 160, mix(seed, int64(i), 1))
		out = append(out, NewSchemaTool(name, desc, MCPSchema(schemaSize, mix(seed, int64(i), 2))))
	}
	return out
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
