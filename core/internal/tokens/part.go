package tokens

import (
	"slices"

	"google.golang.org/genai"
)

// Parts and contents: the estimate of each genai part, content, tool
// declaration and built-in tool.

// Fixed costs that cannot be fitted from text. They are estimates of the
// structure a provider wraps around an item; small next to the content.
const (
	// CallOverhead is added per function call, function response, tool call
	// or tool response: the markers and field names around the name and the
	// JSON arguments (e.g. `{"name":…,"arguments":…}` in OpenAI's format).
	CallOverhead = 4
	// CodeOverhead is added per executable-code or code-execution-result
	// part (language tag, fences, outcome).
	CodeOverhead = 4
	// FunctionDeclOverhead is added per function declaration.
	FunctionDeclOverhead = 4
	// BuiltinToolTokens is charged for each built-in tool (Google Search,
	// code execution, URL context, retrieval, computer use, file search,
	// maps, MCP server, ...), whose provider-side description is not visible
	// to the client. It is a rough allowance for a short tool description.
	BuiltinToolTokens = 30
)

// Part estimates the tokens of one part: its text (thoughts included),
// function call (name + args as compact JSON), function response (name +
// response as compact JSON, plus any inline or file parts), inline data by
// kind (see Blob), file data (see FileRef), executable code and code
// execution results. A nil part is 0 tokens. Thought signatures are opaque
// and not counted.
func (e *Estimator) Part(p *genai.Part) int {
	if p == nil {
		return 0
	}
	n := 0
	if p.Text != "" {
		n += e.Text(p.Text)
	}
	if fc := p.FunctionCall; fc != nil {
		n += CallOverhead + e.Text(fc.Name) + e.args(fc.Args)
	}
	if fr := p.FunctionResponse; fr != nil {
		n += CallOverhead + e.Text(fr.Name) + e.args(fr.Response)
		for _, rp := range fr.Parts {
			if rp == nil {
				continue
			}
			if rp.InlineData != nil {
				n += e.Blob(rp.InlineData.MIMEType, rp.InlineData.Data)
			}
			if rp.FileData != nil {
				n += e.FileRef(rp.FileData.MIMEType)
			}
		}
	}
	if tc := p.ToolCall; tc != nil {
		n += CallOverhead + e.Text(string(tc.ToolType)) + e.args(tc.Args)
	}
	if tr := p.ToolResponse; tr != nil {
		n += CallOverhead + e.Text(string(tr.ToolType)) + e.args(tr.Response)
	}
	if b := p.InlineData; b != nil {
		n += e.Blob(b.MIMEType, b.Data)
	}
	if fd := p.FileData; fd != nil {
		n += e.FileRef(fd.MIMEType)
	}
	if ec := p.ExecutableCode; ec != nil {
		n += CodeOverhead + e.Text(ec.Code)
	}
	if cr := p.CodeExecutionResult; cr != nil {
		n += CodeOverhead + e.Text(cr.Output)
	}
	return n
}

// args counts a JSON object; a nil map is sent as {}.
func (e *Estimator) args(m map[string]any) int {
	if m == nil {
		return e.Text("{}")
	}
	return e.Value(m)
}

// Content estimates the tokens of a message: the sum of its parts plus the
// per-message framing cost (Framing). A nil content is 0 tokens.
func (e *Estimator) Content(c *genai.Content) int {
	if c == nil {
		return 0
	}
	n := e.framing
	for _, p := range c.Parts {
		n += e.Part(p)
	}
	return n
}

// Contents sums Content over a slice of messages.
func (e *Estimator) Contents(cs []*genai.Content) int {
	n := 0
	for _, c := range cs {
		n += e.Content(c)
	}
	return n
}

// Tools estimates the tokens of tool declarations. Each function declaration
// counts as the compact JSON {"name":…,"description":…,"parameters":…,
// "response":…} (Parameters and Response written from the *genai.Schema with
// lower-case type names; ParametersJsonSchema and ResponseJsonSchema written
// as given) plus FunctionDeclOverhead. Every built-in tool kind set on a
// Tool counts BuiltinToolTokens.
func (e *Estimator) Tools(tools []*genai.Tool) int {
	n := 0
	var w *jsonWriter
	for _, t := range tools {
		if t == nil {
			continue
		}
		for _, d := range t.FunctionDeclarations {
			if d == nil {
				continue
			}
			if w == nil {
				w = getWriter()
			}
			w.buf = w.buf[:0]
			w.decl(d)
			n += FunctionDeclOverhead + estimateText(&e.w, w.buf)
		}
		n += BuiltinToolTokens * builtinTools(t)
	}
	if w != nil {
		putWriter(w)
	}
	return n
}

// Declaration estimates one function declaration as Tools counts it.
func (e *Estimator) Declaration(d *genai.FunctionDeclaration) int {
	if d == nil {
		return 0
	}
	w := getWriter()
	w.buf = w.buf[:0]
	w.decl(d)
	n := FunctionDeclOverhead + estimateText(&e.w, w.buf)
	putWriter(w)
	return n
}

// BuiltinTools estimates the built-in tools (everything but function
// declarations) set on t, as Tools counts them.
func (e *Estimator) BuiltinTools(t *genai.Tool) int {
	if t == nil {
		return 0
	}
	return BuiltinToolTokens * builtinTools(t)
}

