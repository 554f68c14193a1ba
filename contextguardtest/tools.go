package contextguardtest

import (
	"fmt"

	"github.com/adk-contextguard/contextguard/core/coretest"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/tool"
	"google.golang.org/adk/tool/functiontool"
	"google.golang.org/genai"
)

// Tools: the fake data tools as ADK v1 function tools, and a tool with a
// large schema.

// DataTool returns a functiontool named name whose output is generated from
// its [coretest.ToolArgs]: coretest.Generate(args.Kind or coretest.DefaultKind(name), args.Size,
// args.Seed), with the tag and marker echoed ([coretest.ToolOutput]).
func DataTool(name, description string) (tool.Tool, error) {
	if description == "" {
		description = "Fake " + name + " tool: returns generated output of the requested size and kind."
	}
	t, err := functiontool.New(functiontool.Config{Name: name, Description: description},
		func(_ agent.ToolContext, a coretest.ToolArgs) (coretest.ToolOutput, error) {
			return coretest.Produce(name, a)
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

// schemaTool is a tool with a fixed, possibly large, JSON schema, like the
// tools an MCP server declares. Its declaration lands in
// req.Config.Tools as a FunctionDeclaration with ParametersJsonSchema; when
// called it behaves like a [DataTool].
type schemaTool struct {
	name, description string
	decl              *genai.FunctionDeclaration
}

// newSchemaTool returns a tool declaring schema (a JSON Schema object) as its
// parameters.
func newSchemaTool(name, description string, schema map[string]any) *schemaTool {
	return &schemaTool{
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
func (t *schemaTool) Name() string { return t.name }

// Description returns the tool description.
func (t *schemaTool) Description() string { return t.description }

// IsLongRunning reports false.
func (t *schemaTool) IsLongRunning() bool { return false }

// Declaration returns the tool's function declaration (the same value on
// every call).
func (t *schemaTool) Declaration() *genai.FunctionDeclaration { return t.decl }

// ProcessRequest adds the tool and its declaration to req, as ADK's function
// tools do.
func (t *schemaTool) ProcessRequest(_ agent.ToolContext, req *model.LLMRequest) error {
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

// Run generates the output described by args (see [coretest.ToolArgs]).
func (t *schemaTool) Run(_ agent.ToolContext, args any) (map[string]any, error) {
	return coretest.ProduceMap(t.name, args)
}

// mcpTools returns n schemaTools named like MCP tools ([coretest.MCPToolName])
// whose parameter schemas serialize to about schemaSize bytes of compact
// JSON each (at least the few hundred bytes of the mandatory properties).
// The schemas are deterministic in seed.
func mcpTools(n, schemaSize int, seed int64) []tool.Tool {
	out := make([]tool.Tool, 0, max(n, 0))
	for i := range max(n, 0) {
		out = append(out, newSchemaTool(coretest.MCPToolName(i), coretest.MCPToolDescription(i, seed), coretest.MCPToolSchema(i, schemaSize, seed)))
	}
	return out
}
