package coretest

import (
	"fmt"
	"strings"
)

// TallyText lists counts in order as "name n, name n", the empty key under
// emptyName: the stress tables of both ADK lines print their compactions by
// reason with it.
func TallyText[K ~string](order []K, counts map[K]int, emptyName string) string {
	parts := make([]string, 0, len(order))
	for _, k := range order {
		name := string(k)
		if name == "" {
			name = emptyName
		}
		parts = append(parts, fmt.Sprintf("%s %d", name, counts[k]))
	}
	return strings.Join(parts, ", ")
}
