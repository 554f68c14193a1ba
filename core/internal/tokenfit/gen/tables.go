package main

import (
	"bytes"
	"fmt"
)

// Tables: Markdown tables and aligned text tables.

func (g *gen) mdTable(w *bytes.Buffer, size int) {
	for w.Len() < size {
		cols := 3 + g.r.IntN(5)
		fmt.Fprintf(w, "## %s\n\n%s\n\n|", g.sentence(3), g.sentence(10+g.r.IntN(10)))
		kinds := make([]int, cols)
		for c := 0; c < cols; c++ {
			kinds[c] = g.r.IntN(5)
			fmt.Fprintf(w, " %s |", upperFirst(g.word()))
		}
		w.WriteString("\n|")
		for c := 0; c < cols; c++ {
			w.WriteString(g.pick(" --- |", "---|", ":---|", "---:|", " :---: |"))
		}
		w.WriteString("\n")
		for r := 0; r < 3+g.r.IntN(15); r++ {
			w.WriteString("|")
			for c := 0; c < cols; c++ {
				var cell string
				switch kinds[c] {
				case 0:
					cell = g.word() + " " + g.word()
				case 1:
					cell = fmt.Sprint(g.r.IntN(100000))
				case 2:
					cell = fmt.Sprintf("%.1f%%", g.r.Float64()*100)
				case 3:
					cell = "`" + g.camel() + "`"
				default:
					cell = g.pick("✅", "❌", "yes", "no", "**high**", "_low_", "n/a")
				}
				fmt.Fprintf(w, " %s |", cell)
			}
			w.WriteString("\n")
		}
		w.WriteString("\n")
	}
}

func (g *gen) textTable(w *bytes.Buffer, size int) {
	for w.Len() < size {
		switch g.r.IntN(3) {
		case 0:
			fmt.Fprintf(w, "$ kubectl get pods -n %s -o wide\n%-40s %-7s %-18s %-9s %-5s %-15s %s\n", g.word(), "NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE")
			for i := 0; i < 5+g.r.IntN(20); i++ {
				name := g.word() + "-" + g.word() + "-" + g.hex(10)[:10] + "-" + g.hex(6)[:5]
				fmt.Fprintf(w, "%-40s %-7s %-18s %-9d %-5s %-15s %s\n", name, fmt.Sprintf("%d/%d", g.r.IntN(3), 1+g.r.IntN(2)),
					g.pick("Running", "Running", "Pending", "CrashLoopBackOff", "Completed", "ContainerCreating"), g.r.IntN(30),
					fmt.Sprintf("%d%s", 1+g.r.IntN(59), g.pick("s", "m", "h", "d")), g.ip(), "node-"+g.hex(8))
			}
		case 1:
			fmt.Fprintf(w, "$ ps aux\nUSER         PID %%CPU %%MEM    VSZ   RSS TTY      STAT START   TIME COMMAND\n")
			for i := 0; i < 5+g.r.IntN(20); i++ {
				fmt.Fprintf(w, "%-10s %6d %4.1f %4.1f %7d %6d %-8s %-4s %02d:%02d %6s /usr/bin/%s --%s=%s\n", g.name(), g.r.IntN(99999),
					g.r.Float64()*100, g.r.Float64()*20, g.r.IntN(9999999), g.r.IntN(999999), g.pick("?", "pts/0", "pts/1"),
					g.pick("Ss", "R+", "Sl", "S"), g.r.IntN(24), g.r.IntN(60), fmt.Sprintf("%d:%02d", g.r.IntN(100), g.r.IntN(60)), g.word(), g.word(), g.word())
			}
		default:
			fmt.Fprintf(w, "$ docker ps\nCONTAINER ID   IMAGE                          COMMAND                  CREATED         STATUS         PORTS                    NAMES\n")
			for i := 0; i < 3+g.r.IntN(12); i++ {
				fmt.Fprintf(w, "%-14s %-30s %-24s %-15s %-14s %-24s %s_%s\n", g.hex(12), g.word()+"/"+g.word()+":"+fmt.Sprintf("%d.%d", g.r.IntN(9), g.r.IntN(30)),
					fmt.Sprintf("\"%s …\"", g.pick("/docker-entrypoint", "python app.py", "node server.js")),
					fmt.Sprintf("%d hours ago", 1+g.r.IntN(48)), fmt.Sprintf("Up %d minutes", 1+g.r.IntN(59)),
					fmt.Sprintf("0.0.0.0:%d->%d/tcp", 1000+g.r.IntN(60000), 80+g.r.IntN(9000)), g.word(), g.name())
			}
		}
		w.WriteString("\n")
	}
}
