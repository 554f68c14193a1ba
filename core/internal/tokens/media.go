package tokens

import (
	"bytes"
	"encoding/binary"
	"image"
	_ "image/gif" // register decoders for image.DecodeConfig
	_ "image/jpeg"
	_ "image/png"
	"math"
	"strings"
)

// mediaRules are a family's costs for non-text data.
type mediaRules struct {
	image func(w, h int) int
	// undecodableImage is charged for an image whose header cannot be
	// read: the family's cost of a 1024x1024 image.
	undecodableImage int
	// pdfPage is the cost of one PDF page.
	pdfPage int
	// audioPerSecond and videoPerSecond are per-second rates.
	audioPerSecond float64
	videoPerSecond float64
}

// Rules shared by all families for data whose size says little.
const (
	// PDFBytesPerPage estimates the page count of a PDF whose page objects
	// cannot be counted: one page per 100 KB, at least one.
	PDFBytesPerPage = 100_000
	// AudioBytesPerSecond is the assumed bit rate of compressed audio
	// (128 kbit/s) when the duration cannot be read from a WAV header.
	AudioBytesPerSecond = 16_000
	// VideoBytesPerSecond is the assumed bit rate of video (1 Mbit/s).
	VideoBytesPerSecond = 125_000
	// OtherBlobTokens is charged for inline data of an unknown kind.
	OtherBlobTokens = 258
	// FileRefPDFPages is the page count assumed for a PDF given by URI.
	FileRefPDFPages = 4
	// FileRefSeconds is the duration assumed for audio or video given by URI.
	FileRefSeconds = 60
	// FileRefTextTokens is charged for a text document given by URI, and
	// for a URI of unknown kind.
	FileRefTextTokens = 1000
)

var (
	// Gemini (Gemma3 family), from Google's Gemini API token documentation:
	// an image with both sides ≤ 384 px is 258 tokens; a larger image is
	// cut into 768x768 tiles of 258 tokens each (here ceil(w/768) x
	// ceil(h/768) tiles). Each PDF page counts as an image (258 tokens).
	// Audio is 32 tokens per second; video 263 per second (258 per frame at
	// 1 fps plus its audio).
	gemmaMedia = mediaRules{image: geminiImage, undecodableImage: 1032, pdfPage: 258,
		audioPerSecond: 32, videoPerSecond: 263}
	// OpenAI (O200k family), high-detail image rule from OpenAI's vision
	// documentation: scale to fit 2048x2048, then scale the shortest side
	// down to 768 px, then 170 tokens per 512x512 tile plus 85. PDF pages
	// are sent as extracted text plus a page image: one 765-token image plus
	// ~500 tokens of text per page. Audio input is about 10 tokens per
	// second; video is not accepted as such and is charged as frames at the
	// Gemini rate.
	o200kMedia = mediaRules{image: openAIImage, undecodableImage: 765, pdfPage: 1265,
		audioPerSecond: 10, videoPerSecond: 263}
	// Claude, from Anthropic's vision documentation: tokens = w*h/750 after
	// scaling the long side down to 1568 px, at most about 1600 tokens per
	// image. PDF pages: Anthropic gives 1,500–3,000 tokens per page (text
	// plus page image); 2,250 is the middle. Audio and video are not Claude
	// inputs; they are charged at the Gemini rates.
	claudeMedia = mediaRules{image: claudeImage, undecodableImage: 1399, pdfPage: 2250,
		audioPerSecond: 32, videoPerSecond: 263}
)

// maxMediaTokens caps the count of one media item. Sizes come from headers
// anyone can write (a PNG may claim 2^31 x 2^31 pixels, a WAV header four
// billion seconds), so every formula saturates here instead of overflowing
// to a negative or small count. It is far above any model's window, and
// small enough that summing millions of such counts cannot overflow.
const maxMediaTokens = 1 << 30

// satMul is a*b for non-negative a and b, saturated at maxMediaTokens.
func satMul(a, b int) int {
	if a <= 0 || b <= 0 {
		return 0
	}
	if a > maxMediaTokens/b {
		return maxMediaTokens
	}
	return min(a*b, maxMediaTokens)
}

// satAdd is a+b for non-negative a and b, saturated at maxMediaTokens.
func satAdd(a, b int) int {
	a, b = min(max(a, 0), maxMediaTokens), min(max(b, 0), maxMediaTokens)
	return min(a+b, maxMediaTokens)
}

