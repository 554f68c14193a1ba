package tokens

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/adk-contextguard/contextguard/core/coretest"
)

// requireSameFeatures checks that the counter gives the reference counts on
// s, as a string and as a byte slice.
func requireSameFeatures(t testing.TB, s string, msg ...any) {
	t.Helper()
	want := countRef(s)
	if got := Count(s); got != want {
		t.Fatalf("Count(%.200q) differs from the reference %v:\n got  %v\n want %v", s, msg, got, want)
	}
	var got Features
	countFeatures([]byte(s), &got)
	if got != want {
		t.Fatalf("countFeatures([]byte(%.200q)) differs from the reference %v:\n got  %v\n want %v", s, msg, got, want)
	}
}

func TestFeaturesMatchReferenceGenerated(t *testing.T) {
	for _, kind := range coretest.Kinds() {
		for seed := int64(0); seed < 4; seed++ {
			for _, size := range []int{1, 17, 300, 5000, 40000} {
				requireSameFeatures(t, coretest.Generate(kind, size, seed), kind, seed, size)
			}
		}
	}
}

// fragments are the pieces random texts are built from: every byte class
// the counter distinguishes, runs that sit on its thresholds (hex of 8,
// base64 of 20), and valid, truncated and invalid UTF-8.
var fragments = []string{
	"a", "z", "Q", "HTTP", "Server", "camelCase", "x", "é", "Ñ", "ß", "ǅ", "\u0301", "ḿ",
	"0", "7", "123", "4567", "/", "+", "//", "++", "=", " ", "  ", "\n", "\r\n", "\t", "\t\t",
	"|", "-", "--", ".", ",", "\"", "\\", "{", "}", "\x00", "\x1f", "\x7f",
	"你", "好", "世界", "中文", "𠀀", "の", "カ", "ｶ", "한", "ᄀ", "ㄱ", "。", "，", "Ａ", "α", "Ж", "ع", "क", "ก", "ა",
	"\u2014", "\u201c", "\u2028", "🌍", "€", "©", "\xe4\xb8", "\xe4", "\xf0\x9f", "\xff", "\xc0", "\xc2", "\x80", "\xed\xa0\x80",
	"deadbeef", "DEADBEEF01", "0a1b2c3d4e", "aGVsbG8gd29ybGQhIHRoaXMgaXM", "QUJDREVGR0hJSktMTU5PUFFSU1RVVldY+/9z",
	"79b1", "6d13", "a1B2c3D4e5F6g7H8i9J0k", "ÀÉÎõü", "naïve", "ÉCOLE", "gwvmmzw", "strengths", "xkcd",
	"====", "-----", "________", "<><>", "!!!!!", "─", "──────", "█", "░░", "├──", "══", "▟",
	"𠀡", "𪜀", "𝐀", "𝟎", "\U000e0001", "", "", "󰀀",
	"̣́", "᪰", "᷀", "⃗", "︠", "\u200d", "️", "🏽", "â\u0094", "â\u0094\u0080â",
}

func randomText(r *rand.Rand) string {
	var b strings.Builder
	n := r.IntN(40)
	for range n {
		switch r.IntN(10) {
		case 0:
			b.WriteByte(byte(r.IntN(256)))
		case 1:
			b.WriteString(strings.Repeat(fragments[r.IntN(len(fragments))], 1+r.IntN(12)))
		default:
			b.WriteString(fragments[r.IntN(len(fragments))])
		}
	}
	return b.String()
}

func TestFeaturesMatchReferenceRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	iters := 200_000
	if testing.Short() {
		iters = 20_000
	}
	for range iters {
		requireSameFeatures(t, randomText(r))
	}
	// Pure random bytes, mostly invalid UTF-8.
	buf := make([]byte, 64)
	for range iters / 4 {
		b := buf[:r.IntN(len(buf))]
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		requireSameFeatures(t, string(b))
	}
}

// cutRunPieces are glued into the long runs of
// TestFeaturesMatchReferenceCutRuns: letters of every case, digits, '/' and
// '+', Latin letters of two and three bytes, and the byte that ends a run.
var cutRunPieces = []string{
	"x", "qz", "Ab", "B", "CD", "q", "7", "42", "/", "+", "é", "Ñ", "ḿ", "ab", "Xy", "a1", "Z9", "=",
}

