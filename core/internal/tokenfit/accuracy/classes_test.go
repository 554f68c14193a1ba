package accuracy_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tiktoken-go/tokenizer"

	"github.com/adk-contextguard/contextguard/core/internal/tokens"
)

// Bounds of the generated-class test: a class may be under-estimated by at
// most 15% (the guard's margin absorbs that much) and over-estimated by at
// most 50% (more wastes a large part of the window on nothing).
const (
	classMaxUnder = 0.15
	classMaxOver  = 0.50
	// classMinRunes is the least length of a generated text: the bounds are
	// about texts of 1k+ characters.
	classMinRunes = 1200
)

// classGen builds texts of one class of unusual content. None of these
// generators is used by the fit: they check that the estimator is never
// badly wrong on text it was not fitted for.
type classGen struct{ r *rand.Rand }

func (g *classGen) runeIn(lo, hi rune) rune { return lo + rune(g.r.IntN(int(hi-lo+1))) }

func (g *classGen) pick(s ...string) string { return s[g.r.IntN(len(s))] }

// fill calls part until the text has at least classMinRunes runes.
func (g *classGen) fill(part func(b *strings.Builder)) string {
	var b strings.Builder
	for utf8.RuneCountInString(b.String()) < classMinRunes {
		part(&b)
	}
	return b.String()
}

