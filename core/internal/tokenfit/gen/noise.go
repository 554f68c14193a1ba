package main

import (
	"bytes"
	"strings"
)

// Noise: text that is no language at all, for the fit to see how
// tokenizers cut it: random punctuation, runs of one letter, deep tabs,
// random kana, symbols and emoji, character art. Each
// stretch is of one kind, of random length, so that chunks mix them in
// different proportions. Its distributions differ from the hostile-class
// test of internal/tokens, which checks what this teaches.
func (g *gen) noise(w *bytes.Buffer, size int) {
	const punct = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
	for w.Len() < size {
		end := w.Len() + 80 + g.r.IntN(1200)
		kind := g.r.IntN(8)
		// A skewed alphabet: some bytes far more frequent than others.
		alpha := punct[g.r.IntN(16):]
		for w.Len() < end {
			switch kind {
			case 0:
				for i, n := 0, 1+g.r.IntN(40); i < n; i++ {
					w.WriteByte(alpha[min(len(alpha)-1, g.r.IntN(len(alpha))*g.r.IntN(len(alpha))/len(alpha))])
				}
				w.WriteString(g.pick(" ", "", "\n", "  "))
			case 1:
				c := byte('a' + g.r.IntN(26))
				if g.r.IntN(2) == 0 {
					c -= 'a' - 'A'
				}
				w.WriteString(strings.Repeat(string(c), longLetterRun+g.r.IntN([]int{8, 40, 300}[g.r.IntN(3)])))
				w.WriteString(g.pick(" ", "\n", "", "-", ". "))
			case 2:
				w.WriteString(strings.Repeat("\t", 1+g.r.IntN(20)) + g.pick(g.word(), "}", "];", "end") + "\n")
			case 3:
				// Kana only: other scripts have no real text in the
				// corpus to hold their weights to words, and random
				// ideographs are rarer ones than prose's.
				k := g.r.IntN(2)
				lo := []rune{0x3041, 0x30A1}[k]
				span := []int{86, 90}[k]
				for i, n := 0, 1+g.r.IntN(12); i < n; i++ {
					w.WriteRune(lo + rune(g.r.IntN(span)))
				}
				w.WriteString(g.pick(" ", "\n", ". "))
			case 4:
				for i, n := 0, 1+g.r.IntN(10); i < n; i++ {
					if g.r.IntN(2) == 0 {
						w.WriteRune(0x1F300 + rune(g.r.IntN(0x6FF)))
					} else {
						w.WriteRune(0x2100 + rune(g.r.IntN(0x700)))
					}
				}
				w.WriteString(g.pick(" ", "", "\n"))
			case 5:
				for i, n := 0, 8+g.r.IntN(70); i < n; i++ {
					w.WriteByte(g.pick(" ", " ", "/", "\\", "_", "|", "(", ")", "'", ".", ",", ":", "-", "*", "#")[0])
				}
				w.WriteString("\n")
			case 6:
				w.WriteString(strings.Repeat(punct[g.r.IntN(len(punct)):][:1], 1+g.r.IntN([]int{6, 30, 200}[g.r.IntN(3)])))
				w.WriteString(g.pick("\n", " ", ""))
			default:
				w.WriteString(g.pick("<=>", "&&=", "#{", "%>", "<%", "=~", "!~", "@{", "}}", "$(", "))", "->>", "|=", "^^", "..=", "?:"))
				w.WriteString(g.pick(" ", "", "", "\n"))
			}
		}
		w.WriteString("\n")
	}
}

// longLetterRun is the shortest run of one letter the estimator costs as a
// run (internal/tokens): shorter ones are words, which noise must not teach.
const longLetterRun = 4