// satCeil is ceil(f) as a count in [0, maxMediaTokens]; NaN is 0.
func satCeil(f float64) int {
	switch {
	case !(f > 0):
		return 0
	case f >= maxMediaTokens:
		return maxMediaTokens
	}
	return int(math.Ceil(f))
}

// ceilDiv is ceil(a/b) for non-negative a and positive b, without the
// overflow of (a+b-1)/b.
func ceilDiv(a, b int) int {
	q := a / b
	if a%b != 0 {
		q++
	}
	return q
}

func geminiImage(w, h int) int {
	if w <= 384 && h <= 384 {
		return 258
	}
	return satMul(258, satMul(ceilDiv(w, 768), ceilDiv(h, 768)))
}

func openAIImage(w, h int) int {
	fw, fh := float64(w), float64(h)
	if long := math.Max(fw, fh); long > 2048 {
		s := 2048 / long
		fw, fh = fw*s, fh*s
	}
	if short := math.Min(fw, fh); short > 768 {
		s := 768 / short
		fw, fh = fw*s, fh*s
	}
	tiles := satMul(satCeil(fw/512), satCeil(fh/512))
	return satAdd(85, satMul(170, max(tiles, 1)))
}

func claudeImage(w, h int) int {
	fw, fh := float64(w), float64(h)
	if long := math.Max(fw, fh); long > 1568 {
		// Scaled down, a very thin image keeps at least one pixel per side.
		s := 1568 / long
		fw, fh = math.Max(math.Round(fw*s), 1), math.Max(math.Round(fh*s), 1)
	}
	return min(satCeil(fw*fh/750), 1600)
}

// Image returns the family's token cost of an image of the given pixel
// size. Non-positive sizes get the cost of an undecodable image.
func (e *Estimator) Image(width, height int) int {
	if width <= 0 || height <= 0 {
		return e.media.undecodableImage
	}
	return e.media.image(width, height)
}

// Blob estimates inline data by MIME type: images by their dimensions read
// from the header (PNG, JPEG, GIF through image.DecodeConfig; WebP by its
// RIFF header), or the family's undecodable-image cost; PDF by page count
// (page objects counted in the file, else PDFBytesPerPage) times the
// family's per-page cost; audio and video by duration (WAV headers are read;
// otherwise AudioBytesPerSecond / VideoBytesPerSecond) times the family's
// per-second rate; text-like types (text/*, JSON, XML, YAML, CSV,
// JavaScript) as text; anything else OtherBlobTokens. Never the byte length
// over four.
func (e *Estimator) Blob(mimeType string, data []byte) int {
	kind, sub := splitMIME(mimeType)
	switch {
	case kind == "image":
		if w, h, ok := imageSize(data); ok {
			return e.Image(w, h)
		}
		return e.media.undecodableImage
	case sub == "pdf":
		return satMul(e.media.pdfPage, pdfPages(data))
	case kind == "audio":
		sec := float64(len(data)) / AudioBytesPerSecond
		if s, ok := wavSeconds(data); ok {
			sec = s
		}
		return satAdd(satCeil(sec*e.media.audioPerSecond), 1)
	case kind == "video":
		return satAdd(satCeil(float64(len(data))/VideoBytesPerSecond*e.media.videoPerSecond), 1)
	case isTextMIME(kind, sub):
		return e.Bytes(data)
	case len(data) == 0:
		return 0
	}
	return OtherBlobTokens
}

// FileRef estimates data referenced by URI (genai.FileData), whose content
// the client does not see: an image costs the family's undecodable-image
// cost; a PDF FileRefPDFPages pages; audio and video FileRefSeconds seconds;
// anything else FileRefTextTokens.
func (e *Estimator) FileRef(mimeType string) int {
	kind, sub := splitMIME(mimeType)
	switch {
	case kind == "image":
		return e.media.undecodableImage
	case sub == "pdf":
		return e.media.pdfPage * FileRefPDFPages
	case kind == "audio":
		return int(FileRefSeconds * e.media.audioPerSecond)
	case kind == "video":
		return int(FileRefSeconds * e.media.videoPerSecond)
	}
	return FileRefTextTokens
}

// splitMIME returns the lower-case type and subtype, without parameters.
func splitMIME(m string) (kind, sub string) {
	if i := strings.IndexByte(m, ';'); i >= 0 {
		m = m[:i]
	}
	m = strings.TrimSpace(m)
	kind, sub, _ = strings.Cut(m, "/")
	if hasUpper(kind) || hasUpper(sub) {
		kind, sub = strings.ToLower(kind), strings.ToLower(sub)
	}
	return kind, sub
}

func hasUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			return true
		}
	}
	return false
}

func isTextMIME(kind, sub string) bool {
	if kind == "text" {
		return true
	}
	if kind != "application" {
		return false
	}
	switch sub {
	case "json", "xml", "yaml", "x-yaml", "csv", "javascript", "x-javascript",
		"typescript", "x-python", "x-sh", "sql", "toml", "markdown", "x-ndjson", "ndjson":
		return true
	}
	return strings.HasSuffix(sub, "+json") || strings.HasSuffix(sub, "+xml")
}

// pngSignature starts every PNG file; the IHDR chunk with the size follows.
const pngSignature = "\x89PNG\r\n\x1a\n"

// imageSize reads an image's dimensions from its header.
func imageSize(data []byte) (w, h int, ok bool) {
	if len(data) < 12 {
		return 0, 0, false
	}
	if string(data[0:4]) == "RIFF" && string(data[8:12]) == "WEBP" {
		return webpSize(data)
	}
	if len(data) >= 24 && string(data[0:8]) == pngSignature && string(data[12:16]) == "IHDR" {
		// Read here rather than by image/png, which rejects sizes whose
		// pixel count overflows: such an image counts as huge, not as an
		// undecodable one.
		w, h := binary.BigEndian.Uint32(data[16:20]), binary.BigEndian.Uint32(data[20:24])
		if w == 0 || h == 0 || w > math.MaxInt32 || h > math.MaxInt32 {
			return 0, 0, false
		}
		return int(w), int(h), true
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil || cfg.Width <= 0 || cfg.Height <= 0 {
		return 0, 0, false
	}
	return cfg.Width, cfg.Height, true
}

// webpSize reads the canvas size of a WebP file from its first chunk
// (VP8X extended, VP8 lossy or VP8L lossless header).
func webpSize(d []byte) (w, h int, ok bool) {
	if len(d) < 30 {
		return 0, 0, false
	}
	switch string(d[12:16]) {
	case "VP8X":
		w = 1 + (int(d[24]) | int(d[25])<<8 | int(d[26])<<16)
		h = 1 + (int(d[27]) | int(d[28])<<8 | int(d[29])<<16)
	case "VP8 ":
		if d[23] != 0x9d || d[24] != 0x01 || d[25] != 0x2a {
			return 0, 0, false
		}
		w = int(binary.LittleEndian.Uint16(d[26:28]) & 0x3fff)
		h = int(binary.LittleEndian.Uint16(d[28:30]) & 0x3fff)
	case "VP8L":
		if d[20] != 0x2f {
			return 0, 0, false
		}
		b := binary.LittleEndian.Uint32(d[21:25])
		w = 1 + int(b&0x3fff)
		h = 1 + int(b>>14&0x3fff)
	default:
		return 0, 0, false
	}
	return w, h, w > 0 && h > 0
}

// pdfPages counts "/Type /Page" objects (not "/Pages"); if there are none,
// it falls back to one page per PDFBytesPerPage bytes, at least one.
func pdfPages(d []byte) int {
	n := 0
	for _, pat := range [][]byte{[]byte("/Type/Page"), []byte("/Type /Page")} {
		rest := d
		for {
			i := bytes.Index(rest, pat)
			if i < 0 {
				break
			}
			rest = rest[i+len(pat):]
			if len(rest) == 0 || rest[0] != 's' {
				n++
			}
		}
	}
	if n == 0 {
		n = (len(d) + PDFBytesPerPage - 1) / PDFBytesPerPage
		if n < 1 {
			n = 1
		}
	}
	return n
}

// wavSeconds reads the duration of a PCM WAV file from its header.
func wavSeconds(d []byte) (float64, bool) {
	if len(d) < 44 || string(d[0:4]) != "RIFF" || string(d[8:12]) != "WAVE" {
		return 0, false
	}
	// Walk the chunks for "fmt " (byte rate) and "data" (size).
	var byteRate uint32
	for i := 12; i+8 <= len(d); {
		id := string(d[i : i+4])
		size := binary.LittleEndian.Uint32(d[i+4 : i+8])
		body := i + 8
		switch id {
		case "fmt ":
			if body+12 <= len(d) {
				byteRate = binary.LittleEndian.Uint32(d[body+8 : body+12])
			}
		case "data":
			if byteRate == 0 {
				return 0, false
			}
			return float64(size) / float64(byteRate), true
		}
		next := body + int(size) + int(size&1)
		if next <= i || size > uint32(len(d)) {
			return 0, false
		}
		i = next
	}
	return 0, false
}