func (g *classGen) gen(class string) string {
	switch class {
	case "rare_cjk":
		// Ideographs of CJK Extensions B–F (U+20000–U+2EBEF) and G
		// (U+30000–U+3134F), in runs with CJK punctuation.
		return g.fill(func(b *strings.Builder) {
			for i, n := 0, 3+g.r.IntN(20); i < n; i++ {
				if g.r.IntN(8) == 0 {
					b.WriteRune(g.runeIn(0x30000, 0x3134F))
				} else {
					b.WriteRune(g.runeIn(0x20000, 0x2EBEF))
				}
			}
			b.WriteString(g.pick("，", "。", "、", "。\n", " "))
		})
	case "math_alnum":
		// Words in the styled letters of U+1D400–U+1D7FF (bold, italic,
		// script, fraktur, double-struck), as pasted from social media.
		return g.fill(func(b *strings.Builder) {
			style := rune(g.r.IntN(12)) * 52
			for i, n := 0, 2+g.r.IntN(9); i < n; i++ {
				b.WriteRune(0x1D400 + style + rune(g.r.IntN(52)))
			}
			if g.r.IntN(6) == 0 {
				b.WriteRune(0x1D7CE + rune(g.r.IntN(50))) // styled digits
			}
			b.WriteString(g.pick(" ", " ", " ", ", ", ".\n"))
		})
	case "combining":
		// Letters under stacks of combining marks ("Zalgo" text) from the
		// four combining blocks.
		blocks := [][2]rune{{0x300, 0x36F}, {0x1AB0, 0x1ACE}, {0x1DC0, 0x1DFF}, {0x20D0, 0x20F0}, {0xFE20, 0xFE2F}}
		return g.fill(func(b *strings.Builder) {
			for i, n := 0, 2+g.r.IntN(8); i < n; i++ {
				b.WriteByte(byte('a' + g.r.IntN(26)))
				for j, m := 0, g.r.IntN(5); j < m; j++ {
					bl := blocks[g.r.IntN(len(blocks))]
					b.WriteRune(g.runeIn(bl[0], bl[1]))
				}
			}
			b.WriteString(g.pick(" ", " ", ". "))
		})
	case "emoji_zwj":
		// Emoji sequences as chat reactions and profile lines carry them:
		// families and couples whose members each have a skin tone,
		// professions with skin tone and gender, regional-indicator and
		// subdivision (tag sequence) flags, and keycaps.
		people := []rune{0x1F468, 0x1F469, 0x1F9D1, 0x1F466, 0x1F467}
		objects := []string{"\U0001F4BB", "\U0001F52C", "\U0001F680", "\U0001F373", "\U0001F3A8", "\u2695\uFE0F",
			"\u2708\uFE0F", "\U0001F692", "\u2696\uFE0F", "\U0001F9AF", "\U0001F9BC"}
		tone := func(b *strings.Builder) { b.WriteRune(0x1F3FB + rune(g.r.IntN(5))) }
		return g.fill(func(b *strings.Builder) {
			for i, n := 0, 1+g.r.IntN(4); i < n; i++ {
				switch g.r.IntN(6) {
				case 0: // family, each member with a skin tone
					for j, m := 0, 2+g.r.IntN(3); j < m; j++ {
						if j > 0 {
							b.WriteRune(0x200D)
						}
						b.WriteRune(people[g.r.IntN(len(people))])
						tone(b)
					}
				case 1: // couple with heart or kiss, or holding hands
					b.WriteRune(people[g.r.IntN(3)])
					tone(b)
					b.WriteString(g.pick("\u200D\u2764\uFE0F\u200D", "\u200D\u2764\uFE0F\u200D\U0001F48B\u200D", "\u200D\U0001F91D\u200D"))
					b.WriteRune(people[g.r.IntN(3)])
					tone(b)
				case 2: // profession with skin tone, sometimes gendered
					b.WriteRune(people[g.r.IntN(3)])
					tone(b)
					b.WriteRune(0x200D)
					b.WriteString(objects[g.r.IntN(len(objects))])
				case 3: // country flags: pairs of regional indicators
					for j, m := 0, 1+g.r.IntN(3); j < m; j++ {
						b.WriteRune(0x1F1E6 + rune(g.r.IntN(26)))
						b.WriteRune(0x1F1E6 + rune(g.r.IntN(26)))
					}
				case 4: // subdivision flags: black flag, tag letters, cancel tag
					b.WriteRune(0x1F3F4)
					for _, c := range g.pick("gbeng", "gbsct", "gbwls", "usca", "ustx") {
						b.WriteRune(0xE0000 + c)
					}
					b.WriteRune(0xE007F)
				default: // keycaps and gendered gestures
					b.WriteString(g.pick("1\uFE0F\u20E3", "#\uFE0F\u20E3", "\U0001F64B\U0001F3FD\u200D\u2640\uFE0F",
						"\U0001F937\U0001F3FB\u200D\u2642\uFE0F", "\U0001F3F3\uFE0F\u200D\U0001F308"))
				}
			}
			b.WriteString(g.pick(" ", " ", " ok ", "\n"))
		})
	case "private_use":
		// Private-use characters (icon fonts, Nerd Font glyphs in prompts):
		// the BMP area U+E000–U+F8FF and plane 15.
		return g.fill(func(b *strings.Builder) {
			for i, n := 0, 1+g.r.IntN(12); i < n; i++ {
				if g.r.IntN(5) == 0 {
					b.WriteRune(g.runeIn(0xF0000, 0xFFFFD))
				} else {
					b.WriteRune(g.runeIn(0xE000, 0xF8FF))
				}
			}
			b.WriteString(g.pick(" ", " main ", " ~/src ", "\n"))
		})
	case "punct_runs":
		// Long runs of one or two punctuation characters: rules, banners,
		// separators, ASCII-art underlines.
		return g.fill(func(b *strings.Builder) {
			n := 20 + g.r.IntN(180)
			switch g.r.IntN(3) {
			case 0:
				b.WriteString(strings.Repeat(g.pick("=", "-", "*", "#", "~", ".", "_", "+", "/", "!", "^", "<", ">"), n))
			case 1:
				b.WriteString(strings.Repeat(g.pick("-=", "=-", "*-", "<>", "-+", "._", "#="), n/2))
			default:
				c := g.pick("=", "-", "*", "#")
				b.WriteString(strings.Repeat(c, n/2) + " " + g.pick("SECTION", "Results", "step") + " " + strings.Repeat(c, n/2))
			}
			b.WriteString("\n")
		})
	case "box_drawing":
		// Box-drawing and block characters: tree listings, framed tables,
		// progress bars and block art.
		return g.fill(func(b *strings.Builder) {
			switch g.r.IntN(4) {
			case 0:
				fmt.Fprintf(b, "%s%s %s\n", g.pick("", "│   ", "│   │   ", "    "), g.pick("├──", "└──"), g.pick("main.go", "README.md", "internal", "go.mod"))
			case 1:
				w := 4 + g.r.IntN(30)
				line := strings.Repeat("─", w)
				fmt.Fprintf(b, "┌%s┬%s┐\n│ %-*s│ %-*s│\n└%s┴%s┘\n", line, line, w-1, "name", w-1, "value", line, line)
			case 2:
				n := g.r.IntN(40)
				fmt.Fprintf(b, "[%s%s] %d%%\n", strings.Repeat("█", n), strings.Repeat("░", 40-n), n*100/40)
			default:
				for i, n := 0, 10+g.r.IntN(50); i < n; i++ {
					b.WriteString(g.pick("█", "▓", "▒", "░", "▀", "▄", "▌", "▐", "═", "║", "╔", "╗", "╚", "╝"))
				}
				b.WriteString("\n")
			}
		})
	case "dunder_ident":
		// Paths and identifiers with double underscores, as tools print
		// them: find and git status listings of Python caches and Jest
		// snapshot directories, Python dunders and name-mangled attributes,
		// Django lookups, C reserved names and a__b__c names generated from
		// nested keys.
		return g.fill(func(b *strings.Builder) {
			w := func() string {
				return g.pick("init", "main", "models", "views", "utils", "config", "conftest", "settings", "urls",
					"serializers", "test_api", "test_models", "admin", "apps", "tasks", "signals")
			}
			dir := func() string {
				return g.pick("src/app", "app/core", "lib/utils", "tests", "tests/unit", "pkg/api/v1", "scripts", "migrations")
			}
			switch g.r.IntN(8) {
			case 0, 1, 2: // find . -name '*.pyc', git status of an unignored cache
				fmt.Fprintf(b, "%s%s/__pycache__/%s.cpython-3%d%s.pyc\n", g.pick("./", "\t", "?? "), dir(), g.pick("__init__", w(), w()),
					8+g.r.IntN(5), g.pick("", "", ".opt-1", ".opt-2"))
			case 3:
				fmt.Fprintf(b, "src/components/__tests__/__snapshots__/%s.test.tsx.snap\n", g.pick("Button", "NavBar", "UserCard", "Modal", "DataTable"))
			case 4:
				fmt.Fprintf(b, "Order.objects.filter(%s__%s__%s=%d)\n", g.pick("author", "user", "item"), g.pick("profile", "config", "status"),
					g.pick("icontains", "gte", "in", "isnull", "startswith"), g.r.IntN(100))
			case 5:
				fmt.Fprintf(b, "int __%s_%s(void *__p) __attribute__((__%s__));\n", g.pick("builtin", "cxa", "sync", "atomic"), w(),
					g.pick("packed", "noreturn", "unused", "aligned"))
			case 6:
				fmt.Fprintf(b, "self._%s__%s = %s__%s__%s\n", g.pick("Order", "User", "Model"), w(), w(), w(), w())
			default:
				fmt.Fprintf(b, "if __name__ == \"__main__\": %s.__%s__(__%s__)\n", w(), g.pick("init", "call", "enter"), g.pick("file", "doc", "all"))
			}
		})
	}
	panic("unknown class " + class)
}

