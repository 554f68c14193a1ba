package models

import (
	"bytes"
	"strings"
)

// Normalization: the canonical lookup key of a model name, and the
// suffixes Lookup may strip.

// Normalize returns the canonical lookup key for a model name: trimmed,
// lower-cased, "@" and dots between digits turned into "-", and the
// "models/", provider and Bedrock region/vendor prefixes removed. Date and
// version suffixes are kept; [Lookup] strips them only when the full key is
// unknown. See the package documentation for the details.
func Normalize(name string) string {
	var buf [128]byte
	return string(normalizeInto(buf[:0], name))
}

// knownPrefixes are leading path segments that name a provider, a vendor
// namespace or a router; Normalize drops them.
var knownPrefixes = map[string]bool{
	"anthropic":        true,
	"openai":           true,
	"azure":            true,
	"azure_ai":         true,
	"google":           true,
	"gemini":           true,
	"vertex_ai":        true,
	"vertex_ai_beta":   true,
	"vertexai":         true,
	"vertex":           true,
	"bedrock":          true,
	"bedrock_converse": true,
	"openrouter":       true,
	"vercel":           true,
	"xai":              true,
	"x-ai":             true,
	"deepseek":         true,
	"zai":              true,
	"z-ai":             true,
	"zhipu":            true,
	"minimax":          true,
	"moonshotai":       true,
	"qwen":             true,
}

// bedrockRegions are the region prefixes of Amazon Bedrock cross-region
// inference profiles ("us.anthropic.claude-...").
var bedrockRegions = map[string]bool{
	"us": true, "us-gov": true, "eu": true, "apac": true, "global": true,
	"au": true, "jp": true, "ca": true,
}

// bedrockVendors are the vendor prefixes of Amazon Bedrock model ids
// ("anthropic.claude-...").
var bedrockVendors = map[string]bool{
	"anthropic": true, "amazon": true, "meta": true, "mistral": true,
	"cohere": true, "ai21": true, "deepseek": true, "openai": true,
	"qwen": true,
}

// normalizeInto appends the canonical key of name to dst and returns the
// key, which aliases dst's storage.
func normalizeInto(dst []byte, name string) []byte {
	s := strings.TrimSpace(name)
	if !isASCII(s) {
		s = strings.ToLower(s)
	}
	b := dst[:0]
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		case c == '@':
			c = '-'
		case c == '.' && i > 0 && i+1 < len(s) && isDigit(s[i-1]) && isDigit(s[i+1]):
			c = '-'
		}
		b = append(b, c)
	}

	// Everything up to the last "models/" path segment.
	const models = "models/"
	for i := len(b) - len(models); i >= 0; i-- {
		if (i == 0 || b[i-1] == '/') && string(b[i:i+len(models)]) == models {
			b = b[i+len(models):]
			break
		}
	}

	// Well-known provider, vendor and router prefixes.
	for {
		i := bytes.IndexByte(b, '/')
		if i < 0 || !knownPrefixes[string(b[:i])] {
			break
		}
		b = b[i+1:]
	}

	// Bedrock "region.vendor." or "vendor." prefixes.
	if i := bytes.IndexByte(b, '.'); i > 0 {
		first, rest := b[:i], b[i+1:]
		switch {
		case bedrockRegions[string(first)]:
			if j := bytes.IndexByte(rest, '.'); j > 0 && bedrockVendors[string(rest[:j])] {
				b = rest[j+1:]
			}
		case bedrockVendors[string(first)]:
			b = rest
		}
	}
	return b
}

// stripSuffix removes one trailing version suffix from key: "-latest",
// "-preview", a Bedrock "-vN:M" tag, a "-YYYY-MM-DD" date or a "-" followed
// by 3 to 8 digits. ok is false when key has no such suffix or nothing would
// remain.
func stripSuffix(key []byte) (stripped []byte, ok bool) {
	for _, tag := range [...]string{"-latest", "-preview"} {
		if len(key) > len(tag) && string(key[len(key)-len(tag):]) == tag {
			return key[:len(key)-len(tag)], true
		}
	}
	// "-dddd-dd-dd"
	if n := len(key); n > 11 && key[n-11] == '-' && key[n-6] == '-' && key[n-3] == '-' &&
		allDigits(key[n-10:n-6]) && allDigits(key[n-5:n-3]) && allDigits(key[n-2:]) {
		return key[:n-11], true
	}
	i := bytes.LastIndexByte(key, '-')
	if i <= 0 {
		return key, false
	}
	seg := key[i+1:]
	switch {
	case len(seg) >= 3 && len(seg) <= 8 && allDigits(seg):
		return key[:i], true
	case isBedrockVersion(seg):
		return key[:i], true
	}
	return key, false
}

// isBedrockVersion reports whether seg looks like "v1:0".
func isBedrockVersion(seg []byte) bool {
	if len(seg) < 4 || seg[0] != 'v' {
		return false
	}
	colon := bytes.IndexByte(seg, ':')
	return colon > 1 && colon < len(seg)-1 && allDigits(seg[1:colon]) && allDigits(seg[colon+1:])
}

func allDigits(b []byte) bool {
	for _, c := range b {
		if !isDigit(c) {
			return false
		}
	}
	return len(b) > 0
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
