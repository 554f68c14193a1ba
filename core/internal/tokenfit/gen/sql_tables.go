package main

import (
	"bytes"
	"fmt"
	"strings"
)

// SQL result tables, as database clients print them.

// sqlTables writes psql and MySQL result tables with varied columns.
func (g *gen) sqlTables(w *bytes.Buffer, size int) {
	for w.Len() < size {
		ncol := 2 + g.r.IntN(6)
		cols := make([]string, ncol)
		kinds := make([]int, ncol)
		for i := range cols {
			cols[i] = g.snake()
			kinds[i] = g.r.IntN(6)
		}
		nrow := 2 + g.r.IntN(15)
		rows := make([][]string, nrow)
		for r := range rows {
			rows[r] = make([]string, ncol)
			for c := range cols {
				switch kinds[c] {
				case 0:
					rows[r][c] = g.ident()
				case 1:
					rows[r][c] = g.number()
				case 2:
					rows[r][c] = g.when()
				case 3:
					rows[r][c] = g.pick(g.word(), g.word()+" "+g.word(), "NULL", "t", "f", "")
				case 4:
					rows[r][c] = g.email()
				default:
					rows[r][c] = fmt.Sprint(g.r.IntN(100000))
				}
			}
		}
		width := make([]int, ncol)
		for c, h := range cols {
			width[c] = len(h)
			for r := range rows {
				width[c] = max(width[c], len(rows[r][c]))
			}
		}
		mysql := g.r.IntN(2) == 0
		sep := func() {
			w.WriteByte('+')
			for c := range cols {
				w.WriteString(strings.Repeat("-", width[c]+2))
				w.WriteByte('+')
			}
			w.WriteByte('\n')
		}
		line := func(cells []string) {
			if mysql {
				w.WriteString("| ")
			} else {
				w.WriteByte(' ')
			}
			for c, v := range cells {
				if c > 0 {
					w.WriteString(" | ")
				}
				if kinds[c] == 1 || kinds[c] == 5 {
					fmt.Fprintf(w, "%*s", width[c], v)
				} else {
					fmt.Fprintf(w, "%-*s", width[c], v)
				}
			}
			if mysql {
				w.WriteString(" |")
			}
			w.WriteByte('\n')
		}
		if mysql {
			sep()
		}
		line(cols)
		if mysql {
			sep()
		} else {
			for c := range cols {
				if c > 0 {
					w.WriteByte('+')
				}
				w.WriteString(strings.Repeat("-", width[c]+2))
			}
			w.WriteByte('\n')
		}
		for _, r := range rows {
			line(r)
		}
		if mysql {
			sep()
			fmt.Fprintf(w, "%d rows in set (%.2f sec)\n\n", nrow, g.r.Float64())
		} else {
			fmt.Fprintf(w, "(%d rows)\n\n", nrow)
		}
	}
}