// cutRunText returns a run of about n bytes without a space: pieces of
// cutRunPieces, and every few pieces a run of one letter (4 to 9 copies)
// that cuts the words around it.
func cutRunText(r *rand.Rand, n int) string {
	var b strings.Builder
	for b.Len() < n {
		if r.IntN(3) == 0 {
			b.WriteString(strings.Repeat(string("abcqXYZ"[r.IntN(7)]), 4+r.IntN(6)))
			continue
		}
		for range 1 + r.IntN(8) {
			b.WriteString(cutRunPieces[r.IntN(len(cutRunPieces))])
		}
	}
	return b.String()
}

// TestFeaturesMatchReferenceCutRuns checks the counter on long runs cut
// often before runs of one letter, where it counts a word that starts
// inside a run it already cut without reading the run to its end (cutWord).
func TestFeaturesMatchReferenceCutRuns(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	for range 500 {
		s := cutRunText(r, 200+r.IntN(4000))
		requireSameFeatures(t, s)
		// The same run cut at a byte the run cannot hold, and at a space.
		requireSameFeatures(t, s+"="+s)
		requireSameFeatures(t, strings.ToLower(s)+" "+s)
	}
}

func FuzzFeaturesMatchReference(f *testing.F) {
	for _, s := range fragments {
		f.Add([]byte(s))
	}
	f.Add([]byte("HTTPServer2Go x79b1 a/b+c== 你好，世界 \xff\xfe  \n\n\t|--|"))
	f.Fuzz(func(t *testing.T, data []byte) {
		requireSameFeatures(t, string(data))
	})
}

// jsonValues are values of the types Value encodes itself.
func jsonValues() []any {
	long := strings.Repeat("Zażółć gęślą jaźń <b>&amp;</b> \"q\" \\ \n\t\r\x01 \u2028\u2029 \xff 你好 ", 20)
	return []any{
		nil, true, false, "", "plain", long, 0.0, -1.5, 1e21, 1e-7, 123456789.0, float32(3.25),
		7, int8(-8), int16(16), int32(-32), int64(64), uint(1), uint8(8), uint16(16), uint32(32), uint64(64),
		json.Number("12.50"), json.RawMessage(`{"raw":[1,2]}`), []byte("raw \x00 bytes"), []byte(nil),
		[]any{"a", 1.0, nil, []any{}, map[string]any{}}, []string{"x", "y<z"}, []string(nil),
		map[string]string{"b": "2", "a": "1\n"}, []map[string]any{{"k": "v"}},
		map[string]any{"zeta": long, "Alpha": []any{long, 1.0}, "mid": map[string]any{"k\"ey": "v\\al", "n": nil}},
		struct {
			A int    `json:"a"`
			B string `json:"b"`
		}{1, "two"},
	}
}

func TestValueFeaturesMatchReference(t *testing.T) {
	vals := jsonValues()
	for _, kind := range coretest.Kinds() {
		vals = append(vals, map[string]any{"output": coretest.Generate(kind, 3000, 1)})
	}
	for _, v := range vals {
		want, err := json.Marshal(v)
		require.NoError(t, err)
		require.Equal(t, countRef(string(want)), valueFeatures(v), "%s", want)
	}
}

func TestValueStringsMatchMarshal(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	check := func(s string) {
		want, err := json.Marshal(s)
		require.NoError(t, err)
		w := getWriter()
		w.str(s)
		require.Equal(t, string(want), string(w.buf), "%q", s)
		putWriter(w)
		require.Equal(t, countRef(string(want)), valueFeatures(s), "%q", s)
	}
	for range 20_000 {
		check(randomText(r))
	}
	for c := range 256 {
		check(strings.Repeat("abcdefgh", c%3) + string(rune(c)) + "ijklmnopq" + string([]byte{byte(c)}) + "rstuvwxyz")
	}
}

func TestStrMatchesMarshalAllShortSequences(t *testing.T) {
	// Every one- and two-byte string and every three-byte string with a
	// lead byte of E0-EF, inside plain text.
	var buf []byte
	check := func(b []byte) {
		s := "ab" + string(b) + "cd"
		want, err := json.Marshal(s)
		require.NoError(t, err)
		w := getWriter()
		w.str(s)
		if string(want) != string(w.buf) {
			t.Fatalf("str(%q) = %s, json.Marshal = %s", s, w.buf, want)
		}
		putWriter(w)
	}
	for a := range 256 {
		check([]byte{byte(a)})
		for b := range 256 {
			buf = append(buf[:0], byte(a), byte(b))
			check(buf)
			if a >= 0xE0 && a <= 0xEF {
				for _, c := range []byte{0x00, 0x41, 0x7F, 0x80, 0xA8, 0xA9, 0xBF, 0xC0, 0xFF} {
					check([]byte{byte(a), byte(b), c})
				}
			}
		}
	}
}
