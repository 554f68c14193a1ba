package main

import (
	"bytes"
	"fmt"
	"strings"
)

// Unusual text: scripts, symbols and byte patterns that are rare in the
// other generators.

// unusual writes text of the classes a byte-pair vocabulary mostly lacks or
// holds in long tokens, inside ordinary lines: rare CJK ideographs
// (Extensions B–G), mathematical alphanumerics, combining marks, emoji ZWJ
// sequences, private-use glyphs, punctuation rules and patterns, box-drawing
// and block characters, and identifiers with double underscores. Its
// distributions differ from the generated-class test in internal/tokens.
func (g *gen) unusual(w *bytes.Buffer, size int) {
	for w.Len() < size {
		switch g.r.IntN(9) {
		case 0:
			fmt.Fprintf(w, "%s: ", g.word())
			for i, n := 0, 2+g.r.IntN(30); i < n; i++ {
				w.WriteRune(0x20000 + rune(g.r.IntN(0xEBF0)))
			}
			w.WriteString(g.pick("。\n", "\n", "」\n"))
		case 1:
			base := rune(0x1D400 + 52*g.r.IntN(13))
			for i, n := 0, 1+g.r.IntN(6); i < n; i++ {
				for j, m := 0, 2+g.r.IntN(8); j < m; j++ {
					w.WriteRune(base + rune(g.r.IntN(52)))
				}
				w.WriteString(" ")
			}
			w.WriteString(g.sentence(3+g.r.IntN(5)) + "\n")
		case 2:
			for i, n := 0, 3+g.r.IntN(8); i < n; i++ {
				for _, c := range g.word() {
					w.WriteRune(c)
					for j, m := 0, g.r.IntN(4); j < m; j++ {
						if g.r.IntN(3) == 0 {
							w.WriteRune(g.pick4(0x1AB0, 0x1DC0, 0x20D0, 0xFE20) + rune(g.r.IntN(14)))
						} else {
							w.WriteRune(0x300 + rune(g.r.IntN(0x70)))
						}
					}
				}
				w.WriteString(" ")
			}
			w.WriteString("\n")
		case 3:
			fmt.Fprintf(w, "%s ", g.name())
			for i, n := 0, 1+g.r.IntN(6); i < n; i++ {
				w.WriteString(g.pick("👩\u200d💻", "👨🏾\u200d🔧", "🧑🏻\u200d🎨", "👩\u200d👩\u200d👧", "👨\u200d👨\u200d👦\u200d👦",
					"🏳️\u200d⚧️", "🧔🏽\u200d♂️", "🙋🏼\u200d♀️", "😶\u200d🌫️", "🐕\u200d🦺", "👁️\u200d🗨️", "🎉", "✅", "🚀"))
			}
			w.WriteString(" " + g.sentence(2+g.r.IntN(6)) + "\n")
		case 4:
			w.WriteString(g.pick("❯ ", "λ ", "") + "\u200b")
			for i, n := 0, 1+g.r.IntN(8); i < n; i++ {
				if g.r.IntN(6) == 0 {
					w.WriteRune(0xF0000 + rune(g.r.IntN(0xFFFD)))
				} else {
					w.WriteRune(0xE000 + rune(g.r.IntN(0x18FF)))
				}
				w.WriteString(g.pick("", " ", " "+g.word()+" "))
			}
			w.WriteString("\n")
		case 5:
			n := 3 + g.r.IntN(120)
			c := g.pick("=", "-", "*", "#", "~", ".", "_", "+", "/", "!", "^", "<", ">", "%", ":", "`", "&", "'", "\"")
			switch g.r.IntN(3) {
			case 0:
				w.WriteString(strings.Repeat(c, n) + "\n")
			case 1:
				w.WriteString(strings.Repeat(g.pick("-=", "._", "<>", "*-", "=#", "~-", "+-", "/\\", "^v"), n/2) + "\n")
			default:
				fmt.Fprintf(w, "%s %s %s\n", strings.Repeat(c, n/3+1), g.sentence(2+g.r.IntN(4)), strings.Repeat(c, n/3+1))
			}
		case 6:
			switch g.r.IntN(3) {
			case 0:
				fmt.Fprintf(w, "%s%s %s.%s\n", strings.Repeat(g.pick("│   ", "    ", "┃   "), g.r.IntN(4)), g.pick("├── ", "└── ", "┣━━ ", "┗━━ "), g.snake(), g.pick("go", "py", "md", "json"))
			case 1:
				cw := 3 + g.r.IntN(20)
				h := g.pick("─", "═", "━")
				fmt.Fprintf(w, "%s%s%s\n%s %-*s %s\n%s%s%s\n", g.pick("┌", "╔", "┏"), strings.Repeat(h, cw), g.pick("┐", "╗", "┓"),
					g.pick("│", "║", "┃"), cw-2, g.word(), g.pick("│", "║", "┃"), g.pick("└", "╚", "┗"), strings.Repeat(h, cw), g.pick("┘", "╝", "┛"))
			default:
				k := g.r.IntN(30)
				fmt.Fprintf(w, "%-10s %s%s %3d%% %s\n", g.word(), strings.Repeat(g.pick("█", "▇", "■", "▓"), k), strings.Repeat(g.pick("░", " ", "▒", "·"), 30-k), k*100/30,
					strings.Repeat(g.pick("▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"), g.r.IntN(12)))
			}
		case 7:
			fmt.Fprintf(w, "%s__%s__%s(self.__%s, %s=__%s__) # %s/__%s__/%s__%s.py\n", g.word(), g.word(), g.word(), g.snake(), g.word(),
				g.word(), g.pick("pkg", "src", "tests"), g.pick("init", "pycache", "main", "snapshots", "mocks"), g.word(), g.snake())
		default:
			fmt.Fprintf(w, "%s__%s__%s=%d %s\n", strings.ToUpper(g.snake()), strings.ToUpper(g.word()), strings.ToUpper(g.word()), g.r.IntN(10000), g.sentence(3))
		}
	}
}

func (g *gen) pick4(a, b, c, d rune) rune {
	return [4]rune{a, b, c, d}[g.r.IntN(4)]
}
