package tokens

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"math/bits"
	"strconv"
	"unicode/utf8"
)

// JSON leaves: numbers and strings written as encoding/json writes them.

// leaf writes a value that is not a map[string]any, []any or
// []map[string]any; it reports false, writing nothing, for another type.
func (w *jsonWriter) leaf(v any) bool {
	switch x := v.(type) {
	case nil:
		w.buf = append(w.buf, "null"...)
	case string:
		w.str(x)
	case bool:
		w.buf = strconv.AppendBool(w.buf, x)
	case float64:
		w.float(x, 64)
	case float32:
		w.float(float64(x), 32)
	case int:
		w.buf = strconv.AppendInt(w.buf, int64(x), 10)
	case int8:
		w.buf = strconv.AppendInt(w.buf, int64(x), 10)
	case int16:
		w.buf = strconv.AppendInt(w.buf, int64(x), 10)
	case int32:
		w.buf = strconv.AppendInt(w.buf, int64(x), 10)
	case int64:
		w.buf = strconv.AppendInt(w.buf, x, 10)
	case uint:
		w.buf = strconv.AppendUint(w.buf, uint64(x), 10)
	case uint8:
		w.buf = strconv.AppendUint(w.buf, uint64(x), 10)
	case uint16:
		w.buf = strconv.AppendUint(w.buf, uint64(x), 10)
	case uint32:
		w.buf = strconv.AppendUint(w.buf, uint64(x), 10)
	case uint64:
		w.buf = strconv.AppendUint(w.buf, x, 10)
	case json.Number:
		if x == "" {
			w.buf = append(w.buf, '0')
		} else {
			w.buf = append(w.buf, x...)
		}
	case json.RawMessage:
		if len(x) == 0 {
			w.buf = append(w.buf, "null"...)
		} else {
			w.buf = append(w.buf, x...)
		}
	case []byte:
		if x == nil {
			w.buf = append(w.buf, "null"...)
			return true
		}
		w.buf = append(w.buf, '"')
		w.buf = base64.StdEncoding.AppendEncode(w.buf, x)
		w.buf = append(w.buf, '"')
	case []string:
		if x == nil {
			w.buf = append(w.buf, "null"...)
			return true
		}
		w.buf = append(w.buf, '[')
		for i, e := range x {
			if i > 0 {
				w.buf = append(w.buf, ',')
			}
			w.str(e)
		}
		w.buf = append(w.buf, ']')
	case map[string]string:
		if x == nil {
			w.buf = append(w.buf, "null"...)
			return true
		}
		base := len(w.keys)
		for k := range x {
			w.keys = append(w.keys, k)
		}
		keys := w.keys[base:]
		sortStrings(keys)
		w.buf = append(w.buf, '{')
		for i, k := range keys {
			if i > 0 {
				w.buf = append(w.buf, ',')
			}
			w.str(k)
			w.buf = append(w.buf, ':')
			w.str(x[k])
		}
		w.buf = append(w.buf, '}')
		clear(w.keys[base:])
		w.keys = w.keys[:base]
	default:
		return false
	}
	return true
}

// float formats f like encoding/json: shortest representation, exponent
// form outside [1e-6, 1e21), "e-07" cleaned to "e-7". NaN and infinities,
// which encoding/json rejects, are written as null.
func (w *jsonWriter) float(f float64, bits int) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		w.buf = append(w.buf, "null"...)
		return
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	w.buf = strconv.AppendFloat(w.buf, f, format, -1, bits)
	if format == 'e' {
		n := len(w.buf)
		if n >= 4 && w.buf[n-4] == 'e' && w.buf[n-3] == '-' && w.buf[n-2] == '0' {
			w.buf[n-2] = w.buf[n-1]
			w.buf = w.buf[:n-1]
		}
	}
}

const hexDigits = "0123456789abcdef"

// str writes s as a JSON string with encoding/json's escaping: ", \ and
// control characters escaped, <, > and & as \u003c etc., U+2028 and U+2029
// escaped, and invalid UTF-8 replaced by \ufffd.
func (w *jsonWriter) str(s string) {
	b := append(w.buf, '"')
	start := 0
	for i := 0; i < len(s); {
		// Skip eight bytes at a time while none needs escaping, then to
		// the first that may. Non-ASCII text goes rune by rune below.
		for i+8 <= len(s) && s[i] < utf8.RuneSelf {
			// Any byte below 0x20 or above 0x7f, or equal to '\\', '"' or
			// '&' (0x22 | 4 == 0x26), '<' or '>' (0x3c | 2 == 0x3e)? The
			// zero-byte tests are exact as a whole, which is all we need.
			x := load64(s, i)
			v1 := x ^ '\\'*lsb
			v2 := (x | 0x04*lsb) ^ '&'*lsb
			v3 := (x | 0x02*lsb) ^ '>'*lsb
			// The lowest flagged byte is always a true one: false
			// positives only come from borrows out of a true one below.
			if m := ((x-0x20*lsb)&^x | (v1-lsb)&^v1 | (v2-lsb)&^v2 | (v3-lsb)&^v3 | x) & msb; m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		// Valid two- and three-byte sequences other than U+2028 and U+2029
		// are copied as they are; the rest is decoded.
		if c >= 0xC2 && c <= 0xDF && i+1 < len(s) && s[i+1]&0xC0 == 0x80 {
			i += 2
			continue
		}
		if c&0xF0 == 0xE0 && i+2 < len(s) && s[i+2]&0xC0 == 0x80 {
			lo, hi := byte(0x80), byte(0xBF)
			switch c {
			case 0xE0:
				lo = 0xA0
			case 0xED:
				hi = 0x9F
			case 0xE2:
				hi = 0xBF
				if s[i+1] == 0x80 && (s[i+2] == 0xA8 || s[i+2] == 0xA9) {
					hi = 0 // U+2028 or U+2029: decoded and escaped below
				}
			}
			if c1 := s[i+1]; c1 >= lo && c1 <= hi {
				i += 3
				continue
			}
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	w.buf = append(b, '"')
}
