package core

// todosKey holds the agent's todo list, read into every summary; the guard's
// own keys are in core/internal/state (ARCHITECTURE.md, Session state).
const todosKey = "todos"

// TodoItem is one entry of the agent's todo list (session key "todos"),
// carried into every summary so the agent can restore it after compaction.
type TodoItem struct {
	Content    string `json:"content"`
	Status     string `json:"status"`
	ActiveForm string `json:"active_form"`
}

// loadTodos reads the todo list, accepting []TodoItem and the []any of maps a
// JSON-backed session service returns. Malformed entries are skipped.
func loadTodos(st StateReader) []TodoItem {
	if st == nil {
		return nil
	}
	v, err := st.Get(todosKey)
	if err != nil || v == nil {
		return nil
	}
	switch t := v.(type) {
	case []TodoItem:
		return t
	case []*TodoItem:
		out := make([]TodoItem, 0, len(t))
		for _, it := range t {
			if it != nil {
				out = append(out, *it)
			}
		}
		return out
	case []any:
		out := make([]TodoItem, 0, len(t))
		for _, it := range t {
			switch m := it.(type) {
			case map[string]any:
				item := TodoItem{}
				item.Content, _ = m["content"].(string)
				item.Status, _ = m["status"].(string)
				item.ActiveForm, _ = m["active_form"].(string)
				if item.Content != "" {
					out = append(out, item)
				}
			case TodoItem:
				out = append(out, m)
			}
		}
		return out
	}
	return nil
}
