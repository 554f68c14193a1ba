package main

import (
	"bytes"
	"encoding/json"
)

// Tool schemas: JSON Schema declarations of tools, as agents send them.

func (g *gen) schemaProp(depth int) map[string]any {
	p := map[string]any{"description": g.sentence(4 + g.r.IntN(14))}
	switch x := g.r.IntN(7); {
	case x < 2:
		p["type"] = "string"
		if g.r.IntN(3) == 0 {
			p["enum"] = []any{g.word(), g.word(), g.word()}
		}
	case x < 3:
		p["type"] = "integer"
		p["minimum"] = 0
		p["maximum"] = []int{10, 100, 1000, 65535}[g.r.IntN(4)]
	case x < 4:
		p["type"] = "boolean"
		p["default"] = false
	case x < 5 && depth < 2:
		p["type"] = "array"
		p["items"] = g.schemaProp(depth + 1)
	case x < 6 && depth < 2:
		p["type"] = "object"
		props := map[string]any{}
		var req []any
		for i := 0; i < 1+g.r.IntN(4); i++ {
			k := g.snake()
			props[k] = g.schemaProp(depth + 1)
			if g.r.IntN(2) == 0 {
				req = append(req, k)
			}
		}
		p["properties"] = props
		if req != nil {
			p["required"] = req
		}
	default:
		p["type"] = "string"
		p["format"] = g.pick("date-time", "uri", "email", "uuid")
	}
	return p
}

func (g *gen) schemas(w *bytes.Buffer, size int) {
	for w.Len() < size {
		props := map[string]any{}
		var req []any
		for i := 0; i < 1+g.r.IntN(6); i++ {
			k := g.snake()
			props[k] = g.schemaProp(0)
			if g.r.IntN(2) == 0 {
				req = append(req, k)
			}
		}
		params := map[string]any{"type": "object", "properties": props}
		if req != nil {
			params["required"] = req
		}
		decl := map[string]any{"name": g.snake(), "description": g.sentence(8 + g.r.IntN(25)), "parameters": params}
		var b []byte
		if g.r.IntN(2) == 0 {
			b, _ = json.Marshal(decl)
		} else {
			b, _ = json.MarshalIndent(decl, "", "  ")
		}
		w.Write(b)
		w.WriteString("\n")
	}
}