func builtinTools(t *genai.Tool) int {
	k := 0
	for _, set := range []bool{t.Retrieval != nil, t.ComputerUse != nil, t.FileSearch != nil,
		t.GoogleSearch != nil, t.GoogleMaps != nil, t.CodeExecution != nil,
		t.EnterpriseWebSearch != nil, t.GoogleSearchRetrieval != nil,
		t.ParallelAISearch != nil, t.URLContext != nil} {
		if set {
			k++
		}
	}
	return k + len(t.MCPServers)
}

// decl writes a function declaration as compact JSON.
func (w *jsonWriter) decl(d *genai.FunctionDeclaration) {
	w.buf = append(w.buf, `{"name":`...)
	w.str(d.Name)
	if d.Description != "" {
		w.buf = append(w.buf, `,"description":`...)
		w.str(d.Description)
	}
	switch {
	case d.Parameters != nil:
		w.buf = append(w.buf, `,"parameters":`...)
		w.schema(d.Parameters, 0)
	case d.ParametersJsonSchema != nil:
		w.buf = append(w.buf, `,"parameters":`...)
		w.value(d.ParametersJsonSchema, 0)
	}
	switch {
	case d.Response != nil:
		w.buf = append(w.buf, `,"response":`...)
		w.schema(d.Response, 0)
	case d.ResponseJsonSchema != nil:
		w.buf = append(w.buf, `,"response":`...)
		w.value(d.ResponseJsonSchema, 0)
	}
	w.buf = append(w.buf, '}')
}

// schema writes a genai.Schema as compact JSON Schema. A schema that refers
// back to one it is nested in is written as null there (encoding/json would
// reject it), as is one nested deeper than maxDepth or past maxValueBytes of
// output, so a malformed schema cannot make the walk run without end.
func (w *jsonWriter) schema(s *genai.Schema, depth int) {
	if s == nil || depth > maxDepth || len(w.buf) > maxValueBytes || slices.Contains(w.schemas, s) {
		w.buf = append(w.buf, "null"...)
		return
	}
	w.schemas = append(w.schemas, s)
	defer func() {
		w.schemas[len(w.schemas)-1] = nil
		w.schemas = w.schemas[:len(w.schemas)-1]
	}()
	w.buf = append(w.buf, '{')
	first := true
	field := func(name string) {
		if !first {
			w.buf = append(w.buf, ',')
		}
		first = false
		w.buf = append(w.buf, '"')
		w.buf = append(w.buf, name...)
		w.buf = append(w.buf, '"', ':')
	}
	if s.Type != "" {
		field("type")
		w.lowerStr(string(s.Type))
	}
	if s.Format != "" {
		field("format")
		w.str(s.Format)
	}
	if s.Title != "" {
		field("title")
		w.str(s.Title)
	}
	if s.Description != "" {
		field("description")
		w.str(s.Description)
	}
	if s.Nullable != nil {
		field("nullable")
		w.value(*s.Nullable, depth+1)
	}
	if s.Enum != nil {
		field("enum")
		w.value(s.Enum, depth+1)
	}
	if s.Items != nil {
		field("items")
		w.schema(s.Items, depth+1)
	}
	if s.Properties != nil {
		field("properties")
		base := len(w.keys)
		for k := range s.Properties {
			w.keys = append(w.keys, k)
		}
		sortStrings(w.keys[base:])
		w.buf = append(w.buf, '{')
		for i := base; i < len(w.keys); i++ {
			if i > base {
				w.buf = append(w.buf, ',')
			}
			k := w.keys[i]
			w.str(k)
			w.buf = append(w.buf, ':')
			w.schema(s.Properties[k], depth+1)
		}
		w.buf = append(w.buf, '}')
		clear(w.keys[base:])
		w.keys = w.keys[:base]
	}
	if s.Required != nil {
		field("required")
		w.value(s.Required, depth+1)
	}
	if len(s.AnyOf) > 0 {
		field("anyOf")
		w.buf = append(w.buf, '[')
		for i, a := range s.AnyOf {
			if i > 0 {
				w.buf = append(w.buf, ',')
			}
			w.schema(a, depth+1)
		}
		w.buf = append(w.buf, ']')
	}
	for _, nf := range []struct {
		name string
		v    *int64
	}{{"minItems", s.MinItems}, {"maxItems", s.MaxItems}, {"minLength", s.MinLength},
		{"maxLength", s.MaxLength}, {"minProperties", s.MinProperties}, {"maxProperties", s.MaxProperties}} {
		if nf.v != nil {
			field(nf.name)
			w.value(*nf.v, depth+1)
		}
	}
	if s.Minimum != nil {
		field("minimum")
		w.float(*s.Minimum, 64)
	}
	if s.Maximum != nil {
		field("maximum")
		w.float(*s.Maximum, 64)
	}
	if s.Pattern != "" {
		field("pattern")
		w.str(s.Pattern)
	}
	if s.Default != nil {
		field("default")
		w.value(s.Default, depth+1)
	}
	if s.Example != nil {
		field("example")
		w.value(s.Example, depth+1)
	}
	if len(s.PropertyOrdering) > 0 {
		field("propertyOrdering")
		w.value(s.PropertyOrdering, depth+1)
	}
	w.buf = append(w.buf, '}')
}

// lowerStr writes an ASCII identifier in lower case as a JSON string.
func (w *jsonWriter) lowerStr(s string) {
	start := len(w.buf)
	w.str(s)
	for i := start; i < len(w.buf); i++ {
		if c := w.buf[i]; c >= 'A' && c <= 'Z' {
			w.buf[i] = c + 'a' - 'A'
		}
	}
}