// generatedClasses are the classes of TestEstimatorGeneratedClasses.
var generatedClasses = []string{"rare_cjk", "math_alnum", "combining", "emoji_zwj", "private_use",
	"punct_runs", "box_drawing", "dunder_ident"}

// TestEstimatorGeneratedClasses checks, for each class of unusual text, that
// the O200k estimate of 1k+ character texts is within the bounds above of
// the exact o200k_base count.
func TestEstimatorGeneratedClasses(t *testing.T) {
	enc, err := tokenizer.Get(tokenizer.O200kBase)
	require.NoError(t, err)
	est := tokens.New(tokens.O200k)
	for _, class := range generatedClasses {
		t.Run(class, func(t *testing.T) {
			for seed := uint64(1); seed <= 3; seed++ {
				g := &classGen{r: rand.New(rand.NewPCG(seed, 0xc1a55))}
				s := g.gen(class)
				require.GreaterOrEqual(t, utf8.RuneCountInString(s), classMinRunes)
				y, err := enc.Count(s)
				require.NoError(t, err)
				ratio := float64(est.Text(s)) / float64(y)
				t.Logf("%-13s seed %d: %5d runes, o200k %5d, estimate/o200k %.3f", class, seed, utf8.RuneCountInString(s), y, ratio)
				assert.GreaterOrEqual(t, ratio, 1-classMaxUnder, "%s seed %d under-estimated", class, seed)
				assert.LessOrEqual(t, ratio, 1+classMaxOver, "%s seed %d over-estimated", class, seed)
			}
		})
	}
}
